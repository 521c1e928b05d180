"""Bit-exact sysbench 1.0.20 random stream (``--rand-compat=sysbench``, spec 4.2-4.7).

Role: with this option every benchmark connection draws its uniform doubles
from the generator sysbench itself uses, seeded the way sysbench seeds it, so
that the ids, ``k`` values and ``c``/``pad`` strings -- and therefore the SQL
text -- of a run are the real binary's, statement for statement.  The
distribution formulas are :class:`pysysbench.core.rand.Rand`'s (already written in
the C code's operation order); this module only replaces ``Rand._u`` (``Rand.set_source``).

The pieces, as sysbench 1.0.20 has them:

* :class:`GlibcRandom`: glibc's ``srandom()``/``random()`` (the TYPE_3 additive
  feedback generator, 34-word seed expansion, 310 discarded outputs).
* :class:`~pysysbench.core.rand.Xoroshiro128Plus` with ``XORO_SYSBENCH``: each thread's
  generator; a double is the top 52 bits of an output scaled to [0, 1).
* Seeding: when ``run`` starts sysbench calls ``srandom(--rand-seed)`` (the
  current time when 0); every thread started afterwards fills its state from
  four ``random()`` calls, ``s0 = r1 << 32 | r2``, ``s1 = r3 << 32 | r4``.
  Background threads (reporter, rate generator, checkpoint timer) start before
  the workers and take their four calls first; in sysbench their start order
  is a race, so a run is reproducible only with one worker thread and none of
  them (:func:`compat_warnings` says so).
* One extra 64-bit draw after every completed event when ``--percentile`` > 0:
  sysbench picks a histogram shard with it.  :meth:`CompatStreams.attach` hands
  the worker that draw as ``ctx.after_event``.

Not reproduced: the two draws per server-side prepared statement sysbench's
PostgreSQL driver takes for statement names (use ``--db-ps-mode=disable`` or
MySQL), and ``prepare`` data (sysbench does not seed ``prepare`` at all).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .options import Option, OptType
from .rand import XORO_SYSBENCH, Xoroshiro128Plus

__all__ = [
    "COMPAT_OPTIONS",
    "CompatStreams",
    "GlibcRandom",
    "compat_streams",
    "compat_warnings",
    "thread_state",
    "thread_words",
    "words_state",
]

RAND_GROUP = "Pseudo-Random Numbers Generator options"
COMPAT_CHOICES = ("off", "sysbench")

COMPAT_OPTIONS = [
    Option(
        "rand-compat",
        OptType.STRING,
        "off",
        "random stream: 'off' (pysysbench's own, per-thread seeded) or 'sysbench' (bit-exact sysbench 1.0.20 "
        "stream: with --threads=1 --rand-seed=N and no --report-interval the SQL text equals the binary's)",
        RAND_GROUP,
        choices=COMPAT_CHOICES,
    ),
]

_M32 = 0xFFFFFFFF
_INT31_MAX = 2147483647  # 2**31 - 1, the modulus of the seed expansion
_SCHRAGE_Q, _SCHRAGE_R = 127773, 2836  # 2**31-1 = 16807*Q + R
_LCG_A = 16807
_DEG = 31  # TYPE_3: x**31 + x**3 + 1
_SEP = 3
_DISCARD = 310  # 10 * degree outputs thrown away after seeding
_WORDS_PER_THREAD = 4  # random() calls that seed one thread


class GlibcRandom:
    """glibc ``random()`` with ``srandom(seed)`` (TYPE_3, the default state size)."""

    __slots__ = ("_r", "_i")

    def __init__(self, seed: int = 1) -> None:
        self.srandom(seed)

    def srandom(self, seed: int) -> None:
        seed &= _M32
        if seed == 0:
            seed = 1  # glibc treats 0 as 1
        word = seed - (1 << 32) if seed >= 1 << 31 else seed  # the state is int32_t
        r = [word]
        for _ in range(1, _DEG):
            # Schrage's method on signed values, C division truncating towards 0
            hi = -(-word // _SCHRAGE_Q) if word < 0 else word // _SCHRAGE_Q
            lo = word - hi * _SCHRAGE_Q
            word = _LCG_A * lo - _SCHRAGE_R * hi
            if word < 0:
                word += _INT31_MAX
            r.append(word)
        self._r = [x & _M32 for x in r]
        self._i = _SEP  # glibc: fptr = &state[3], rptr = &state[0]
        for _ in range(_DISCARD):
            self._step()

    def _step(self) -> int:
        # r[k] = r[k-31] + r[k-3] (mod 2**32) over a ring of the last 31 words
        r = self._r
        i = self._i
        v = (r[i] + r[(i + _DEG - _SEP) % _DEG]) & _M32
        r[i] = v
        self._i = (i + 1) % _DEG
        return v

    def random(self) -> int:
        """The next value in [0, 2**31)."""
        return self._step() >> 1


def thread_words(libc: GlibcRandom) -> tuple[int, int, int, int]:
    """sysbench's per-thread seeding: four random() calls (s0's high and low half, then s1's)."""
    r1, r2, r3, r4 = (libc.random() for _ in range(_WORDS_PER_THREAD))
    return r1, r2, r3, r4


