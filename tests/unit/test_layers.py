"""The import layers of the whole package (architecture guide, section 3).

Every module belongs to one layer; a module never imports a module of a higher
layer, and the import graph has no cycle (imports inside functions count too:
a lazy import hides an arrow, it does not remove it).  The C extension (one module
built from a C source per layer, pysysbench/runtime/native_runtime.h) belongs to the runtime
layer; its C files have layers of their own (``C_LAYERS``): includes and calls point down, no
circle among them, and the module init (engine/_native.c) only wires.
The order (the package root holds __init__, __main__ and version only):

    core, version  <  runtime  <  stats (results.py among them)  <  drivers  <
    workloads, lua, load  <  engine, output  <  command  <  lab  <  campaign  <  report  <  cli

(``command``: one sysbench-style command -- parse, configure, execute, render -- as the
library call the CLI and the campaigns share.)

No arrow goes up (``ALLOWED_UP`` names any that must, docs/design.md says why): core/rand.py
is handed its C draws by runtime/native.py, the one module that decides whether the C is used.
Rules beyond the order: report reads result files only (it imports no
campaign, command, engine, driver or workload module), nothing below cli prints, and each
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
    ("core", "version"),
    ("runtime", "native"),  # native: the C extension pysysbench._native (its init is engine/_native.c)
    ("stats",),
    ("drivers",),
    ("workloads", "lua", "load"),
    ("engine", "output"),
    ("command",),  # one command (parse -> configure -> execute), shared by cli and campaign
    ("lab",),  # cluster look-alikes (issue 42): started, read and stopped through a manifest
    ("campaign",),
    ("report",),
    ("history",),  # the results store, trends and regression detection (issue 43)
    ("cli", "__init__", "__main__"),
]
RANK = {name: i for i, names in enumerate(LAYERS) for name in names}
# beyond the order: what a layer must not import although it sits above it
EXTRA_FORBIDDEN = {"report": ("campaign", "command", "engine", "drivers", "workloads", "lua", "load")}
# the named exceptions to the order: (importer, imported), each named in docs/design.md
ALLOWED_UP: set[tuple[str, str]] = set()
ROOT_MODULES = {"__init__.py", "__main__.py", "version.py"}


def extensions() -> dict[str, Path]:
    """The package's C extension modules by dotted name, each with the source that defines
    its ``PyInit_<name>`` (the other C sources are pieces of it, not modules)."""
    out = {}
    for path in sorted(PKG.rglob("*.c")):
        if m := re.search(r"\bPyInit_(\w+)", path.read_text()):
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
    typing_only = (
        set()
        if annotations
        else {
            id(n)
            for block in ast.walk(tree)
            if isinstance(block, ast.If) and isinstance(block.test, ast.Name) and block.test.id == "TYPE_CHECKING"
            for stmt in block.body
            for n in ast.walk(stmt)
        }
    )
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
            if name.startswith("pysysbench"):  # "from . import results" names the module results
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
        if (module, target) in ALLOWED_UP:
            continue
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
                return stack[stack.index(t) :] + [t]
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
    graph = {
        m: {t for n in imports(m, p, annotations=True) if (t := known(n, mods)) and t != m}
        for m, p in python_modules().items()
    }
    # a package's __init__ importing its own submodules is how packages are built, not a cycle
    for m, targets in graph.items():
        if mods[m].name == "__init__.py":
            graph[m] = {t for t in targets if not t.startswith(m + ".")}
    if cycle := find_cycle(graph):
        pytest.fail("import cycle: " + " -> ".join(cycle))


# --- inside lua/ ---------------------------------------------------------------------

LUA = "pysysbench.lua"
# lua/'s own layers, lowest first; a module imports only modules of a lower layer
LUA_LAYERS = [
    ("log", "runtime", "options"),  # the logger and how a Lua error reads; which Lua; a script's options
    ("state",),  # one Lua state with sysbench's API (the Python and C bridges)
    ("host", "reports"),  # the process's services, a chunk's load, the main state's loop; report hooks
    ("commands",),  # sysbench's command dispatch (handed the workload class, never importing it)
    ("script",),  # a script as a Workload: what the rest of the package sees
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
    return {
        lua_name(m): {lua_name(t) for n in imports(m, p, annotations=True) if (t := known(n, mods)) in ours and t != m}
        for m, p in ours.items()
    }


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
    calls = [
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("print", "exit")
    ]
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
    code = (
        "import sys, pysysbench.report.document, pysysbench.report.compare, pysysbench.report.html, "
        "pysysbench.report.markdown, pysysbench.report.export; "
        f"print(sorted(m for m in {sorted(DB_LIBRARIES)!r} if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=PKG.parent
    ).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("module", sorted(m for m in python_modules() if top(m) == "drivers"))
def test_drivers_hold_no_sbtest_sql(module):
    """sbtest's tables are the workloads' (their SQL is keyed by ``Dialect.family``); a
    driver knows its server, not the benchmark's schema.  sysbench's default user and
    database names ("sbtest", "sbtest.db") are option defaults, not SQL."""
    tree = ast.parse(python_modules()[module].read_text())
    bad = [
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and "sbtest" in n.value
        and n.value not in ("sbtest", "sbtest.db")
    ]
    docstrings = {
        n.body[0].value.lineno
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    bad = [line for line in bad if line not in docstrings]
    assert not bad, f"{module} has sbtest SQL at lines {bad} (move it to the workload, keyed by dialect.family)"


# --- a folder per driver --------------------------------------------------------------

DRIVERS_PKG = "pysysbench.drivers"
# what every driver may use: the driver API, the shared wire machinery, TLS, the dry-run session
SHARED_DRIVER_MODULES = {f"{DRIVERS_PKG}.{m}" for m in ("base", "wire", "tls", "dryrun", "targets")}


def driver_folders() -> list[str]:
    """The drivers that are folders (``drivers/mysql/``, ...), by dotted name."""
    return sorted(
        f"{DRIVERS_PKG}.{p.parent.name}"
        for p in (PKG / "drivers").glob("*/__init__.py")
        if f"{DRIVERS_PKG}.{p.parent.name}" not in SHARED_DRIVER_MODULES
    )


def _folder_of(module: str) -> str | None:
    return next((f for f in driver_folders() if module == f or module.startswith(f + ".")), None)


def test_the_drivers_are_folders():
    """The bundled drivers each live in a folder of their own (session, wire client,
    scanner and that protocol's C); the wire machinery they share is one module."""
    assert {"pysysbench.drivers.mysql", "pysysbench.drivers.pgsql", "pysysbench.drivers.sqlite"} <= set(
        driver_folders()
    )
    loose = sorted(
        p.name
        for p in (PKG / "drivers").glob("*.py")
        if f"{DRIVERS_PKG}.{p.stem}" not in SHARED_DRIVER_MODULES and p.stem != "__init__"
    )
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
                continue  # the registration import of the folder itself
            bad.append(f"{module} -> {target}")
    assert not bad, f"imports into another driver's folder: {sorted(set(bad))}"


# --- the C extension's files ------------------------------------------------------------

# The C files of pysysbench._native (and their headers) in layers, lowest first, one header per
# layer: a file includes only headers of its own layer or below, uses (calls, reads) only symbols
# defined in C files of its own layer or below, and the C files have no circle between them.
# The module init is the top: it wires every file's *_init and defines nothing else.
C_LAYERS = [
    ("core/native_core.h", "core/rand.c"),  # core: needs only Python
    (
        "runtime/native_runtime.h",
        "runtime/native_util.c",
        "runtime/handoff.c",
        "runtime/memory.c",
    ),  # the shared helpers, the hand-off, glibc's heap
    ("stats/native_stats.h", "stats/recorder.c"),  # the latency recorder
    (
        "drivers/native_drivers.h",
        "drivers/wire.c",
        "drivers/mysql/wire.c",
        "drivers/pgsql/wire.c",
    ),  # wire core, protocols
    (
        "workloads/native_workloads.h",
        "workloads/builtin.c",
        "lua/bridge.c",
    ),  # built-in tests' loops, a Lua state's events
    ("engine/native_engine.h", "engine/strand.c", "engine/event_loop.c", "engine/arrivals.c"),  # strand, loops, rate
    ("engine/_native.c",),  # the module init: wiring only
]
C_RANK = {name: i for i, names in enumerate(C_LAYERS) for name in names}
C_INIT = "engine/_native.c"


def c_files() -> dict[str, str]:
    """Every C source and header of the package (path below pysysbench/ -> text without comments)."""
    out = {}
    for path in sorted([*PKG.rglob("*.c"), *PKG.rglob("*.h")]):
        text = re.sub(r"/\*.*?\*/", " ", path.read_text(), flags=re.S)
        out[path.relative_to(PKG).as_posix()] = re.sub(r"//[^\n]*", "", text)
    return out


def c_includes(name: str, text: str) -> set[str]:
    """The package's headers ``name`` includes (``#include "x"``: beside it first, then the
    layers' folders, which setup.py's include_dirs lists: each header's name is its own)."""
    out = set()
    for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, flags=re.M):
        beside = (PKG / name).parent / inc
        found = [beside] if beside.exists() else sorted(PKG.rglob(inc)) or [PKG / inc]
        out.add(found[0].resolve().relative_to(PKG).as_posix())
    return out


