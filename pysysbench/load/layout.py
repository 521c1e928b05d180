"""Fixed-width record layout of the sbtest rows, and the generation parameters.

Role: everything the loading process needs to know about the records without
importing numpy (the generation itself is :mod:`.rows`, run in generator
processes).  A record holds id and k zero-padded to the width of table_size
(both servers read ``0000042`` as 42) and the 15 eleven-digit groups of c and
pad; :data:`FORMATS` names the two record formats (see :mod:`.rows`).  Ids are
generated in blocks of :data:`BLOCK_ROWS`, each from its own seed.
"""

from __future__ import annotations

from ..core.rand import (
    DEFAULT_PARETO_H,
    DEFAULT_RAND_TYPE,
    DEFAULT_SPEC_ITER,
    DEFAULT_SPEC_PCT,
    DEFAULT_SPEC_RES,
    DEFAULT_ZIPF_EXP,
    Rand,
)
from ..core.record import record

BLOCK_ROWS = 16_384  # rows per seeded block (about 3 MiB of text: stays in cache)
C_GROUPS, PAD_GROUPS = 10, 5  # 11-digit groups of the c and pad templates
GROUP_DIGITS = 11
DIGITS_PER_ROW = (C_GROUPS + PAD_GROUPS) * GROUP_DIGITS  # 165

FORMATS = ("tsv", "sql")


@record(frozen=True)
class RandParams:
    """The --rand-* options (picklable: sent to generator processes)."""

    rand_type: str = DEFAULT_RAND_TYPE
    spec_iter: int = DEFAULT_SPEC_ITER
    spec_pct: float = DEFAULT_SPEC_PCT
    spec_res: float = DEFAULT_SPEC_RES
    pareto_h: float = DEFAULT_PARETO_H
    zipf_exp: float = DEFAULT_ZIPF_EXP
    release: str = "1.0"  # the sysbench release whose distributions to draw (Rand's ``release``)

    @classmethod
    def from_values(cls, values) -> RandParams:
        return cls(
            values.rand_type,
            values.rand_spec_iter,
            values.rand_spec_pct,
            values.rand_spec_res,
            values.rand_pareto_h,
            values.rand_zipfian_exp,
            values.get("sysbench_compat", "1.0"),
        )

    def scalar(self, seed: int | None = None) -> Rand:
        """The per-row generator with the same parameters (tests, constants)."""
        return Rand(
            seed,
            rand_type=self.rand_type,
            spec_iter=self.spec_iter,
            spec_pct=self.spec_pct,
            spec_res=self.spec_res,
            pareto_h=self.pareto_h,
            zipf_exp=self.zipf_exp,
            release=self.release,
        )


@record(frozen=True)
class Layout:
    """Where each field of a fixed-width record sits."""

    fmt: str
    width: int  # digits of id and k
    row_bytes: int
    template: bytes  # one record with the constant characters set
    id_at: int
    k_at: int
    group_at: tuple[int, ...]  # start of each 11-digit group (c then pad)

    @classmethod
    def for_table(cls, fmt: str, table_size: int) -> Layout:
        if fmt not in FORMATS:
            raise ValueError(f"unknown row format {fmt!r}")
        w = len(str(max(table_size, 1)))
        c = "-".join(["#" * GROUP_DIGITS] * C_GROUPS)
        pad = "-".join(["#" * GROUP_DIGITS] * PAD_GROUPS)
        n = "0" * w
        if fmt == "tsv":
            head, text = f"{n}\t{n}\t", f"{n}\t{n}\t{c}\t{pad}\n"
            id_at, k_at = 0, w + 1
        else:
            head, text = f"({n},{n},'", f"({n},{n},'{c}','{pad}'),"
            id_at, k_at = 1, w + 2
        groups = [
            i for i in range(len(text)) if text.startswith("#" * GROUP_DIGITS, i) and (i == 0 or text[i - 1] != "#")
        ]
        assert len(groups) == C_GROUPS + PAD_GROUPS and groups[0] == len(head)
        return cls(fmt, w, len(text), text.encode(), id_at, k_at, tuple(groups))


def block_range(first_id: int, last_id: int) -> range:
    if (first_id - 1) % BLOCK_ROWS:
        raise ValueError(f"id range must start on a block boundary, not at {first_id}")
    return range((first_id - 1) // BLOCK_ROWS, (last_id - 1) // BLOCK_ROWS + 1)


def row_bytes(fmt: str, table_size: int) -> int:
    return Layout.for_table(fmt, table_size).row_bytes