def words_state(words: tuple[int, int, int, int]) -> tuple[int, int]:
    """The generator's state (s0, s1) from a thread's four words."""
    r1, r2, r3, r4 = words
    return (r1 << 32) | r2, (r3 << 32) | r4


def thread_state(libc: GlibcRandom) -> tuple[int, int]:
    """The next thread's state (s0, s1): :func:`thread_words` joined."""
    return words_state(thread_words(libc))


class CompatStreams:
    """The per-thread states of one run, computed up front in thread order so
    that any worker process can attach any thread deterministically."""

    def __init__(self, seed: int, threads: int, background_threads: int, histogram_draw: bool):
        libc = GlibcRandom(seed)
        for _ in range(background_threads):
            thread_state(libc)
        self.states = [thread_state(libc) for _ in range(threads)]
        self.histogram_draw = histogram_draw

    def source(self, tid: int) -> Xoroshiro128Plus:
        return Xoroshiro128Plus(*self.states[tid], XORO_SYSBENCH)

    def attach(self, ctx: Any) -> None:
        """Make ``ctx.rand`` draw from thread ``ctx.tid``'s sysbench stream and
        give the worker the per-event histogram draw."""
        src = self.source(ctx.tid)
        ctx.rand.set_source(src.double)
        after: Callable[[], None] | None = src.skip if self.histogram_draw else None
        ctx.after_event = after


def background_threads(values: Any) -> int:
    """Threads sysbench starts before the workers (each takes four random() calls)."""
    return sum(
        1
        for on in (values.get("report_interval", 0), values.get("rate", 0), values.get("report_checkpoints", []))
        if on
    )


def compat_streams(values: Any, threads: int) -> CompatStreams | None:
    """The streams for a run, or None when ``--rand-compat`` is off."""
    if values.get("rand_compat", "off") != "sysbench":
        return None
    seed = values.get("rand_seed", 0) or int(time.time())
    return CompatStreams(seed, threads, background_threads(values), values.get("percentile", 95) > 0)


def compat_warnings(values: Any) -> list[str]:
    """Say when the requested stream cannot equal the binary's."""
    if values.get("rand_compat", "off") != "sysbench":
        return []
    out = []
    if values.get("threads", 1) > 1 or background_threads(values):
        out.append(
            "WARNING: --rand-compat=sysbench: with more than one thread, --report-interval, --rate or "
            "--report-checkpoints sysbench's threads take their seeds in a nondeterministic order, so the "
            "stream matches the binary's only by chance; use --threads=1 and none of those options"
        )
    if not values.get("rand_seed", 0):
        out.append(
            "WARNING: --rand-compat=sysbench without --rand-seed seeds from the current time, like "
            "sysbench: the run is not reproducible; pass --rand-seed=N"
        )
    return out
