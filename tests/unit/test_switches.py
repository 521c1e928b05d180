"""pysysbench/core/switches.py is the one module that reads PYSYSBENCH_* environment variables.

The scan (ast, every module of the package but switches.py):
* no string constant outside a docstring is a PYSYSBENCH_ name: the names are declared
  in switches.py alone, so another module can only reach one through its Switch;
* every read of the environment (``os.environ[...]``, ``.get``, ``.pop``, ``in``,
  ``os.getenv``) names its key as a constant (which the first rule keeps from being a
  PYSYSBENCH_ name), except the few reads of a computed key listed in COMPUTED_READS with
  the names they read.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from pysysbench.core import switches

PKG = Path(__file__).resolve().parents[2] / "pysysbench"
NAME = re.compile(r"PYSYSBENCH_[A-Z0-9_]+")

# module -> why its read of a computed key is no PYSYSBENCH_ switch
COMPUTED_READS = {
    "drivers/tls.py": "libpq's PGSSLCERT / PGSSLKEY / PGSSLROOTCERT / PGSSLCRL (libpq_file's env)",
    "runtime/childenv.py": "PYTHONPATH and PYTHONSAFEPATH, saved around a child's start",
    "workloads/stock.py": "HOME, LUA_PATH, LUA_CPATH (sysbench's package.path), from a mapping it is given",
}


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _is_environ(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "environ"
        and isinstance(node.value, ast.Name)
        and node.value.id == "os"
    ) or (isinstance(node, ast.Name) and node.id == "environ")


def _reads(tree: ast.AST) -> list[tuple[int, ast.AST | None]]:
    """(line, key expression or None when the whole environment is used) of every read."""
    out: list[tuple[int, ast.AST | None]] = []
    handled: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and _is_environ(node.value):
            handled.add(id(node.value))
            if isinstance(node.ctx, ast.Load):
                out.append((node.lineno, node.slice))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            f = node.func
            if _is_environ(f.value):
                handled.add(id(f.value))
                out.append((node.lineno, node.args[0] if node.args else None))
            elif f.attr == "getenv" and isinstance(f.value, ast.Name) and f.value.id == "os":
                out.append((node.lineno, node.args[0] if node.args else None))
        elif isinstance(node, ast.Compare) and any(_is_environ(c) for c in node.comparators):
            handled.update(id(c) for c in node.comparators)
            out.append((node.lineno, node.left))
    for node in ast.walk(tree):
        if _is_environ(node) and id(node) not in handled:
            out.append((node.lineno, None))  # the whole mapping passed on or iterated
    return out


def scan(path: Path) -> list[str]:
    rel = path.relative_to(PKG).as_posix()
    tree = ast.parse(path.read_text())
    docs = _docstrings(tree)
    bad = [
        f"{rel}:{n.lineno}: the name {n.value!r} (declare it in switches.py and ask its Switch)"
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and NAME.fullmatch(n.value) and id(n) not in docs
    ]
    for line, key in _reads(tree):
        if isinstance(key, ast.Constant):
            if isinstance(key.value, str) and NAME.match(key.value):
                bad.append(f"{rel}:{line}: reads {key.value}")
        elif rel not in COMPUTED_READS:
            bad.append(
                f"{rel}:{line}: reads the environment with a computed key (ask switches.py, "
                "or list the module in COMPUTED_READS with the names it reads)"
            )
    return bad


def test_only_switches_reads_pysysbench_variables():
    bad = [line for path in sorted(PKG.rglob("*.py")) if path.name != "switches.py" for line in scan(path)]
    assert not bad, "\n".join(bad)


def test_the_scan_catches_a_read(tmp_path):
    """The scan itself: each way of reading a switch elsewhere is caught."""
    for code in (
        'import os\nX = os.environ.get("PYSYSBENCH_NATIVE", "")\n',
        'import os\nX = os.getenv("PYSYSBENCH_LUA")\n',
        'import os\nENV = "PYSYSBENCH_FACE"\n',
        "import os\nfrom pysysbench.core.switches import NATIVE\nX = os.environ[NATIVE.name]\n",
        "import os\nX = dict(os.environ)\n",
    ):
        path = PKG / "_scan_probe.py"
        try:
            path.write_text(code)
            assert scan(path), code
        finally:
            path.unlink()


def test_every_switch_is_declared_once_and_documented():
    names = [s.name for s in switches.ALL]
    assert len(names) == len(set(names))
    declared = {v.name for v in vars(switches).values() if isinstance(v, switches.Switch)}
    assert declared == set(names), "a Switch missing from switches.ALL"
    docs = (PKG.parent / "docs" / "usage.md").read_text() + (PKG.parent / "docs" / "development.md").read_text()
    for s in switches.ALL:
        assert s.name and s.values and s.default and s.why, s
        assert f"`{s.name}`" in docs, f"{s.name} is not in docs/usage.md or docs/development.md"


@pytest.mark.parametrize(
    "value, on",
    [
        (None, True),
        ("", True),
        ("on", True),
        (" OFF ", False),
        ("0", False),
        ("no", False),
        ("false", False),
        ("yes", True),
    ],
)
def test_an_on_by_default_switch(monkeypatch, value, on):
    if value is None:
        monkeypatch.delenv(switches.LUA_STACKS.name, raising=False)
    else:
        monkeypatch.setenv(switches.LUA_STACKS.name, value)
    assert switches.LUA_STACKS.on() is on


def test_switches_are_read_at_call_time(monkeypatch):
    from pysysbench.engine.procs import start_method

    monkeypatch.setenv(switches.WORKER_START.name, "spawn")
    assert start_method() == "spawn"
    monkeypatch.setenv(switches.DRY_RUN_ERRORS.name, "1213, 40001")
    from pysysbench.drivers.dryrun.session import planned_faults

    assert planned_faults() == ("1213", "40001")
