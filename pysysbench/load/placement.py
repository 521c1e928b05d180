"""Which node a row goes to (``--load-nodes``): where ``PARTITION BY HASH (id)`` over N
partitions puts id, node i holding partition i.

* ``mod`` (MySQL, MariaDB, a Spider table over N data nodes): ``id mod N``;
* ``pg-hash`` (PostgreSQL, a partitioned table whose N partitions are ``MODULUS N,
  REMAINDER i``, e.g. postgres_fdw foreign tables on N shards): PostgreSQL's own placement,
  ``hash_combine64(0, hashint4extended(id, HASH_PARTITION_SEED)) mod N``, where
  ``hashint4extended`` is Bob Jenkins' lookup3 hash (``hash_uint32_extended`` of
  PostgreSQL's ``common/hashfn.c``) of the 32-bit id with the 64-bit seed.  Computed here on
  numpy arrays of uint32 (wrapping as C does); tests compare it with the server's routing.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

PLACEMENTS = ("mod", "pg-hash")
M32 = 0xFFFFFFFF
HASH_PARTITION_SEED = 0x7A5B22367996DCFD  # PostgreSQL's partition/partbounds.h
COMBINE = 0x49A0F4DD15E5A8E3  # hash_combine64's constant (common/hashfn.h)
CHUNK = 1 << 20  # ids per step when counting a range's rows
# lookup3's mix(): (x, z, y, k) for each step x -= z; x ^= rot(z, k); z += y
MIX = (
    ("a", "c", "b", 4),
    ("b", "a", "c", 6),
    ("c", "b", "a", 8),
    ("a", "c", "b", 16),
    ("b", "a", "c", 19),
    ("c", "b", "a", 4),
)
# lookup3's final(): (x, y, k) for each step x ^= y; x -= rot(y, k)
FINAL = (("c", "b", 14), ("a", "c", 11), ("b", "a", 25), ("c", "b", 16), ("a", "c", 4), ("b", "a", 14), ("c", "b", 24))


def _rot(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & M32


def _seeded() -> tuple[int, int, int]:
    """lookup3's a, b, c after the seed's ``mix`` (the same for every id)."""
    a = b = c = (0x9E3779B9 + 4 + 3923095) & M32  # + sizeof(uint32) + 3923095
    a = (a + (HASH_PARTITION_SEED >> 32)) & M32
    b = (b + (HASH_PARTITION_SEED & M32)) & M32
    v = {"a": a, "b": b, "c": c}
    for x, z, y, k in MIX:  # mix(a, b, c): x -= z; x ^= rot(z, k); z += y
        v[x] = ((v[x] - v[z]) & M32) ^ _rot(v[z], k)
        v[z] = (v[z] + v[y]) & M32
    a, b, c = v["a"], v["b"], v["c"]
    return a, b, c


A0, B0, C0 = _seeded()


def _rotv(x: np.ndarray, k: int) -> np.ndarray:
    return (x << np.uint32(k)) | (x >> np.uint32(32 - k))


def pg_hash(ids: np.ndarray) -> np.ndarray:
    """PostgreSQL's 64-bit partition hash of int4 ``ids`` (before the modulus)."""
    with np.errstate(over="ignore"):
        a = np.uint32(A0) + ids.astype(np.int64).astype(np.uint32)
        b = np.full_like(a, B0)
        c = np.full_like(a, C0)
        v = {"a": a, "b": b, "c": c}
        for x, y, k in FINAL:  # final(a, b, c): x ^= y; x -= rot(y, k)
            v[x] ^= v[y]
            v[x] -= _rotv(v[y], k)
        a, b, c = v["a"], v["b"], v["c"]
        return ((b.astype(np.uint64) << np.uint64(32)) | c.astype(np.uint64)) + np.uint64(COMBINE)


def node_of(ids: np.ndarray, nodes: int, placement: str) -> np.ndarray:
    """The node (0..nodes-1) of each id."""
    if placement == "mod":
        return ids % nodes
    if placement == "pg-hash":
        return (pg_hash(ids) % np.uint64(nodes)).astype(np.int64)
    raise ValueError(f"unknown placement {placement!r} (one of {', '.join(PLACEMENTS)})")


@lru_cache(maxsize=256)
def count(first_id: int, last_id: int, node: int, nodes: int, placement: str) -> int:
    """How many ids of first_id..last_id go to ``node``."""
    if placement == "mod":
        return (last_id - node) // nodes - (first_id - 1 - node) // nodes
    total = 0
    for lo in range(first_id, last_id + 1, CHUNK):
        ids = np.arange(lo, min(lo + CHUNK - 1, last_id) + 1, dtype=np.int64)
        total += int(np.count_nonzero(node_of(ids, nodes, placement) == node))
    return total
