"""Functions stay short (issue 45's house rule): the package's functions have a median of at
most 8 lines and none has more than 60, counted from ``def`` to the last line (docstring
included), as ruff format lays them out.  A function that needs more is two functions."""

from __future__ import annotations

import ast
import statistics
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "pysysbench"
MEDIAN_MAX, LONGEST_MAX = 8, 60


def lengths() -> dict[str, int]:
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                out[f"{path.relative_to(PKG.parent)}:{node.lineno} {node.name}"] = node.end_lineno - node.lineno + 1
    return out


def test_the_median_function_is_short():
    sizes = lengths()
    assert len(sizes) > 1000, "the scan found too few functions: is PKG right?"
    assert statistics.median(sizes.values()) <= MEDIAN_MAX


def test_no_function_is_long():
    long = {name: n for name, n in lengths().items() if n > LONGEST_MAX}
    assert not long, f"functions over {LONGEST_MAX} lines (split them): {long}"
