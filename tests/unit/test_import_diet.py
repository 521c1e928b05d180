"""What a plain ``run`` imports (issue 21: start-up CPU).  Every module an interpreter
imports costs CPU in each run's start-up (bench/journal/2026-12-01.md "Start-up"); the ones
below serve other commands, other drivers or other options and must stay out of a
bundled test's ``run`` -- a lazy import somewhere below the CLI that turned eager again
shows up here, not only as a slower bench figure."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# the modules loaded at the end of the run, printed by an exit handler (the command's own
# end runs them); the run goes through ``python -m pysysbench`` as the bench runs it
PROBE = """
import atexit, runpy, sys
atexit.register(lambda: print("MODULES " + " ".join(sorted(sys.modules)), file=sys.stderr))
sys.argv = ["pysysbench", *sys.argv[1:]]
runpy.run_module("pysysbench", run_name="__main__", alter_sys=True)
"""

# never on a plain run: reports and campaigns (matplotlib, jinja-like rendering), Ray, the Lua
# engine and lupa, rich's progress display (prepare only), the sysbench 0.5 scripts, the
# result-file machinery, another driver's library, package metadata, multiprocessing (forked workers need only os.fork),
# shlex (config files only), pickle (the workers' channel uses the C pickler itself), a text codec other than
# UTF-8 (/proc/stat is read as bytes), hashlib (OpenSSL: the stock-script check uses _blake2)
NEVER = (
    "matplotlib",
    "ray",
    "lupa",
    "rich",
    "jsonschema",
    "numpy",
    "pysysbench.report",
    "pysysbench.campaign",
    "pysysbench.lua",
    "pysysbench.load.rows",
    "pysysbench.load.source",
    "pysysbench.output.load_progress",
    "pysysbench.workloads.legacy",
    "pysysbench.engine.raygroup",
    "pysysbench.engine.metrics",
    "pysysbench.engine.servercontext",
    "pysysbench.stats.steadiness",
    "asyncpg",
    "asyncmy",
    "sqlite3",
    "importlib.metadata",
    "json",
    "platform",
    "tempfile",
    "shutil",
    "datetime",
    "multiprocessing",
    "shlex",
    "pickle",
    "encodings.ascii",
    "hashlib",
)


def modules_of_run(*options: str, bare: bool = False) -> set[str]:
    """The modules of a run; ``bare``: without ``site`` (the import path given instead), as an
    installed package sees it -- this checkout's editable install adds an import finder to every
    interpreter's start, and what that finder imports would hide what the package imports."""
    cmd, env = [sys.executable, "-c", PROBE, *options], None
    if bare:
        import os
        import sysconfig

        cmd[1:1] = ["-S"]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), sysconfig.get_paths()["purelib"]])}
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=120, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    line = next(x for x in done.stderr.splitlines() if x.startswith("MODULES "))
    return set(line.split()[1:])


def loaded(modules: set[str], name: str) -> bool:
    return name in modules or any(m.startswith(name + ".") for m in modules)


# never on a plain run where the C extension is used: ctypes (6 M instructions) for glibc's
# mallopt, which memory.c calls then (ctypes is the fallback without the C)
NEVER_WITH_C = ("ctypes",)


def _c_used() -> bool:
    from pysysbench.runtime import native

    return native.ENABLED


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_plain_run_imports_only_what_it_uses(workers):
    mods = modules_of_run(
        "oltp_point_select",
        "--mysql-dry-run=on",
        "--threads=2",
        "--events=4",
        "--time=0",
        f"--workers={workers}",
        "run",
    )
    assert "pysysbench.engine.local" in mods  # the probe saw the run
    bad = sorted(n for n in NEVER + (NEVER_WITH_C if _c_used() else ()) if loaded(mods, n))
    assert not bad, f"a plain dry run imported {bad}"


# imported by nothing a plain run needs (pathlib: 17 M instructions with urllib.parse and ipaddress)
NEVER_BARE = ("pathlib", "urllib", "ipaddress")


def test_a_bare_run_imports_no_pathlib():
    mods = modules_of_run(
        "oltp_point_select", "--mysql-dry-run=on", "--threads=2", "--events=4", "--time=0", "run", bare=True
    )
    assert "pysysbench.engine.local" in mods and "site" not in mods
    bad = sorted(n for n in NEVER + NEVER_BARE if loaded(mods, n))
    assert not bad, f"a plain dry run imported {bad}"


