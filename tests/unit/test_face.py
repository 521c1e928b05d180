"""The two faces of the command line (issue 18): invoked as ``sysbench`` everything
is sysbench 1.0.20's -- compared byte for byte with /usr/bin/sysbench where it is
installed --; the default face keeps pysysbench's name in sysbench's line shapes.
And ``--verbosity`` at every level, in both faces."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pysysbench.output import face
from pysysbench.output.registry import FORMATS, report_for

ROOT = Path(__file__).resolve().parents[2]
REAL = shutil.which("sysbench", path="/usr/bin:/usr/local/bin")
needs_real = pytest.mark.skipif(REAL is None, reason="sysbench 1.0.20 is not installed: nothing to compare with")
REAL_HEADER = re.compile(r"^sysbench 1\.0\.20 \(using (bundled|system) LuaJIT [\w.-]+\)$")


@pytest.fixture(scope="module")
def shim(tmp_path_factory) -> Path:
    """A 'sysbench' that is pysysbench: a symbolic link to a script, as the README installs it."""
    d = tmp_path_factory.mktemp("shim")
    script = d / "pysysbench"
    script.write_text(
        f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(ROOT)!r})\n"
        "from pysysbench.cli.main import main\nif __name__ == '__main__':\n    sys.exit(main())\n"
    )
    script.chmod(0o755)
    (d / "sysbench").symlink_to(script)
    return d


def run(
    program: str | Path, *args: str, env: dict[str, str] | None = None, stdin: str | None = ""
) -> subprocess.CompletedProcess:
    e = dict(os.environ, PYTHONPATH=str(ROOT))
    e.pop(face.ENV, None)
    e.update(env or {})
    return subprocess.run([str(program), *args], capture_output=True, text=True, env=e, input=stdin, timeout=120)


def as_sysbench(shim: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return run(shim / "sysbench", *args, **kw)


def as_pysysbench(shim: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return run(shim / "pysysbench", *args, **kw)


# --- selection -----------------------------------------------------------------------


def test_the_face_follows_the_program_name_and_the_environment():
    assert face.select("/usr/local/bin/sysbench", {}).strict
    assert not face.select("/venv/bin/pysysbench", {}).strict
    assert face.select("python", {face.ENV: "sysbench"}).strict
    assert not face.select("/usr/bin/sysbench", {face.ENV: "pysysbench"}).strict


# --- the sysbench face, against the real binary -----------------------------------------


@needs_real
@pytest.mark.parametrize("args", [["--help"], ["--help", "foo"], ["--version"], ["--nosuch", "--help"]], ids=" ".join)
def test_help_and_version_are_byte_identical(shim, args):
    real, ours = run(REAL, *args), as_sysbench(shim, *args)
    assert (ours.stdout, ours.stderr, ours.returncode) == (real.stdout, real.stderr, real.returncode)


@needs_real
@pytest.mark.parametrize(
    "test",
    [
        "oltp_read_write",
        "oltp_point_select",
        "oltp_insert",
        "select_random_ranges",
        "bulk_insert",
        "/usr/share/sysbench/oltp_read_write.lua",
    ],
)
def test_test_help_is_byte_identical_after_the_first_line(shim, test):
    real, ours = run(REAL, test, "help"), as_sysbench(shim, test, "help")
    assert REAL_HEADER.match(ours.stdout.split("\n", 1)[0]), ours.stdout
    assert ours.stdout.split("\n", 1)[1] == real.stdout.split("\n", 1)[1]
    assert (ours.stderr, ours.returncode) == (real.stderr, real.returncode)


@needs_real
@pytest.mark.parametrize("args", [["cleanup"], ["foo", "bar"], ["oltp_read_write", "nosuchcommand"]], ids=" ".join)
def test_error_texts_and_exit_codes_are_sysbench_s(shim, args):
    real, ours = run(REAL, *args), as_sysbench(shim, *args)
    assert ours.stdout.split("\n", 1)[1:] == real.stdout.split("\n", 1)[1:]
    assert (ours.stderr, ours.returncode) == (real.stderr, real.returncode)


def test_the_sysbench_face_defaults_to_mysql(shim):
    out = as_sysbench(shim, "--help").stdout
    assert (
        "  --db-driver=STRING  specifies database driver to use ('help' to get list of available drivers) "
        "[mysql]" in out
    )
    assert "sqlite" not in out and "prewarm" not in out and "--warmup-time" not in out
    # the extras keep working, unlisted: --warmup-time is accepted
    proc = as_sysbench(
        shim, "oltp_point_select", "--mysql-dry-run", "--events=10", "--warmup-time=0", "--verbosity=0", "run"
    )
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout + proc.stderr


def test_first_lines_have_sysbench_s_six_tokens(shim):
    ours = as_sysbench(shim, "oltp_read_write", "help").stdout.split("\n", 1)[0]
    mine = as_pysysbench(shim, "oltp_read_write", "help").stdout.split("\n", 1)[0]
    assert REAL_HEADER.match(ours), ours
    assert len(ours.split()) == len(mine.split()) == 6, (ours, mine)
    assert mine.split()[:2] == ["pysysbench", as_pysysbench(shim, "--version").stdout.split()[1]]
    assert as_sysbench(shim, "--version").stdout == "sysbench 1.0.20\n"


# --- the default face ----------------------------------------------------------------


def test_default_help_lists_pysysbench_commands_and_whole_sentences(shim):
    out = as_pysysbench(shim, "--help").stdout
    for name in ("campaign", "report", "compare", "export", "check"):
        assert re.search(rf"^  {name} - ", out, re.M), name
    tests = out.split("Built-in tests:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert tests and all(line.rstrip().endswith((".", ")")) for line in tests), tests


# --- --verbosity ---------------------------------------------------------------------


RUN = ["oltp_point_select", "--mysql-dry-run", "--events=20", "--threads=2", "run"]


@pytest.mark.parametrize("who", ["sysbench", "pysysbench"])
def test_verbosity_levels(shim, who):
    program = shim / who
    quiet = run(program, *RUN, "--verbosity=0")
    assert quiet.returncode == 0 and quiet.stdout == "", quiet.stdout
    assert run(program, *RUN, "--verbosity=2").stdout == ""
    normal = run(program, *RUN).stdout
    assert normal.startswith(f"{who} ") and "SQL statistics:" in normal
    assert "Event limit exceeded" not in normal and "DEBUG:" not in normal
    info = run(program, *RUN, "--verbosity=4").stdout
    assert "Event limit exceeded, exiting...\n(last message repeated 1 times)\nDone.\n\n" in info
    assert "DEBUG:" not in info
    debug = run(program, *RUN, "--verbosity=5").stdout
    assert "DEBUG: Worker thread (#1) initialized\nThreads started!" in debug


def test_verbosity_keeps_the_workload_s_own_messages(shim, tmp_path):
    # sysbench's scripts print() 'Creating table' & co.: shown at --verbosity=1, the logger's lines not
    db = f"--sqlite-db={tmp_path / 'v.db'}"
    proc = as_pysysbench(shim, "oltp_read_write", db, "--table-size=10", "--threads=2", "--verbosity=1", "prepare")
    assert proc.stdout.startswith("Creating table 'sbtest1'...\n"), proc.stdout
    assert "Initializing worker threads" not in proc.stdout and "pysysbench" not in proc.stdout


# --- the output registry ---------------------------------------------------------------


def test_output_formats_are_registered():
    assert {"1.0", "0.5", "json"} <= set(FORMATS)

    class V(dict):
        def get(self, key, default=None):
            return super().get(key, default)

    assert type(report_for(V(), None)).__name__ == "Text10"
    assert type(report_for(V(output_format="json"), None)).__name__ == "Json"
