"""Random numbers for the benchmark: sysbench's distributions, strings and unique ids.

Role: every id, ``k`` value, table pick and ``c``/``pad`` string a workload
sends comes from here (spec sections 4.1, 4.4, 4.5). One :class:`Rand` lives in
each benchmark connection/thread and is never shared, so the hot path needs
no locking. :class:`Unique` is sysbench's process-wide ``random.unique()``
permutation.

Every distribution is computed in IEEE double with the same operation order
as sysbench's C code and truncated to an integer, so that feeding the same
uniform doubles yields the same results. All uniform doubles are drawn
through the single attribute ``Rand._u`` (a zero-argument callable returning
a float in [0, 1)); ``Rand.set_source`` swaps the generator for every method
at once, which is the seam for sysbench's bit-exact stream (``--rand-compat``).

:class:`Xoroshiro128Plus` is the one xoroshiro128+ of the Python code, parameterised by
its users (:class:`XoroParams`): sysbench's stream (``XORO_SYSBENCH``: ``--rand-compat``,
sysbench.rand without LuaJIT), and the built-in tests' and every connection's own stream
(``XORO_2018``, seeded by splitmix64: :func:`stream`).  Its C twins are core/rand.c's
``xoro_*`` and ``Xoro``, whose state the C draws step in place (tests/unit/test_xoroshiro.py).

``uniform`` and ``special`` (the default distribution, drawn several times per
event) are computed in C when runtime/native.py hands the C draws down (:func:`use_c`), with the same double operations in the same order as the Python
methods here (``_py_uniform`` / ``_py_special``, the fallback).

Bounds are integers with ``a <= b`` that fit in uint32, as in sysbench.
"""

from __future__ import annotations

import itertools
import math
import os
import struct
from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = [
    "C_TEMPLATE",
    "DEFAULT_RAND_TYPE",
    "DISTRIBUTIONS",
    "PAD_TEMPLATE",
    "Rand",
    "Unique",
    "XORO_2018",
    "XORO_SYSBENCH",
    "XoroParams",
    "Xoroshiro128Plus",
]

DISTRIBUTIONS = ("uniform", "gaussian", "special", "pareto", "zipfian")

# Defaults of the --rand-* options (spec 4.1; zipf exponent from master).
DEFAULT_RAND_TYPE = "special"
DEFAULT_SPEC_ITER = 12
DEFAULT_SPEC_PCT = 1.0
DEFAULT_SPEC_RES = 75.0
DEFAULT_PARETO_H = 0.2
DEFAULT_ZIPF_EXP = 0.8

# sysbench's oltp_common row templates: 10 (c) and 5 (pad) groups of 11 digits.
_TEMPLATE_GROUP = "#" * 11
C_TEMPLATE = "-".join([_TEMPLATE_GROUP] * 10)
PAD_TEMPLATE = "-".join([_TEMPLATE_GROUP] * 5)

_UINT32_MASK = 0xFFFFFFFF

# Below this magnitude the zipfian helpers switch to Taylor series, because
# log1p(x)/x and expm1(x)/x lose precision (and divide by zero) near 0.
_ZIPF_TAYLOR_CUTOFF = 1e-8
_ONE_THIRD = 0.33333333333333333

# String template characters and the uniform(lo, hi) byte range each draws.
_DIGIT_CHAR = "#"
_LETTER_CHAR = "@"
_DIGIT_LO, _DIGIT_HI = ord("0"), ord("9")
_LETTER_LO, _LETTER_HI = ord("a"), ord("z")


# the default --rand-spec-iter's summer written out: what _summer(12) generates (tests/unit/test_rand.py
# compares them), without the eval's compile (0.3 M instructions) in every process that draws
_SUMMERS: dict[int, Callable[[Callable[[], float]], float]] = {
    12: lambda u: u() + u() + u() + u() + u() + u() + u() + u() + u() + u() + u() + u(),
}


class CDraws(NamedTuple):
    """The C twins of the draws (core/rand.c), handed down by runtime/native.py -- the one
    module that decides whether the C is used -- when it is imported (pysysbench/__init__
    imports it first thing, so every entry point has them before a generator is made)."""

    draw: type  # _native.Draw
    uniform: int
    special: int
    string: int
    xoro: type  # _native.Xoro: Xoroshiro128Plus's C twin, whose state the draws step in place


_C: CDraws | None = None  # None: the Python methods below (PYSYSBENCH_NATIVE=off, no build)