def test_a_result_file_brings_its_machinery(tmp_path):
    """The other side: what the plain run leaves out is imported where it is used."""
    mods = modules_of_run(
        "oltp_point_select",
        "--mysql-dry-run=on",
        "--threads=1",
        "--events=2",
        "--time=0",
        f"--result-file={tmp_path / 'r.json'}",
        "run",
    )
    assert {"json", "platform", "tempfile", "pysysbench.stats.steadiness"} <= mods
    assert (tmp_path / "r.json").exists()


def test_asyncmy_starts_without_package_metadata():
    """asyncmy's version module reads its version through importlib.metadata (66 M
    instructions); the MySQL driver makes that module from the METADATA file instead:
    the same string, and importlib.metadata is never imported."""
    code = (
        "import sys\n"
        "from pysysbench.drivers.mysql.session import asyncmy_connection_class\n"
        "asyncmy_connection_class()\n"
        "import asyncmy, asyncmy.version\n"
        "from asyncmy.version import __VERSION__\n"
        "print('importlib.metadata' in sys.modules, asyncmy.version.__version__ == __VERSION__)\n"
        "import importlib.metadata\n"
        "print(__VERSION__ == importlib.metadata.version('asyncmy'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True).stdout
    assert out.split() == ["False", "True", "True"]


# what a plain run compiles at run time: regular expressions (0.8 M instructions each) and
# dataclass methods (one exec each, 1-6 M a record: pysysbench/core/record.py compiles none)
COMPILES = """
import atexit, dataclasses, os, re._compiler, runpy, sys
package = os.path.dirname(os.path.abspath(sys.argv[1]))
made = []
def caller():
    f = sys._getframe(2)
    while f is not None and (os.sep + "re" + os.sep in f.f_code.co_filename
                             or f.f_code.co_filename == dataclasses.__file__):
        f = f.f_back
    return f"{f.f_code.co_filename}:{f.f_lineno}" if f is not None else "?"
def wrap(module, name):
    real = getattr(module, name)
    def counting(first, *args, **kwargs):
        where = caller()
        if where.startswith(package):
            made.append(f"{name} {first!r} at {where}")
        return real(first, *args, **kwargs)
    setattr(module, name, counting)
wrap(re._compiler, "compile")
if hasattr(dataclasses, "_create_fn"):
    wrap(dataclasses, "_create_fn")
atexit.register(lambda: print("COMPILED " + repr(made), file=sys.stderr))
sys.argv = ["pysysbench", *sys.argv[2:]]
runpy.run_module("pysysbench", run_name="__main__", alter_sys=True)
"""


def test_a_plain_run_compiles_nothing_of_its_own():
    """No regular expression compiled by pysysbench's modules and no dataclass method made for a
    record while a plain run imports and runs (the standard library's own are not counted)."""
    import pysysbench

    done = subprocess.run(
        [
            sys.executable,
            "-c",
            COMPILES,
            pysysbench.__file__,
            "oltp_point_select",
            "--mysql-dry-run=on",
            "--threads=2",
            "--events=4",
            "--time=0",
            "run",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    line = next(x for x in done.stderr.splitlines() if x.startswith("COMPILED "))
    assert line == "COMPILED []", line


def test_every_record_of_a_plain_run_has_a_docstring():
    """A record without one gets the dataclass's text, made from ``inspect.signature`` (0.1-0.2 M
    instructions a class, at import): every ``@record`` class a plain run imports says what it is."""
    import ast
    import importlib.util

    mods = modules_of_run("oltp_point_select", "--mysql-dry-run=on", "--threads=2", "--events=4", "--time=0", "run")
    missing = []
    for name in sorted(m for m in mods if m.startswith("pysysbench")):
        spec = importlib.util.find_spec(name)
        if spec is None or not (spec.origin or "").endswith(".py"):
            continue
        path = Path(spec.origin)
        for node in ast.walk(ast.parse(path.read_text())):
            decorators = [d.func if isinstance(d, ast.Call) else d for d in getattr(node, "decorator_list", ())]
            if (
                isinstance(node, ast.ClassDef)
                and any(isinstance(d, ast.Name) and d.id == "record" for d in decorators)
                and ast.get_docstring(node) is None
            ):
                missing.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name}")
    assert not missing, missing