def c_declared(files: dict[str, str]) -> set[str]:
    """The names the headers declare: functions and extern variables (function pointers too)."""
    out = set()
    for name, text in files.items():
        if name.endswith(".h"):
            text = re.sub(r"^\s*#[^\n]*(\\\n[^\n]*)*", "", text, flags=re.M)
            while (inner := re.sub(r"\{[^{}]*\}", " ", text)) != text:  # struct members, inline bodies
                text = inner
            text = re.sub(r"\btypedef\b[^;]*;", " ", text)
            out.update(re.findall(r"\b(\w+)\s*\((?!\s*\*)[^;{}]*\)\s*;", text))
            out.update(re.findall(r"\bextern\b[^;]*?\b(\w+)\s*;", text))
            out.update(re.findall(r"\(\s*\*\s*(\w+)\s*\)\s*\(", text))
    return out


def c_definer(files: dict[str, str]) -> dict[str, str]:
    """Each declared name -> the C file defining it (house style: a function's name opens its line,
    a variable's definition is a line of its own at file scope without ``extern``)."""
    out = {}
    for sym in c_declared(files):
        pat = (
            rf"^(?:{sym}\(|(?!extern\b|static\b|typedef\b|return\b)\w[\w \t*]*(?:\b{sym}|\(\s*\*\s*{sym}\s*\))"
            rf"\s*(?:\([^;{{]*\))?\s*(?:=|;|\[))"
        )
        for name, text in files.items():
            if name.endswith(".c") and re.search(pat, text, flags=re.M):
                out[sym] = name
    return out