def use_c(draws: CDraws | None) -> None:
    """Compute the draws of generators made from now on with ``draws`` (None: in Python)."""
    global _C
    _C = draws


def stream(seed: int | None) -> Any:
    """A connection's own stream (``--rand-compat=off``): xoroshiro128+ (``XORO_2018``)
    seeded by splitmix64 from ``seed`` (None: from the system's entropy); in C where the
    draws are (the same numbers as :class:`Xoroshiro128Plus`, which is used without it)."""
    if seed is None:
        seed = int.from_bytes(os.urandom(8), "little")
    py = Xoroshiro128Plus.from_splitmix64(seed, XORO_2018)
    c = _C
    return py if c is None else c.xoro(*py.getstate(), XORO_2018)


def _summer(n: int) -> Callable[[Callable[[], float]], float]:
    """A function adding ``n`` draws of ``u()`` left to right: the same rounding as
    ``total = 0.0; for ...: total += u()`` (0.0 + x is exact), without the loop
    (the default distribution, 'special', sums 12 draws for 75 % of its numbers)."""
    f = _SUMMERS.get(n)
    if f is None:
        if n <= 64:
            # generated from an int, nothing else: "lambda u: u() + u() + ... + u()"
            f = eval("lambda u: " + " + ".join(["u()"] * n))  # noqa: S307
        else:

            def f(u: Callable[[], float], _r: range = range(n)) -> float:
                total = 0.0
                for _ in _r:
                    total += u()
                return total

        _SUMMERS[n] = f
    return f


