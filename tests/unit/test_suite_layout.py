"""The test tree itself: pytest's default import mode puts each test folder on
``sys.path`` and imports test files by basename (the integration tests rely on it:
``from test_statement_counts import ...``), so two test files with one basename in
different folders stop the whole run at collection (CI stop 23 did exactly that)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_no_two_test_files_share_a_basename():
    seen: dict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("test_*.py"):
        seen[path.name].append(str(path.relative_to(TESTS)))
    clashes = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not clashes, f"rename one of each: {clashes}"
