"""The import layers of the whole package (architecture guide, section 3).

Every module belongs to one layer; a module never imports a module of a higher
layer, and the import graph has no cycle (imports inside functions count too:
a lazy import hides an arrow, it does not remove it).  The C extension (one module
built from a C source per layer, pysysbench/native.h) belongs to the native layer.
The order:

    errors, record, options, native, switches, memory, handoff, version, files, childenv, aio  <  rand, stats, results  <  drivers  <
    workloads, lua, load  <  engine, output  <  campaign  <  report  <  cli

Rules beyond the order: report reads result files only (it imports no
campaign, engine, driver or workload module), nothing below cli prints, and each
driver is a folder of its own (drivers/mysql/, drivers/pgsql/, drivers/sqlite/) that
imports no other driver's folder and that nothing but drivers/__init__ imports into.
Inside lua/ the modules have layers of their own (``LUA_LAYERS``): every import there
points down, annotations included.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "pysysbench"

LAYERS = [
    ("errors", "record", "options", "native", "switches", "memory", "handoff", "version", "files", "childenv", "aio"),
    ("rand", "rand_compat", "stats", "results"),
    ("drivers",),
    ("workloads", "lua", "load"),
    ("engine", "output"),
    ("campaign",),
    ("report",),
    ("cli", "__init__", "__main__"),
]
RANK = {name: i for i, names in enumerate(LAYERS) for name in names}
# beyond the order: what a layer must not import although it sits above it
EXTRA_FORBIDDEN = {"report": ("campaign", "engine", "drivers", "workloads", "lua", "load")}


def extensions() -> dict[str, Path]:
    """The package's C extension modules by dotted name, each with the source that defines
    its ``PyInit_<name>`` (the other C sources are pieces of it, not modules)."""
    out = {}
    for path in sorted(PKG.rglob("*.c")):
        if (m := re.search(r"\bPyInit_(\w+)", path.read_text())):
            out[f"pysysbench.{m.group(1)}"] = path
    return out


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (C extensions included: they count as
    the native layer)."""
    out = extensions()
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts.pop()
        out[".".join(parts)] = path
    return out


def top(module: str) -> str:
    """The layer key of a module: its first component below the package
    (``pysysbench.drivers.mysql`` -> ``drivers``; ``pysysbench`` -> ``__init__``)."""
    parts = module.split(".")
    if module in extensions():
        return "native"
    return parts[1] if len(parts) > 1 else "__init__"