class Rand:
    """Per-connection random source with sysbench 1.0.20 distributions (``release`` "1.1":
    1.1.0's gaussian, :meth:`_gaussian_11`).

    ``default(a, b)`` is the distribution selected by ``rand_type`` (bound
    once here, so there is no per-call dispatch). Instances are not
    thread-safe; create one per connection.
    """

    __slots__ = (
        "_rng",
        "_src",
        "_iter_range",
        "_sum_draws",
        "_iter_mult",
        "_pct_mult",
        "_pct_2_mult",
        "_res_mult",
        "_pareto_power",
        "_zipf_one_minus_exp",
        "_zipf_neg_exp",
        "_zipf_s",
        "_zipf_h_x1",
        "_zipf_cache",
        "rand_type",
        "default",
        "gaussian",
        "uniform",
        "special",
        "string",
    )

    def __init__(
        self,
        seed: int | None,
        *,
        rand_type: str = DEFAULT_RAND_TYPE,
        spec_iter: int = DEFAULT_SPEC_ITER,
        spec_pct: float = DEFAULT_SPEC_PCT,
        spec_res: float = DEFAULT_SPEC_RES,
        pareto_h: float = DEFAULT_PARETO_H,
        zipf_exp: float = DEFAULT_ZIPF_EXP,
        release: str = "1.0",
    ) -> None:
        if rand_type not in DISTRIBUTIONS:
            raise ValueError(f"Invalid random numbers distribution: {rand_type}.")
        self._rng = stream(seed)
        self._init_special(spec_iter, spec_pct, spec_res)
        self._init_pareto(pareto_h)
        self._init_zipfian(zipf_exp)
        self.rand_type = rand_type
        self.gaussian: Callable[[int, int], int] = self._gaussian_11 if release == "1.1" else self._py_gaussian
        self.set_source(self._rng.double)

    @classmethod
    def from_options(cls, values: Any, seed: int | None) -> Rand:
        """A generator with the ``--rand-*`` options' distribution (``values``: parsed options)."""
        return cls(
            seed,
            rand_type=values.rand_type,
            spec_iter=values.rand_spec_iter,
            spec_pct=values.rand_spec_pct,
            spec_res=values.rand_spec_res,
            pareto_h=values.rand_pareto_h,
            zipf_exp=values.rand_zipfian_exp,
            release=values.get("sysbench_compat", "1.0"),
        )

    @property
    def _u(self) -> Callable[[], float]:
        return self._src

    @_u.setter
    def _u(self, u: Callable[[], float]) -> None:
        self.set_source(u)

    def set_source(self, u: Callable[[], float]) -> None:
        """Draw every number from ``u`` (uniform doubles in [0, 1)) from now on."""
        # The single source of uniform doubles in [0, 1); see module docstring.
        self._src: Callable[[], float] = u
        self.uniform: Callable[[int, int], int]
        self.special: Callable[[int, int], int]
        self.string: Callable[[str], str]
        c = _C
        if c is not None:
            owner = getattr(u, "__self__", None)
            # a Xoro's own double(): the C draws step its state without calling it
            rng = owner if type(owner) is c.xoro and getattr(u, "__name__", "") == "double" else None
            self.uniform = c.draw(c.uniform, u, self._py_uniform, rng=rng)
            self.special = c.draw(
                c.special,
                u,
                self._py_special,
                len(self._iter_range),
                self._iter_mult,
                self._pct_mult,
                self._pct_2_mult,
                self._res_mult,
                rng=rng,
            )
            self.string = c.draw(c.string, u, self._py_string, rng=rng)
        else:
            self.uniform = self._py_uniform
            self.special = self._py_special
            self.string = self._py_string
        self.default: Callable[[int, int], int] = getattr(self, self.rand_type)

    # -- parameter set-up -------------------------------------------------

    def _init_special(self, spec_iter: int, spec_pct: float, spec_res: float) -> None:
        if spec_iter < 1:
            # sysbench would divide by zero and return garbage; refuse instead.
            raise ValueError("--rand-spec-iter must be >= 1")
        self._iter_range = range(spec_iter)
        self._sum_draws = _summer(spec_iter)
        # sysbench precomputes these multipliers; using them (rather than
        # dividing per call) keeps the rounding identical to the C code.
        self._iter_mult = 1.0 / spec_iter
        self._pct_mult = spec_pct / 100.0
        self._pct_2_mult = spec_pct / 200.0
        spare = 100.0 - spec_res
        # res = 100 gives +inf in C, which sends every draw to the band.
        self._res_mult = 100.0 / spare if spare else math.inf

    def _init_pareto(self, pareto_h: float) -> None:
        if not 0.0 < pareto_h < 1.0:
            raise ValueError("--rand-pareto-h must be between 0 and 1")
        self._pareto_power = math.log(pareto_h) / math.log(1.0 - pareto_h)

    def _init_zipfian(self, zipf_exp: float) -> None:
        if zipf_exp < 0:
            raise ValueError("--rand-zipfian-exp must be >= 0")
        self._zipf_one_minus_exp = 1.0 - zipf_exp
        self._zipf_neg_exp = -zipf_exp
        h_int = self._zipf_h_integral
        self._zipf_s = 2.0 - self._zipf_h_integral_inverse(h_int(2.5) - self._zipf_h(2.0))
        self._zipf_h_x1 = h_int(1.5) - 1.0
        # n -> (H(n + 1/2), X1 - H(n + 1/2)); bounds repeat, so compute once.
        self._zipf_cache: dict[int, tuple[float, float]] = {}

    def getstate(self) -> Any:
        """Where the draws' source stands (its stream's ``getstate``): ``setstate`` of it
        makes the draws since then again, the same (a transaction retried with --max-retries)."""
        owner = getattr(self._src, "__self__", None)
        if owner is None or not hasattr(owner, "getstate"):
            raise TypeError("this generator's source has no state to save (set_source with a bound method)")
        return owner.getstate()

    def setstate(self, state: Any) -> None:
        self._src.__self__.setstate(state)  # type: ignore[attr-defined]

    # -- distributions ----------------------------------------------------

    def uniform_double(self) -> float:
        """One uniform double in [0, 1)."""
        return self._src()

    def _py_uniform(self, a: int, b: int) -> int:
        """Uniform integer in [a, b]: a + u*(b-a+1), all in double."""
        return int(a + self._src() * (b - a + 1))

    def _py_gaussian(self, a: int, b: int) -> int:
        """Mean of spec_iter uniform draws over [a, b] (approximately normal)."""
        u = self._src
        t = b - a + 1
        total = 0.0
        # Explicit loop: sum() of floats is compensated on Python >= 3.12,
        # which would not round like sysbench's plain accumulation.
        for _ in self._iter_range:
            total += u() * t
        return a + int(total * self._iter_mult)

    def _gaussian_11(self, a: int, b: int) -> int:
        """sysbench 1.1.0's gaussian: it still sums ``--rand-spec-iter`` draws, an option 1.1.0
        no longer has (read as 0), so it draws nothing; the mean, 0 * (1.0 / 0), is NaN, which
        x86-64 converts to 0: ``a``, whatever ``b``."""
        return a

    def _py_special(self, a: int, b: int) -> int:
        """sysbench's 'special': res% of draws in a pct%-wide band near the middle.

        t = b - a deliberately lacks the +1, and the band reuses the first
        draw, exactly as sysbench 1.0.20 does.
        """
        t = b - a
        rnd = self._src()
        if rnd * (t * self._res_mult) < t:
            total = self._sum_draws(self._src)
            return int(a + total * t * self._iter_mult)
        return a + int(rnd * (t * self._pct_mult + 1) + (t / 2 - t * self._pct_2_mult))

    def pareto(self, a: int, b: int) -> int:
        """Pareto over [a, b] with shape h: a + (b-a+1) * u**p."""
        return a + int((b - a + 1) * self._src() ** self._pareto_power)

    def zipfian(self, a: int, b: int) -> int:
        """Zipf over [a, b], P(a+k-1) ~ k**-zipf_exp (rejection-inversion sampler)."""
        n = b - a + 1
        try:
            h_n, span = self._zipf_cache[n]
        except KeyError:
            h_n = self._zipf_h_integral(n + 0.5)
            span = self._zipf_h_x1 - h_n
            self._zipf_cache[n] = (h_n, span)
        u = self._src
        s = self._zipf_s
        while True:
            v = h_n + u() * span
            x = self._zipf_h_integral_inverse(v)
            k = int(x + 0.5)
            # Rounding can push k just outside [1, n].
            if k < 1:
                k = 1
            elif k > n:
                k = n
            # The cheap test k - x <= s accepts most draws without the exact one.
            if k - x <= s or v >= self._zipf_h_integral(k + 0.5) - self._zipf_h(k):
                return a + k - 1

    # -- zipfian helpers: H(x) = (x**(1-e) - 1)/(1-e), h(x) = x**-e ------------

    def _zipf_h_integral(self, x: float) -> float:
        log_x = math.log(x)
        return _expm1_over_x(self._zipf_one_minus_exp * log_x) * log_x

    def _zipf_h(self, x: float) -> float:
        return math.exp(self._zipf_neg_exp * math.log(x))

    def _zipf_h_integral_inverse(self, x: float) -> float:
        t = x * self._zipf_one_minus_exp
        # Rounding can take t slightly below the domain limit of log1p.
        if t < -1.0:
            t = -1.0
        return math.exp(_log1p_over_x(t) * x)

    # -- strings ----------------------------------------------------------

    def _py_string(self, template: str) -> str:
        """Fill a template: '#' -> digit, '@' -> lowercase letter, rest copied.

        One draw per '#'/'@', left to right (sysbench's random.string()).
        """
        try:
            render = _STRING_PLANS[template]
        except KeyError:
            render = _STRING_PLANS[template] = _compile_template(template)
        return render(self._src)