def c_uses() -> dict[str, set[str]]:
    """C file -> the other C files whose symbols it uses (calls, reads or assigns)."""
    files = c_files()
    definer = c_definer(files)
    return {
        name: {d for sym, d in definer.items() if d != name and re.search(rf"\b{sym}\b", text)}
        for name, text in files.items()
        if name.endswith(".c")
    }


def test_every_c_file_has_a_c_layer():
    missing = sorted(set(c_files()) - set(C_RANK))
    assert not missing, f"C files outside every C layer (add them to C_LAYERS): {missing}"
    headers = [[n for n in names if n.endswith(".h")] for names in C_LAYERS]
    assert all(len(h) <= 1 for h in headers), f"one header per C layer: {headers}"


def test_c_includes_point_down():
    bad = []
    for name, text in c_files().items():
        for inc in sorted(c_includes(name, text)):
            if not inc.endswith(".h") or C_RANK.get(inc, len(C_LAYERS)) > C_RANK.get(name, -1):
                bad.append(f"{name} includes {inc}")
    assert not bad, f"C includes that go up a C layer (or name a C file, or a header in no layer): {bad}"


def test_c_calls_point_down():
    up = sorted(
        f"{name} uses {d}"
        for name, ds in c_uses().items()
        for d in ds
        if C_RANK.get(d, len(C_LAYERS)) > C_RANK.get(name, -1)
    )
    assert not up, f"C files using a symbol of a file in a higher C layer: {up}"


def test_no_circle_among_c_files():
    assert (cycle := find_cycle(c_uses())) is None, "circle among C files: " + " -> ".join(cycle)


def test_the_module_init_only_wires():
    """_native.c defines PyInit and nothing another file uses: helpers live below their users."""
    text = c_files()[C_INIT]
    defs = re.findall(r"^(\w+)\(", text, flags=re.M)
    assert defs == ["PyInit__native"], f"{C_INIT} defines {defs}: move them to the layer of their users"
    assert C_INIT not in {d for ds in c_uses().values() for d in ds}


def test_the_root_holds_three_modules():
    """The layout is the architecture: the package root holds __init__, __main__ and the version;
    every other module lives in its layer's folder (core/, runtime/, stats/, ...)."""
    root = {p.name for p in PKG.iterdir() if p.suffix in (".py", ".c", ".h")}
    assert root <= ROOT_MODULES, (
        f"modules at the package root (move them to their layer's folder): {sorted(root - ROOT_MODULES)}"
    )


def test_each_layer_folder_says_what_it_is():
    """Each folder of the package opens with a docstring saying what it holds."""
    bare = [p.parent.name for p in PKG.glob("*/__init__.py") if not ast.get_docstring(ast.parse(p.read_text()))]
    assert not bare, f"package folders without a docstring in __init__.py: {bare}"