def imports(module: str, path: Path, annotations: bool = False) -> set[str]:
    """The pysysbench modules (or packages) ``module`` imports (an ``if TYPE_CHECKING:``
    block names types for annotations only: it is no dependency between layers and is left
    out, unless ``annotations``)."""
    is_pkg = path.name == "__init__.py"
    package = module.split(".") if is_pkg else module.split(".")[:-1]
    tree = ast.parse(path.read_text())
    typing_only = set() if annotations else {
        id(n) for block in ast.walk(tree)
        if isinstance(block, ast.If) and isinstance(block.test, ast.Name) and block.test.id == "TYPE_CHECKING"
        for stmt in block.body for n in ast.walk(stmt)}
    nodes = [n for n in ast.walk(tree) if id(n) not in typing_only]
    out = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("pysysbench"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            if name.startswith("pysysbench"):   # "from . import results" names the module results
                out.update(f"{name}.{a.name}" for a in node.names)
    return out


def python_modules() -> dict[str, Path]:
    return {m: p for m, p in modules().items() if p.suffix == ".py"}


def known(name: str, mods: dict[str, Path]) -> str | None:
    """The module an imported name refers to (``pkg.mod.func`` -> ``pkg.mod``)."""
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def test_every_module_has_a_layer():
    missing = sorted({top(m) for m in modules()} - set(RANK))
    assert not missing, f"modules outside every layer (add them to LAYERS and to the architecture guide): {missing}"


@pytest.mark.parametrize("module", sorted(python_modules()))
def test_no_import_from_a_higher_layer(module):
    mods = modules()
    mine = top(module)
    bad = []
    for name in imports(module, mods[module]):
        target = known(name, mods)
        if target is None:
            continue
        theirs = top(target)
        if RANK.get(theirs, -1) > RANK.get(mine, len(LAYERS)) or theirs in EXTRA_FORBIDDEN.get(mine, ()):
            bad.append(target)
    assert not bad, f"{module} ({mine}) imports {sorted(set(bad))}"


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (module -> the modules it imports), first module
    repeated at the end, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for t in sorted(graph.get(m, ())):
            if state.get(t) == 1:
                return stack[stack.index(t):] + [t]
            if t not in state and (cycle := visit(t)):
                return cycle
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (cycle := visit(m)):
            return cycle
    return None


def test_no_import_cycle():
    """No circle among the package's modules, counting ``if TYPE_CHECKING:`` imports too (an
    annotation naming a type of a module that imports this one is a circle drawn in types)."""
    mods = modules()
    graph = {m: {t for n in imports(m, p, annotations=True) if (t := known(n, mods)) and t != m}
             for m, p in python_modules().items()}
    # a package's __init__ importing its own submodules is how packages are built, not a cycle
    for m, targets in graph.items():
        if mods[m].name == "__init__.py":
            graph[m] = {t for t in targets if not t.startswith(m + ".")}
    if (cycle := find_cycle(graph)):
        pytest.fail("import cycle: " + " -> ".join(cycle))


# --- inside lua/ ---------------------------------------------------------------------

LUA = "pysysbench.lua"
# lua/'s own layers, lowest first; a module imports only modules of a lower layer
LUA_LAYERS = [
    ("log", "runtime", "options"),   # the logger and how a Lua error reads; which Lua; a script's options
    ("state",),                      # one Lua state with sysbench's API (the Python and C bridges)
    ("host", "reports"),             # the process's services, a chunk's load, the main state's loop; report hooks
    ("commands",),                   # sysbench's command dispatch (handed the workload class, never importing it)
    ("script",),                     # a script as a Workload: what the rest of the package sees
    ("__init__",),
]
LUA_RANK = {name: i for i, names in enumerate(LUA_LAYERS) for name in names}


def lua_name(module: str) -> str:
    return "__init__" if module == LUA else module.removeprefix(LUA + ".")


def lua_graph() -> dict[str, set[str]]:
    """lua/'s modules (short names) -> the lua/ modules each imports: top-level and
    function-local imports, relative ones resolved, and ``if TYPE_CHECKING:`` ones too (an
    annotation naming a higher module's class is an arrow back up all the same)."""
    mods = modules()
    ours = {m: p for m, p in python_modules().items() if m == LUA or m.startswith(LUA + ".")}
    return {lua_name(m): {lua_name(t) for n in imports(m, p, annotations=True)
                          if (t := known(n, mods)) in ours and t != m}
            for m, p in ours.items()}


def test_lua_has_no_import_cycle():
    graph = lua_graph()
    assert (cycle := find_cycle(graph)) is None, "import cycle in lua/: " + " -> ".join(cycle)


def test_lua_imports_point_down():
    graph = lua_graph()
    assert not (missing := sorted(set(graph) - set(LUA_RANK))), f"lua/ modules outside LUA_LAYERS: {missing}"
    up = sorted(f"{m} -> {t}" for m, targets in graph.items() for t in targets if LUA_RANK[t] >= LUA_RANK[m])
    assert not up, f"lua/ imports that do not point down a layer: {up}"


@pytest.mark.parametrize("module", sorted(m for m in python_modules() if top(m) not in ("cli", "__main__")))
def test_library_code_does_not_print(module):
    tree = ast.parse(modules()[module].read_text())
    calls = [n.lineno for n in ast.walk(tree)
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("print", "exit")]
    assert not calls, f"{module} calls print/exit at lines {calls} (only the CLI prints)"


DB_LIBRARIES = {"asyncmy", "asyncpg", "sqlite3", "pymysql", "psycopg", "psycopg2"}


def _third_party(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.add(node.module.split(".")[0])
    return out


@pytest.mark.parametrize("module", sorted(m for m in python_modules() if top(m) != "drivers"))
def test_database_libraries_only_in_drivers(module):
    bad = _third_party(python_modules()[module]) & DB_LIBRARIES
    assert not bad, f"{module} imports {sorted(bad)}: only drivers/ talks to a database library"


def test_reports_load_no_database_library_at_run_time():
    code = ("import sys, pysysbench.report.document, pysysbench.report.compare, pysysbench.report.html, "
            "pysysbench.report.markdown, pysysbench.report.export; "
            f"print(sorted(m for m in {sorted(DB_LIBRARIES)!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=PKG.parent).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("module", sorted(m for m in python_modules() if top(m) == "drivers"))
def test_drivers_hold_no_sbtest_sql(module):
    """sbtest's tables are the workloads' (their SQL is keyed by ``Dialect.family``); a
    driver knows its server, not the benchmark's schema.  sysbench's default user and
    database names ("sbtest", "sbtest.db") are option defaults, not SQL."""
    tree = ast.parse(python_modules()[module].read_text())
    bad = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
           and "sbtest" in n.value and n.value not in ("sbtest", "sbtest.db")]
    docstrings = {n.body[0].value.lineno for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    bad = [line for line in bad if line not in docstrings]
    assert not bad, f"{module} has sbtest SQL at lines {bad} (move it to the workload, keyed by dialect.family)"


# --- a folder per driver --------------------------------------------------------------

DRIVERS_PKG = "pysysbench.drivers"
# what every driver may use: the driver API, the shared wire machinery, TLS, the dry-run session
SHARED_DRIVER_MODULES = {f"{DRIVERS_PKG}.{m}" for m in ("base", "wire", "tls", "dryrun")}


def driver_folders() -> list[str]:
    """The drivers that are folders (``drivers/mysql/``, ...), by dotted name."""
    return sorted(f"{DRIVERS_PKG}.{p.parent.name}" for p in (PKG / "drivers").glob("*/__init__.py")
                  if f"{DRIVERS_PKG}.{p.parent.name}" not in SHARED_DRIVER_MODULES)


def _folder_of(module: str) -> str | None:
    return next((f for f in driver_folders() if module == f or module.startswith(f + ".")), None)


def test_the_drivers_are_folders():
    """The bundled drivers each live in a folder of their own (session, wire client,
    scanner and that protocol's C); the wire machinery they share is one module."""
    assert {"pysysbench.drivers.mysql", "pysysbench.drivers.pgsql", "pysysbench.drivers.sqlite"} <= set(driver_folders())
    loose = sorted(p.name for p in (PKG / "drivers").glob("*.py")
                   if f"{DRIVERS_PKG}.{p.stem}" not in SHARED_DRIVER_MODULES and p.stem != "__init__")
    assert not loose, f"driver modules outside a driver folder: {loose}"
    for name in ("mysql", "pgsql"):
        assert {"session.py", "wire.py", "scan.py", "wire.c"} <= {p.name for p in (PKG / "drivers" / name).iterdir()}


def test_a_driver_folder_is_its_own():
    """Changing a driver means touching its folder only: a driver folder imports nothing of
    another driver folder (only the drivers' shared modules), and no module outside it
    imports into it but ``drivers/__init__`` (which registers it)."""
    mods = modules()
    bad = []
    for module in sorted(python_modules()):
        mine = _folder_of(module)
        for name in imports(module, mods[module]):
            target = known(name, mods)
            theirs = _folder_of(target) if target else None
            if theirs is None or theirs == mine:
                continue
            if mine is None and module == DRIVERS_PKG and target == theirs:
                continue   # the registration import of the folder itself
            bad.append(f"{module} -> {target}")
    assert not bad, f"imports into another driver's folder: {sorted(set(bad))}"