def _log1p_over_x(x: float) -> float:
    """log(1 + x) / x, via a Taylor series near 0."""
    if abs(x) > _ZIPF_TAYLOR_CUTOFF:
        return math.log1p(x) / x
    return 1.0 - x * (0.5 - x * (_ONE_THIRD - 0.25 * x))


def _expm1_over_x(x: float) -> float:
    """(exp(x) - 1) / x, via a Taylor series near 0."""
    if abs(x) > _ZIPF_TAYLOR_CUTOFF:
        return math.expm1(x) / x
    return 1.0 + x * 0.5 * (1.0 + x * _ONE_THIRD * (1.0 + 0.25 * x))


# -- string templates ---------------------------------------------------------
#
# A template is compiled once into a render(u) function and cached by its
# text (the c and pad templates are rendered on every write).
#
# Each drawn character is uniform(lo, hi) = trunc(lo + u*(hi-lo+1)) computed
# in double, as sysbench does. Note that lo + u*(hi-lo+1) can round up to
# hi+1 when u is within a few ulps of 1 (':' for '#'); sysbench has the
# same quirk and both render paths below reproduce it.

_STRING_PLANS: dict[str, Callable[[Callable[[], float]], str]] = {}

# Fast path for templates whose only drawn character is '#' (all of the
# OLTP scripts' templates). It avoids ~110 int() calls per c string by
# reading the truncated value straight out of the IEEE bits: every
# x = 48 + u*10 lies in [32, 64), where the double's exponent is fixed and
# trunc(x) = 32 + (mantissa >> 47). Those 5 mantissa bits are the low
# nibble of byte 6 plus the top bit of byte 5 of the little-endian double,
# so two bytes.translate() calls and one big-int addition turn all the
# packed doubles into the character codes at once. Literal template
# characters are packed as zero pad bytes (decoding to 32) and corrected by
# a precomputed per-position addend.
_DOUBLE_SIZE = 8
_HIGH_BYTE = 6  # holds mantissa bits 48..51 (little-endian)
_LOW_BYTE = 5  # its top bit is mantissa bit 47
_BIT_BASE = 32  # the [32, 64) binade all packed values are in
_HIGH_TABLE = bytes((_BIT_BASE + ((b & 0x0F) << 1)) & 0xFF for b in range(256))
_LOW_TABLE = bytes(b >> 7 for b in range(256))
_MAX_LATIN1 = 255


