"""Vectorised generation of the sbtest rows for the fast prepare (spec 2.3).

Role: turn (table, id range) into the bytes a bulk-load statement reads, at
millions of rows per second per core, so that generating rows never limits a
load.  The data is sysbench's data set:

* ``id`` = 1..table_size, no gaps (always sent explicitly, so ids do not depend
  on the server's auto-increment settings and id ranges can load in parallel);
* ``k`` = ``random.default(1, table_size)`` for the chosen ``--rand-type``,
  computed by :class:`VectorRand` with the same double-precision formulas and
  operation order as :class:`pysysbench.core.rand.Rand` (fed the same uniform
  doubles, both give the same k; the unit tests check it);
* ``c`` / ``pad`` = the 10- and 5-group templates of 11 uniform digits.

Digits are drawn without bias: 16 random bits give four digits through a
lookup table of the 60000 (= 6 x 10**4) lowest values; the other 5536 values
are redrawn (8.4 % of draws), so every four-digit group is exactly uniform.

Rows are fixed-width records (ids and k zero-padded to the width of
table_size: both servers read ``0000042`` as 42), so a block of rows is one
2-D byte array filled column-wise by numpy.  Two record formats:

* ``tsv``: ``id<TAB>k<TAB>c<TAB>pad<LF>`` -- the default text format of both
  ``LOAD DATA`` and PostgreSQL ``COPY``;
* ``sql``: ``(id,k,'c','pad'),`` -- a multi-row INSERT's VALUES list (the
  consumer drops the last comma).

Every block of :data:`BLOCK_ROWS` ids is generated from its own seed (run
seed, table, block number), so the data set does not depend on how tables
and id ranges are split over connections, and ``--rand-seed`` reproduces it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from .layout import BLOCK_ROWS, C_GROUPS, GROUP_DIGITS, PAD_GROUPS, Layout, RandParams, block_range
from .placement import node_of

# 16-bit draws below this limit map to 4 digits; the rest are redrawn
_DIGIT_LIMIT = 60_000
_DIGIT_LUT = np.frombuffer(b"".join(b"%04d" % (x % 10_000) for x in range(_DIGIT_LIMIT)), dtype=np.uint32)
# digits drawn per row: the c and pad runs of 12 bytes (the 12th is overwritten by a separator)
_C_RUN, _PAD_RUN = C_GROUPS * (GROUP_DIGITS + 1), PAD_GROUPS * (GROUP_DIGITS + 1)
_RUN_DIGITS = _C_RUN + _PAD_RUN  # 180, a multiple of 4

UniformSource = Callable[[int | tuple[int, ...]], np.ndarray]


# --------------------------------------------------------------------------- k values


class VectorRand:
    """:class:`Rand`'s distributions over arrays of uniform doubles.

    Each method draws its doubles from ``self.u(shape)`` (the seam tests use to
    replay a stream) and evaluates the same expression as the scalar method,
    operation by operation, in float64; truncation is ``astype(int64)`` (all
    values are positive, so it equals Python's ``int()``).  Draw order per row
    matches ``Rand`` too: row i consumes the i-th first draw, then (gaussian,
    special's gaussian branch) its own ``spec_iter`` draws.
    """

    def __init__(self, params: RandParams, u: UniformSource):
        self.p = params
        self.u = u
        self._scalar = params.scalar(0)  # validated constants, shared with Rand
        s = self._scalar
        self._iter = params.spec_iter
        self._iter_mult = s._iter_mult
        self._pct_mult = s._pct_mult
        self._pct_2_mult = s._pct_2_mult
        self._res_mult = s._res_mult
        self._pareto_power = s._pareto_power
        self.default: Callable[[int, int, int], np.ndarray] = getattr(self, params.rand_type)

    def uniform(self, a: int, b: int, n: int) -> np.ndarray:
        return (a + self.u(n) * (b - a + 1)).astype(np.int64)

    def gaussian(self, a: int, b: int, n: int) -> np.ndarray:
        if self.p.release == "1.1":  # 1.1.0's: no draw, ``a`` (Rand._gaussian_11)
            return np.full(n, a, dtype=np.int64)
        t = b - a + 1
        g = self.u((n, self._iter))
        total = np.zeros(n)
        for j in range(self._iter):  # left to right, like the scalar loop
            total += g[:, j] * t
        return a + (total * self._iter_mult).astype(np.int64)

    def special(self, a: int, b: int, n: int) -> np.ndarray:
        t = b - a
        rnd = self.u(n)
        out = a + (rnd * (t * self._pct_mult + 1) + (t / 2 - t * self._pct_2_mult)).astype(np.int64)
        gauss = np.flatnonzero(rnd * (t * self._res_mult) < t)
        if gauss.size:
            g = self.u((gauss.size, self._iter))
            total = np.zeros(gauss.size)
            for j in range(self._iter):
                total += g[:, j]
            out[gauss] = (a + total * t * self._iter_mult).astype(np.int64)
        return out

    def pareto(self, a: int, b: int, n: int) -> np.ndarray:
        return a + ((b - a + 1) * self.u(n) ** self._pareto_power).astype(np.int64)

    def zipfian(self, a: int, b: int, n: int) -> np.ndarray:
        """Rejection-inversion; rejected rows draw again until all are accepted."""
        s = self._scalar
        count = b - a + 1
        h_n = s._zipf_h_integral(count + 0.5)
        span = s._zipf_h_x1 - h_n
        out = np.empty(n, dtype=np.int64)
        todo = np.arange(n)
        while todo.size:
            v = h_n + self.u(todo.size) * span
            x = self._zipf_h_integral_inverse(v)
            k = np.clip((x + 0.5).astype(np.int64), 1, count)
            ok = (k - x <= s._zipf_s) | (v >= self._zipf_h_integral(k + 0.5) - self._zipf_h(k))
            out[todo[ok]] = a + k[ok] - 1
            todo = todo[~ok]
        return out

    # numpy versions of Rand's zipfian helpers (same series cut-off)

    def _zipf_h_integral(self, x: np.ndarray) -> np.ndarray:
        log_x = np.log(x)
        return _expm1_over_x(self._scalar._zipf_one_minus_exp * log_x) * log_x

    def _zipf_h(self, x: np.ndarray) -> np.ndarray:
        return np.exp(self._scalar._zipf_neg_exp * np.log(x))

    def _zipf_h_integral_inverse(self, x: np.ndarray) -> np.ndarray:
        t = np.maximum(x * self._scalar._zipf_one_minus_exp, -1.0)
        return np.exp(_log1p_over_x(t) * x)


_TAYLOR_CUTOFF = 1e-8
_ONE_THIRD = 0.33333333333333333


def _log1p_over_x(x: np.ndarray) -> np.ndarray:
    safe = np.where(np.abs(x) > _TAYLOR_CUTOFF, x, 1.0)
    return np.where(np.abs(x) > _TAYLOR_CUTOFF, np.log1p(safe) / safe, 1.0 - x * (0.5 - x * (_ONE_THIRD - 0.25 * x)))


def _expm1_over_x(x: np.ndarray) -> np.ndarray:
    safe = np.where(np.abs(x) > _TAYLOR_CUTOFF, x, 1.0)
    return np.where(
        np.abs(x) > _TAYLOR_CUTOFF, np.expm1(safe) / safe, 1.0 + x * 0.5 * (1.0 + x * _ONE_THIRD * (1.0 + 0.25 * x))
    )


# --------------------------------------------------------------------------- digits


def digit_bytes(bits: np.random.BitGenerator, count: int) -> np.ndarray:
    """``count`` (a multiple of 4) uniform ASCII digits as a uint8 array."""
    groups = count // 4
    x = bits.random_raw((groups + 3) // 4).view(np.uint16)[:groups]
    redo = np.flatnonzero(x >= _DIGIT_LIMIT)
    while redo.size:
        x[redo] = bits.random_raw((redo.size + 3) // 4).view(np.uint16)[: redo.size]
        redo = redo[x[redo] >= _DIGIT_LIMIT]
    return _DIGIT_LUT[x].view(np.uint8)


# --------------------------------------------------------------------------- record layout


def block_seed(seed: int, table: int, block: int) -> np.random.PCG64:
    return np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(table, block)))


class RowGenerator:
    """Generates the records of one table (any id range) into a reused buffer."""

    def __init__(self, table_size: int, params: RandParams, seed: int, fmt: str = "tsv"):
        self.table_size = table_size
        self.params = params
        self.seed = seed
        self.layout = Layout.for_table(fmt, table_size)
        self._buf = np.empty((0, self.layout.row_bytes), dtype=np.uint8)
        self._bits: np.random.BitGenerator | None = None
        self._rand = VectorRand(params, self._uniform)
        t = np.frombuffer(self.layout.template, dtype=np.uint8)
        c, pad = self.layout.group_at[0], self.layout.group_at[C_GROUPS]
        self._c_seps = t[c + GROUP_DIGITS : c + _C_RUN : GROUP_DIGITS + 1].copy()
        self._pad_seps = t[pad + GROUP_DIGITS : pad + _PAD_RUN : GROUP_DIGITS + 1].copy()

    def _uniform(self, shape) -> np.ndarray:
        return np.random.Generator(self._bits).random(shape)

    def _buffer(self, n: int) -> np.ndarray:
        if self._buf.shape[0] < n:
            self._buf = np.empty((n, self.layout.row_bytes), dtype=np.uint8)
            self._buf[:] = np.frombuffer(self.layout.template, dtype=np.uint8)
        return self._buf[:n]

    def block(self, table: int, block: int) -> memoryview:
        """The records of block ``block`` (ids block*BLOCK_ROWS+1 ...) of table ``table``.

        The view is valid until the next call (the buffer is reused)."""
        lo = block * BLOCK_ROWS + 1
        hi = min(lo + BLOCK_ROWS - 1, self.table_size)
        n = hi - lo + 1
        lay = self.layout
        self._bits = block_seed(self.seed, table, block)
        buf = self._buffer(n)
        # c and pad are runs of 12 bytes (11 digits + the separator after them): fill each run
        # with digits in one wide copy, then put the 15 separators back
        digits = digit_bytes(self._bits, n * _RUN_DIGITS).reshape(n, _RUN_DIGITS)
        c, pad = lay.group_at[0], lay.group_at[C_GROUPS]
        buf[:, c : c + _C_RUN] = digits[:, :_C_RUN]
        buf[:, pad : pad + _PAD_RUN] = digits[:, _C_RUN:]
        buf[:, c + GROUP_DIGITS : c + _C_RUN : GROUP_DIGITS + 1] = self._c_seps
        buf[:, pad + GROUP_DIGITS : pad + _PAD_RUN : GROUP_DIGITS + 1] = self._pad_seps
        _put_decimal(buf, lay.id_at, lay.width, np.arange(lo, hi + 1, dtype=np.int64))
        _put_decimal(buf, lay.k_at, lay.width, self._rand.default(1, self.table_size, n))
        return memoryview(buf).cast("B")

    def blocks(
        self, table: int, first_id: int, last_id: int, shard: int = 0, shards: int = 1, placement: str = "mod"
    ) -> Iterator[memoryview]:
        """Records of ids first_id..last_id, which must start and end on block boundaries
        (or the table's end): see :func:`block_range`; with ``shards`` > 1 only those that
        ``placement`` puts on node ``shard``, the same records as in the whole table."""
        for b in block_range(first_id, last_id):
            block = self.block(table, b)
            if shards > 1:
                lo = b * BLOCK_ROWS + 1
                rows = np.frombuffer(block, dtype=np.uint8).reshape(-1, self.layout.row_bytes)
                ids = np.arange(lo, lo + rows.shape[0], dtype=np.int64)
                mine = node_of(ids, shards, placement) == shard
                block = memoryview(np.ascontiguousarray(rows[mine])).cast("B")
            yield block


def _put_decimal(buf: np.ndarray, at: int, width: int, values: np.ndarray) -> None:
    """Write ``values`` (< 10**width) as zero-padded decimals into columns at..at+width-1,
    four digits per lookup in the digit table (its first 10000 entries are "0000".."9999")."""
    v = values.astype(np.int32)
    end = at + width
    while end > at:
        take = min(4, end - at)
        v, low = np.divmod(v, 10_000)
        buf[:, end - take : end] = _DIGIT_LUT[low].view(np.uint8).reshape(-1, 4)[:, 4 - take :]
        end -= take
