"""Import layers of the campaign and report packages (architecture guide, section 3):
``campaign`` never imports the CLI, ``report`` reads result files only (no driver,
engine, workload or database library, no CLI), and neither prints.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "pysysbench"
DB_LIBRARIES = {"asyncmy", "asyncpg", "sqlite3", "pymysql", "psycopg", "psycopg2"}
FORBIDDEN = {
    "campaign": {"pysysbench.cli", "pysysbench.report", "pysysbench.engine", "pysysbench.workloads"} | DB_LIBRARIES,
    "report": {"pysysbench.cli", "pysysbench.drivers", "pysysbench.engine", "pysysbench.workloads"} | DB_LIBRARIES,
}


def imports(path: Path) -> set[str]:
    """Absolute names of every module a file imports (relative imports resolved)."""
    package = ["pysysbench", path.parent.name]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            out.add(module)
            out.update(f"{module}.{a.name}" for a in node.names)
    return out


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports(layer):
    for path in sorted((PKG / layer).glob("*.py")):
        bad = {m for m in imports(path) for f in FORBIDDEN[layer] if m == f or m.startswith(f + ".")}
        assert not bad, f"{path.name} imports {sorted(bad)}"


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_library_code_does_not_print(layer):
    for path in sorted((PKG / layer).glob("*.py")):
        calls = [n for n in ast.walk(ast.parse(path.read_text()))
                 if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("print", "exit")]
        assert not calls, f"{path.name} calls print/exit (only the CLI prints)"


def test_reports_load_no_database_library_at_run_time():
    code = ("import sys, pysysbench.report.document, pysysbench.report.compare, pysysbench.report.html, "
            "pysysbench.report.markdown, pysysbench.report.export; "
            f"print(sorted(m for m in {sorted(DB_LIBRARIES)!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=PKG.parent).stdout
    assert out.strip() == "[]"