def _compile_template(template: str) -> Callable[[Callable[[], float]], str]:
    if _LETTER_CHAR not in template and _DIGIT_CHAR in template and _is_latin1(template):
        return _compile_digit_template(template)
    return _compile_generic_template(template)


def _is_latin1(text: str) -> bool:
    return all(ord(ch) <= _MAX_LATIN1 for ch in text)


def _compile_digit_template(template: str) -> Callable[[Callable[[], float]], str]:
    length = len(template)
    draws = range(template.count(_DIGIT_CHAR))
    lo = float(_DIGIT_LO)
    width = float(_DIGIT_HI - _DIGIT_LO + 1)
    layout = []
    addend = 0
    for pos, ch in enumerate(template):
        if ch == _DIGIT_CHAR:
            layout.append("d")
        else:
            layout.append(f"{_DOUBLE_SIZE}x")
            addend += (ord(ch) - _BIT_BASE) << (8 * pos)
    pack = struct.Struct("<" + "".join(layout)).pack
    from_bytes = int.from_bytes

    def render(u: Callable[[], float]) -> str:
        raw = pack(*[lo + u() * width for _ in draws])
        high = from_bytes(raw[_HIGH_BYTE::_DOUBLE_SIZE].translate(_HIGH_TABLE), "little")
        low = from_bytes(raw[_LOW_BYTE::_DOUBLE_SIZE].translate(_LOW_TABLE), "little")
        return (high + low + addend).to_bytes(length, "little").decode("latin-1")

    return render


def _compile_generic_template(template: str) -> Callable[[Callable[[], float]], str]:
    """Any template: per-draw (lo, width) pairs fed into a %c format string."""
    ranges = {
        _DIGIT_CHAR: (float(_DIGIT_LO), float(_DIGIT_HI - _DIGIT_LO + 1)),
        _LETTER_CHAR: (float(_LETTER_LO), float(_LETTER_HI - _LETTER_LO + 1)),
    }
    specs = tuple(ranges[ch] for ch in template if ch in ranges)
    if not specs:
        return lambda u: template
    fmt = "".join("%c" if ch in ranges else ch.replace("%", "%%") for ch in template)

    def render(u: Callable[[], float]) -> str:
        return fmt % tuple([int(lo + u() * width) for lo, width in specs])

    return render


# -- xoroshiro128+ ------------------------------------------------------------

_M64 = 0xFFFFFFFFFFFFFFFF
_SPLITMIX_GAMMA = 0x9E3779B97F4A7C15
_SPLITMIX_MUL1, _SPLITMIX_MUL2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


class XoroParams(NamedTuple):
    """What the users of xoroshiro128+ choose: the rotation ``a``, shift ``b`` and rotation
    ``c`` of a step, and how many top bits of an output make a double in [0, 1)."""

    a: int
    b: int
    c: int
    double_bits: int


# sysbench 1.0.20's constants and uniform_double (sysbench.rand, --rand-compat=sysbench)
XORO_SYSBENCH = XoroParams(55, 14, 36, 52)
# the authors' 2018 constants and the usual 53-bit double (the built-in tests: cpu, memory, ...)
XORO_2018 = XoroParams(24, 16, 37, 53)


def splitmix64(x: int) -> tuple[int, int]:
    """One step of splitmix64 from state ``x``: (the next state, the output)."""
    x = (x + _SPLITMIX_GAMMA) & _M64
    z = ((x ^ (x >> 30)) * _SPLITMIX_MUL1) & _M64
    z = ((z ^ (z >> 27)) * _SPLITMIX_MUL2) & _M64
    return x, z ^ (z >> 31)


class Xoroshiro128Plus:
    """xoroshiro128+ on the state (s0, s1) with a user's :class:`XoroParams`."""

    __slots__ = ("s0", "s1", "_k", "_shift", "_scale")

    def __init__(self, s0: int, s1: int, params: XoroParams = XORO_SYSBENCH) -> None:
        self.s0 = s0 & _M64
        self.s1 = s1 & _M64
        a, b, c, bits = params
        self._k = (a, 64 - a, b, c, 64 - c)
        self._shift = 64 - bits
        self._scale = 2.0**-bits  # exact: (x >> shift) * scale rounds once, as the C

    @classmethod
    def from_splitmix64(cls, seed: int, params: XoroParams) -> Xoroshiro128Plus:
        """The state splitmix64 fills from ``seed`` (the built-in tests' seeding)."""
        x, s0 = splitmix64(seed & _M64)
        _, s1 = splitmix64(x)
        return cls(s0, s1, params)

    def next(self) -> int:
        """One raw 64-bit output (sysbench's uniform_uint64)."""
        a, ra, b, c, rc = self._k
        s0, s1 = self.s0, self.s1
        result = (s0 + s1) & _M64
        s1 ^= s0
        self.s0 = (((s0 << a) | (s0 >> ra)) & _M64) ^ s1 ^ ((s1 << b) & _M64)
        self.s1 = ((s1 << c) | (s1 >> rc)) & _M64
        return result

    def double(self) -> float:
        """A double in [0, 1) from the output's top bits (sysbench's uniform_double with XORO_SYSBENCH)."""
        return (self.next() >> self._shift) * self._scale

    def skip(self) -> None:
        """Consume one output (sysbench's histogram shard draw)."""
        self.next()

    def getstate(self) -> tuple[int, int]:
        return self.s0, self.s1

    def setstate(self, state: tuple[int, int]) -> None:
        self.s0, self.s1 = state


# -- unique numbers -----------------------------------------------------------

# Largest prime below 2**32; x -> x**2 mod p is a bijection on [0, p) when
# the upper half is reflected (the quadratic-residue permutation).
_UNIQUE_PRIME = 4294967291
_UNIQUE_HALF = _UNIQUE_PRIME // 2
_UNIQUE_INDEX_SALT = 0x682F0161
_UNIQUE_OFFSET_SALT = 0x46790905
_UNIQUE_OUTPUT_XOR = 0x5BF03635


def _permute(x: int) -> int:
    if x >= _UNIQUE_PRIME:
        return x  # the 5 values above the prime map to themselves
    residue = x * x % _UNIQUE_PRIME
    return residue if x <= _UNIQUE_HALF else _UNIQUE_PRIME - residue


class Unique:
    """sysbench's ``random.unique()``: a seeded bijection on uint32 values.

    Successive ``next()`` calls return permute((permute(i) + offset) xor K)
    for i = index0, index0 + 1, ... (mod 2**32), so no value repeats within
    2**32 calls. One instance is shared process-wide.
    """

    __slots__ = ("_counter", "_offset")

    def __init__(self, seed_index: int, seed_offset: int, start: int = 0, step: int = 1) -> None:
        index0 = _permute((_permute(seed_index & _UINT32_MASK) + _UNIQUE_INDEX_SALT) & _UINT32_MASK)
        self._offset = _permute((_permute(seed_offset & _UINT32_MASK) + _UNIQUE_OFFSET_SALT) & _UINT32_MASK)
        # next() on itertools.count is atomic under the GIL, so concurrent
        # callers still get distinct indexes without a lock; a share (start, step)
        # of the sequence lets several owners draw from one permutation
        self._counter = itertools.count(index0 + start, step)

    def next(self) -> int:
        index = next(self._counter) & _UINT32_MASK
        return _permute(((_permute(index) + self._offset) & _UINT32_MASK) ^ _UNIQUE_OUTPUT_XOR)

    __next__ = next

    def __iter__(self) -> Unique:
        return self


def thread_unique(values, tid: int, threads: int) -> Unique:
    """Thread ``tid``'s share of the run's permutation (indexes tid, tid + threads, ...):
    ids never collide across threads, worker processes or client machines."""
    seed = values.unique_seed  # picked once per parsed command line (options.Values)
    return Unique(seed >> 32, seed & _UINT32_MASK, start=tid, step=max(1, threads))
