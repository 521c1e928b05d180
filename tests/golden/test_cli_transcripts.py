"""Golden CLI transcripts with number placeholders (SQLite, subprocess, temp dir).

The CLI's stdout is compared line by line with a template.  Before comparing, the
ACTUAL output is normalised by :func:`normalise`:

* every number ``\\d+(\\.\\d+)?`` becomes ``<N>`` -- except digits that are part of an
  identifier (``sbtest1``, ``k_1``), which stay literal so table names are checked;
* where sysbench pads a number to a fixed width, the number TOGETHER with its padding
  becomes one width-tagged placeholder, after checking that the padding is exactly
  what the C format produces:
    ``%-6llu``  (SQL statistics rate rows)  -> ``<N-6>``   (left-justified, 6 columns)
    ``%39.2f``  (Latency min/avg/max/sum)   -> ``<N+39>``  (right-justified, 39 columns)
    ``%3d`` / ``%27.2f`` (percentile row)   -> ``<N+3>`` / ``<N+27>``
    ``%12.3f``  (histogram value)           -> ``<N+12>``
    ``%-40s``   (histogram bar)             -> ``<BAR>``
  A field whose padding is wrong becomes ``<MISALIGNED ...>`` and fails the comparison.
  The fixed label columns (``    transactions:                        ``) stay literal in
  the template, so their alignment is checked character for character.

Templates are written in the normalised form.  Two directives: a block between
``{repeat A-B}`` and ``{end}`` must occur A..B times in a row (``B`` may be ``*``), and
a line ``<SP>`` stands for a line holding one space (the histogram's last line).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

HEADER_RE = re.compile(r"^pysysbench \S+ \(using system CPython \d+\.\d+\.\d+\)$")  # sysbench's six tokens
_VENV_SCRIPT = Path(sys.executable).with_name("pysysbench")
CLI = [str(_VENV_SCRIPT)] if _VENV_SCRIPT.exists() else [sys.executable, "-m", "pysysbench"]


# =========================================================================== helpers


def without_sqlite_note(stderr: str) -> str:
    """stderr less the line a run on the default SQLite file prints (no --db-driver given)."""
    return "".join(line for line in stderr.splitlines(True) if not line.startswith("NOTE: no --db-driver given"))


def run_cli(args: list[str], cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSYSBENCH_")}
    return subprocess.run(CLI + list(args), cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


_NUMBER = re.compile(r"(?<![A-Za-z_\d])\d+(?:\.\d+)?")


def _generic(text: str) -> str:
    return _NUMBER.sub("<N>", text)


def _field(text: str, width: int, kind: str) -> str:
    """Validate one padded field and return its placeholder."""
    if kind == "BAR":
        stars = text.rstrip(" ")
        ok = set(stars) <= {"*"} and text == stars.ljust(width)
        return "<BAR>" if ok else f"<MISALIGNED {text!r} (bar of {width})>"
    num = text.strip(" ")
    expected = num.ljust(width) if kind == "L" else num.rjust(width)
    ok = text == expected and _NUMBER.fullmatch(num) is not None
    tag = f"<N-{width}>" if kind == "L" else f"<N+{width}>"
    return tag if ok else f"<MISALIGNED {text!r} (width {width})>"


# (line pattern, {group number: (width, kind)}); other groups are normalised generically
_PADDED = [
    (re.compile(r"^(    (?:transactions|queries|ignored errors|reconnects): *)(\d+ *)( \(.*)$"), {2: (6, "L")}),
    (re.compile(r"^(         (?:min|avg|max|sum): )( *\d+\.\d+)$"), {2: (39, "R")}),
    (re.compile(r"^(        )( *\d+)(th percentile: )( *\d+\.\d+)$"), {2: (3, "R"), 4: (27, "R")}),
    (re.compile(r"^( *\d+\.\d{3})( \|)(\** *)( \d+)$"), {1: (12, "R"), 3: (40, "BAR")}),
]


def normalise(line: str) -> str:
    for pattern, fields in _PADDED:
        m = pattern.match(line)
        if m:
            parts = []
            for g in range(1, pattern.groups + 1):
                text = m.group(g)
                parts.append(_field(text, *fields[g]) if g in fields else _generic(text))
            return "".join(parts)
    return _generic(line)


def parse_template(text: str) -> list:
    """A template is a list of lines and (block, min, max) repeats."""
    items: list = []
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the template's own final newline
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.fullmatch(r"\{repeat (\d+)-(\d+|\*)\}", line)
        if m:
            end = lines.index("{end}", i)
            block = [" " if x == "<SP>" else x for x in lines[i + 1 : end]]
            hi = 10**9 if m.group(2) == "*" else int(m.group(2))
            items.append((block, int(m.group(1)), hi))
            i = end + 1
            continue
        items.append(" " if line == "<SP>" else line)
        i += 1
    return items


def assert_matches(actual: list[str], template: str, raw: str = "") -> None:
    norm = [normalise(x) for x in actual]
    i = 0

    def fail(why: str) -> None:
        shown = "\n".join(f"{n:3d}| {a}" for n, a in enumerate(norm))
        pytest.fail(f"{why}\n--- normalised actual output ---\n{shown}\n--- raw ---\n{raw}")

    for item in parse_template(template):
        if isinstance(item, str):
            if i >= len(norm):
                fail(f"output ended; expected line {item!r}")
            if norm[i] != item:
                fail(f"line {i}: expected {item!r}\n         got      {norm[i]!r}")
            i += 1
        else:
            block, lo, hi = item
            n = 0
            while n < hi and norm[i : i + len(block)] == block:
                i += len(block)
                n += 1
            if n < lo:
                fail(f"line {i}: expected at least {lo} repetition(s) of {block!r}, got {n}")
    if i != len(norm):
        fail(f"unexpected extra output from line {i}: {norm[i]!r}")


def output_lines(proc: subprocess.CompletedProcess, header: bool = True) -> list[str]:
    out = proc.stdout
    assert out.endswith("\n"), repr(out[-200:])
    lines = out[:-1].split("\n")
    if header:
        assert HEADER_RE.match(lines[0]), lines[0]
        assert lines[1] == "", lines[:3]
        lines = lines[2:]
    return lines


def assert_transcript(proc: subprocess.CompletedProcess, template: str, *, code: int = 0) -> list[str]:
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert without_sqlite_note(proc.stderr) == "", proc.stderr
    lines = output_lines(proc)
    assert_matches(lines, template, proc.stdout)
    return lines


# --------------------------------------------------------------------------- self-test of the helper


def test_normalise_helper():
    assert (
        normalise("    transactions:                        5310   (5309.08 per sec.)")
        == "    transactions:                        <N-6> (<N> per sec.)"
    )
    assert (
        normalise("    queries:                             106200 (106181.51 per sec.)")
        == "    queries:                             <N-6> (<N> per sec.)"
    )
    assert (
        normalise("    queries:                             1234567 (1.00 per sec.)")
        == "    queries:                             <N-6> (<N> per sec.)"
    )
    # wrong padding after the number is caught
    assert "MISALIGNED" in normalise("    transactions:                        5310    (5309.08 per sec.)")
    assert "MISALIGNED" in normalise("    transactions:                        5310 (5309.08 per sec.)")
    # the label column is kept literally, so a shifted value column shows in the comparison
    assert normalise("    transactions:                       5310   (1.00 per sec.)") != normalise(
        "    transactions:                        5310   (1.00 per sec.)"
    )
    assert normalise("         min:                                    0.68") == "         min: <N+39>"
    assert normalise("         sum:                                 9985.72") == "         sum: <N+39>"
    assert "MISALIGNED" not in normalise("         sum: 12345678901234567890123456789012345678901.00")
    assert normalise("         max:                                   0.68") != "         max: <N+39>"
    assert normalise("         95th percentile:                        3.30") == "        <N+3>th percentile: <N+27>"
    assert normalise("       0.741 |**                                       12") == "<N+12> |<BAR> <N>"
    assert normalise("       3.187 |**************************************** 6") == "<N+12> |<BAR> <N>"
    assert "MISALIGNED" in normalise("       0.741 |**                                      12")
    assert normalise(
        "[ 2s ] thds: 2 tps: 1128.07 qps: 22662.37 (r/w/o: 15878.95/4521.28/2262.14) "
        "lat (ms,95%): 2.07 err/s: 6.00 reconn/s: 0.00"
    ) == ("[ <N>s ] thds: <N> tps: <N> qps: <N> (r/w/o: <N>/<N>/<N>) lat (ms,<N>%): <N> err/s: <N> reconn/s: <N>")
    assert normalise("Inserting 1000 records into 'sbtest12'") == "Inserting <N> records into 'sbtest12'"
    assert (
        normalise("    events (avg/stddev):           2827.5000/74.50") == "    events (avg/stddev):           <N>/<N>"
    )
    assert normalise("    execution time (avg/stddev):   -nan/-nan") != "    execution time (avg/stddev):   <N>/<N>"


def test_template_repeat_directive():
    tpl = "a\n{repeat 1-2}\nb <N>\nc\n{end}\nd\n"
    assert_matches(["a", "b 1", "c", "d"], tpl)
    assert_matches(["a", "b 1", "c", "b 2", "c", "d"], tpl)
    with pytest.raises(pytest.fail.Exception):
        assert_matches(["a", "d"], tpl)
    with pytest.raises(pytest.fail.Exception):
        assert_matches(["a", "b 1", "c", "b 2", "c", "b 3", "c", "d"], tpl)


# =========================================================================== templates

SUMMARY = """\
SQL statistics:
    queries performed:
        read:                            <N>
        write:                           <N>
        other:                           <N>
        total:                           <N>
    transactions:                        <N-6> (<N> per sec.)
    queries:                             <N-6> (<N> per sec.)
    ignored errors:                      <N-6> (<N> per sec.)
    reconnects:                          <N-6> (<N> per sec.)

General statistics:
    total time:                          <N>s
    total number of events:              <N>

Latency (ms):
         min: <N+39>
         avg: <N+39>
         max: <N+39>
        <N+3>th percentile: <N+27>
         sum: <N+39>

Threads fairness:
    events (avg/stddev):           <N>/<N>
    execution time (avg/stddev):   <N>/<N>

"""

STARTED = """\


Initializing worker threads...

Threads started!

"""

# pysysbench's own advisory (not in sysbench): printed before the report when the client
# process(es) were nearly saturated -- with the in-process SQLite driver that is common.
CLIENT_WARNING = (
    "{repeat 0-1}\nWARNING: the client kept <N>% of its <N> worker process(es) busy: it may be "
    "the bottleneck (add --workers or client machines)\n{end}\n"
)

INTERMEDIATE = "[ <N>s ] thds: <N> tps: <N> qps: <N> (r/w/o: <N>/<N>/<N>) lat (ms,<N>%): <N> err/s: <N> reconn/s: <N>"

PREPARE_LINES = [
    "Creating table 'sbtest1'...",
    "Inserting <N> records into 'sbtest1'",
    "Creating a secondary index on 'sbtest1'...",
    "Creating table 'sbtest2'...",
    "Inserting <N> records into 'sbtest2'",
    "Creating a secondary index on 'sbtest2'...",
]

DATA = ["oltp_read_write", "--tables=2", "--table-size=1000"]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> Path:
    """A directory whose sbtest.db holds sbtest1..2 with 1000 rows each."""
    d = tmp_path_factory.mktemp("prepared")
    proc = run_cli([*DATA, "prepare"], d)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return d


# =========================================================================== prepare / cleanup


def test_prepare_single_thread(tmp_path):
    proc = run_cli([*DATA, "--threads=1", "prepare"], tmp_path)
    assert_transcript(proc, "\n".join(PREPARE_LINES) + "\n")
    assert "Inserting 1000 records into 'sbtest2'" in proc.stdout


def test_prepare_two_threads(tmp_path):
    proc = run_cli([*DATA, "--threads=2", "prepare"], tmp_path)
    assert proc.returncode == 0 and proc.stderr == "" and "Traceback" not in proc.stdout
    lines = output_lines(proc)
    assert lines[:2] == ["Initializing worker threads...", ""]
    body = [normalise(x) for x in lines[2:]]
    # lines of the two tables may interleave: compare as a multiset ...
    assert Counter(body) == Counter(PREPARE_LINES)
    # ... but each table's own steps stay in order
    for n in (1, 2):
        mine = [x for x in body if f"'sbtest{n}'" in x]
        assert mine == PREPARE_LINES[3 * (n - 1) : 3 * n]


def test_cleanup(prepared, tmp_path):
    run_cli([*DATA, "prepare"], tmp_path)
    proc = run_cli([*DATA, "cleanup"], tmp_path)
    assert_transcript(proc, "Dropping table 'sbtest1'...\nDropping table 'sbtest2'...\n")
    # again: DROP TABLE IF EXISTS, same transcript
    proc = run_cli([*DATA, "cleanup"], tmp_path)
    assert_transcript(proc, "Dropping table 'sbtest1'...\nDropping table 'sbtest2'...\n")


def test_deprecated_alias_warning_precedes_header(tmp_path):
    proc = run_cli(["--num-threads=2", *DATA, "prepare"], tmp_path)
    assert proc.returncode == 0 and proc.stderr == ""
    first, rest = proc.stdout.split("\n", 1)
    assert first == "WARNING: --num-threads is deprecated, use --threads instead"
    lines = output_lines(subprocess.CompletedProcess(proc.args, 0, rest, ""))
    assert lines[:2] == ["Initializing worker threads...", ""]  # --num-threads=2 took effect


def test_test_option_warns_on_stderr(tmp_path):
    proc = run_cli(["--test=oltp_read_write", "--tables=2", "--table-size=1000", "prepare"], tmp_path)
    assert proc.returncode == 0
    assert proc.stderr == (
        "WARNING: the --test option is deprecated. You can pass a script name or path on "
        "the command line without any options.\n"
    )
    assert_matches(output_lines(proc), "\n".join(PREPARE_LINES) + "\n")


# =========================================================================== run


def banner(*extra: str) -> str:
    return (
        "\n".join(
            [
                "Running the test with following options:",
                "Number of threads: <N>",
                *extra,
                "Initializing random number generator from current time",
            ]
        )
        + "\n"
    )


def test_run_plain(prepared):
    proc = run_cli([*DATA, "--time=1", "run"], prepared)
    assert_transcript(proc, banner() + STARTED + CLIENT_WARNING + SUMMARY)
    assert "Number of threads: 1\n" in proc.stdout


def test_run_two_threads_with_seed(prepared):
    proc = run_cli([*DATA, "--threads=2", "--events=100", "--time=0", "--rand-seed=7", "run"], prepared)
    tpl = (
        "Running the test with following options:\nNumber of threads: <N>\n"
        "Initializing random number generator from seed (<N>).\n" + STARTED + CLIENT_WARNING + SUMMARY
    )
    assert_transcript(proc, tpl)
    assert "Initializing random number generator from seed (7)." in proc.stdout
    assert "    total number of events:              100\n" in proc.stdout


def test_run_report_interval(prepared):
    proc = run_cli([*DATA, "--report-interval=1", "--time=2", "run"], prepared)
    tpl = (
        banner("Report intermediate results every <N> second(s)")
        + STARTED
        + "{repeat 1-2}\n"
        + INTERMEDIATE
        + "\n{end}\n"
        + CLIENT_WARNING
        + SUMMARY
    )
    assert_transcript(proc, tpl)
    assert "Report intermediate results every 1 second(s)\n" in proc.stdout
    assert "[ 1s ] thds: 1 tps: " in proc.stdout


def test_run_histogram(prepared):
    proc = run_cli([*DATA, "--histogram=on", "--events=50", "--time=0", "run"], prepared)
    tpl = (
        banner()
        + STARTED
        + CLIENT_WARNING
        + "Latency histogram (values are in milliseconds)\n"
        + "       value  ------------- distribution ------------- count\n"
        + "{repeat 1-50}\n<N+12> |<BAR> <N>\n{end}\n<SP>\n"
        + SUMMARY
    )
    lines = assert_transcript(proc, tpl)
    rows = [x for x in lines if re.match(r"^ *\d+\.\d{3} \|", x)]
    counts = [int(x.rsplit(" ", 1)[1]) for x in rows]
    assert sum(counts) == 50
    assert max(x.count("*") for x in rows) == 40  # the fullest bucket gets 40 stars
    values = [float(x.split("|")[0]) for x in rows]
    assert values == sorted(values) and len(set(values)) == len(values)
    assert "    transactions:                        50     (" in proc.stdout


def test_run_rate_mode_queue_line(prepared):
    proc = run_cli([*DATA, "--rate=50", "--time=2", "--report-interval=1", "run"], prepared)
    tpl = (
        banner("Target transaction rate: <N>/sec", "Report intermediate results every <N> second(s)")
        + STARTED
        + "{repeat 1-2}\n"
        + INTERMEDIATE
        + "\n[ <N>s ] queue length: <N>, concurrency: <N>\n{end}\n"
        + CLIENT_WARNING
        + SUMMARY
    )
    assert_transcript(proc, tpl)
    assert "Target transaction rate: 50/sec\n" in proc.stdout
    assert "[ 1s ] queue length: " in proc.stdout


def test_run_percentile_disabled(prepared):
    proc = run_cli([*DATA, "--percentile=0", "--events=50", "--time=0", "run"], prepared)
    summary = SUMMARY.replace(
        "        <N+3>th percentile: <N+27>\n", "         percentile stats:               disabled\n"
    )
    assert summary != SUMMARY
    assert_transcript(proc, banner() + STARTED + CLIENT_WARNING + summary)
    assert "\n         percentile stats:               disabled\n" in proc.stdout


# =========================================================================== help / version

# Appendix B.2, plus pysysbench's two extra (sysbench 1.1) options, sorted by name
RW_HELP_OPTIONS = """\
oltp_read_write options:
  --auto_inc[=on|off]           Use AUTO_INCREMENT column as Primary Key (for MySQL), or its alternatives in other DBMS. When disabled, use client-generated IDs [on]
  --create_secondary[=on|off]   Create a secondary index in addition to the PRIMARY KEY [on]
  --create_table_options=STRING Extra CREATE TABLE options (sysbench 1.1) []
  --delete_inserts=N            Number of DELETE/INSERT combinations per transaction [1]
  --distinct_ranges=N           Number of SELECT DISTINCT queries per transaction [1]
  --index_updates=N             Number of UPDATE index queries per transaction [1]
  --mysql_storage_engine=STRING Storage engine, if MySQL is used [innodb]
  --non_index_updates=N         Number of UPDATE non-index queries per transaction [1]
  --order_ranges=N              Number of SELECT ORDER BY queries per transaction [1]
  --pgsql_variant=STRING        Use this PostgreSQL variant when running with the PostgreSQL driver. The only currently supported variant is 'redshift'. When enabled, create_secondary is automatically disabled, and delete_inserts is set to 0
  --point_selects=N             Number of point SELECT queries per transaction [10]
  --range_selects[=on|off]      Enable/disable all range SELECT queries [on]
  --range_size=N                Range size for range SELECT queries [100]
  --reconnect=N                 Reconnect after every N events. The default (0) is to not reconnect (sysbench 1.1) [0]
  --secondary[=on|off]          Use a secondary index in place of the PRIMARY KEY [off]
  --simple_ranges=N             Number of simple range SELECT queries per transaction [1]
  --skip_trx[=on|off]           Don't start explicit transactions and execute all queries in the AUTOCOMMIT mode [off]
  --sum_ranges=N                Number of SELECT SUM() queries per transaction [1]
  --table_size=N                Number of rows per table [10000]
  --tables=N                    Number of tables [1]

"""

# the verbatim lines of Appendix B.2
B2_LINES = [x for x in RW_HELP_OPTIONS.splitlines() if x.startswith("  --") and "(sysbench 1.1)" not in x]


def test_workload_help(tmp_path):
    proc = run_cli(["oltp_read_write", "help"], tmp_path)
    assert proc.returncode == 0 and proc.stderr == "" and "Traceback" not in proc.stdout
    lines = output_lines(proc)
    block = "\n".join(lines[: len(RW_HELP_OPTIONS.splitlines())]) + "\n"
    assert block == RW_HELP_OPTIONS
    names = [x.split()[0] for x in lines if x.startswith("  --")]
    assert names == sorted(names)
    for b2 in B2_LINES:
        assert b2 in lines
    # anything after the sysbench-format block is free text ending with a blank line
    assert lines[-1] == ""
    assert not os.path.exists(tmp_path / "sbtest.db")  # help touches no database


def _check_help_layout(lines: list[str]) -> None:
    """Appendix B layout rule: within a group the description column is
    (longest '--name<format>' + 1) after the two-space indent."""
    groups: list[list[str]] = [[]]
    for line in lines:
        if line.startswith("  --"):
            groups[-1].append(line)
        elif groups[-1]:
            groups.append([])
    for group in (g for g in groups if g):
        lefts = [x.split(" ", 3)[2] for x in group]  # "--name<format>"
        col = 2 + max(len(s) for s in lefts) + 1
        for line, left in zip(group, lefts):
            assert line[:col] == f"  {left}".ljust(col), line
            assert line[col] != " ", line


def test_general_help(tmp_path):
    proc = run_cli(["--help"], tmp_path)
    assert proc.returncode == 0 and proc.stderr == "" and "Traceback" not in proc.stdout
    lines = output_lines(proc, header=False)
    assert lines[:3] == ["Usage:", "  pysysbench [options]... [testname] [command]", ""]
    titles = [x for x in lines if x.endswith(":") and not x.startswith(" ")]
    assert titles[:8] == [
        "Usage:",
        "General options:",
        "Pseudo-Random Numbers Generator options:",
        "Log options:",
        "General database options:",
        "Compiled-in database drivers:",
        "mysql options:",
        "pgsql options:",
    ]
    assert "sqlite options:" in titles
    # identical to Appendix B.1 (the widest entry of the group is the same)
    for b1 in [
        "  --threads=N                     number of threads to use [1]",
        "  --events=N                      limit for total number of events [0]",
        "  --time=N                        limit for total execution time in seconds [10]",
        "  --rate=N                        average transactions rate. 0 for unlimited rate [0]",
        "  --report-interval=N             periodically report intermediate statistics with a specified "
        "interval in seconds. 0 disables intermediate reports [0]",
        "  --validate[=on|off]             perform validation checks where possible [off]",
        "  --help[=on|off]                 print help and exit [off]",
        "  --version[=on|off]              print version and exit [off]",
        "  --config-file=FILENAME          File containing command line options",
        "  --tx-rate=N                     deprecated alias for --rate [0]",
        "  --max-requests=N                deprecated alias for --events [0]",
        "  --max-time=N                    deprecated alias for --time [0]",
        "  --num-threads=N                 deprecated alias for --threads [1]",
        "  --verbosity=N verbosity level {5 - debug, 0 - only critical messages} [3]",
        "  --histogram[=on|off] print latency histogram in report [off]",
        "  --mysql-user=STRING              MySQL user [sbtest]",
        "  --mysql-db=STRING                MySQL database name [sbtest]",
        '  --mysql-ignore-errors=[LIST,...] list of errors to ignore, or "all" [1213,1020,1205]',
    ]:
        assert b1 in lines
    # DOUBLE defaults print like sysbench (%g)
    assert any(x.startswith("  --rand-spec-pct=N ") and x.endswith(" [1]") for x in lines)
    assert any(x.startswith("  --rand-spec-res=N ") and x.endswith(" [75]") for x in lines)
    assert any(x.startswith("  --rand-pareto-h=N ") and x.endswith(" [0.2]") for x in lines)
    _check_help_layout(lines)
    assert "  sqlite - " in proc.stdout
    assert "  oltp_read_write - " in proc.stdout
    assert lines[-1] == "See 'pysysbench <testname> help' for a list of options for each test."
    assert "--test=" not in proc.stdout


def test_version(tmp_path):
    proc = run_cli(["--version"], tmp_path)
    assert proc.returncode == 0 and proc.stderr == ""
    assert re.fullmatch(r"pysysbench \S+\n", proc.stdout), proc.stdout
    # same version as the header line
    head = run_cli(["oltp_read_write", "help"], tmp_path).stdout.split("\n", 1)[0]
    assert head.startswith(proc.stdout.strip() + " (using system CPython ")


# =========================================================================== errors

# stdout lines that are not part of an error message
_CONTEXT = [
    HEADER_RE,
    re.compile(r"^$"),
    re.compile(r"^Running the test with following options:$"),
    re.compile(r"^Number of threads: \d+$"),
    re.compile(r"^Initializing random number generator from (current time|seed \(\d+\)\.)$"),
    re.compile(r"^Initializing worker threads\.\.\.$"),
]
_PROGRESS = [re.compile(r"^Creating table 'sbtest\d+'\.\.\.$")]


def error_message(proc: subprocess.CompletedProcess, *, code: int = 1, progress: bool = False) -> str:
    """Check an error transcript and return its one message line."""
    both = proc.stdout + proc.stderr
    assert "Traceback" not in both, both
    assert proc.returncode == code, both
    allowed = _CONTEXT + (_PROGRESS if progress else [])
    message = [x for x in proc.stdout.splitlines() if not any(p.match(x) for p in allowed)]
    message += [x for x in proc.stderr.splitlines() if x.strip()]
    assert len(message) == 1, both
    if proc.stdout:
        assert HEADER_RE.match(proc.stdout.splitlines()[0]) or proc.stdout.startswith(message[0]), both
    return message[0]


def test_error_unknown_option(tmp_path):
    proc = run_cli([*DATA, "--foo=1", "run"], tmp_path)
    msg = error_message(proc)
    assert proc.stdout == ""
    assert msg.startswith("invalid option: --foo")
    assert proc.stderr.startswith("invalid option: --foo")
    proc = run_cli(["--nosuch", "--help"], tmp_path)
    assert error_message(proc).startswith("invalid option: --nosuch")


@pytest.mark.parametrize(
    "arg,expected",
    [
        ("--threads=abc", "Invalid value for the 'threads' option: 'abc'"),
        ("--table-size=many", "Invalid value for the 'table_size' option: 'many'"),
        ("--histogram=maybe", "invalid option: --histogram=maybe"),
        ("--thread-stack-size=12Q", "Invalid value for the 'thread-stack-size' option: '12Q'"),
    ],
)
def test_error_bad_value(tmp_path, arg, expected):
    proc = run_cli([*DATA, arg, "run"], tmp_path)
    msg = error_message(proc)
    assert proc.stdout == ""
    assert msg.startswith(expected)
    assert proc.stderr.startswith(expected)


def test_error_unknown_command(tmp_path):
    proc = run_cli([*DATA, "foo"], tmp_path)
    assert error_message(proc) == "Unknown command: foo"
    assert proc.stderr == "Unknown command: foo\n"


def test_error_third_word(tmp_path):
    proc = run_cli([*DATA, "run", "now"], tmp_path)
    assert error_message(proc) == "Unrecognized command line argument: now"
    assert proc.stderr == "Unrecognized command line argument: now\n" and proc.stdout == ""


def test_error_missing_command(tmp_path):
    proc = run_cli(DATA, tmp_path)
    msg = error_message(proc)
    assert msg == "FATAL: Command is required. Supported commands: prepare, prewarm, run, cleanup, help, check"
    assert proc.stdout.endswith(msg + "\n")


def test_error_unknown_test(tmp_path):
    proc = run_cli(["nosuchtest", "run"], tmp_path)
    assert error_message(proc).startswith("FATAL: Cannot find benchmark 'nosuchtest'")


def test_error_oltp_common_run(tmp_path):
    proc = run_cli(["oltp_common", "run"], tmp_path)
    msg = error_message(proc)
    assert msg.startswith("FATAL: 'oltp_common' test does not implement the 'run' command")


def test_error_run_before_prepare(tmp_path):
    proc = run_cli([*DATA, "--time=1", "run"], tmp_path)
    msg = error_message(proc)
    assert re.match(r"^FATAL: table 'sbtest1' does not exist .*run prepare first", msg), msg
    assert "SQL statistics" not in proc.stdout


@pytest.mark.parametrize("threads", [1, 2])
def test_error_prepare_twice(tmp_path, threads):
    first = run_cli([*DATA, "prepare"], tmp_path)
    assert first.returncode == 0
    proc = run_cli([*DATA, f"--threads={threads}", "prepare"], tmp_path)
    msg = error_message(proc, progress=True)
    assert re.match(r"^FATAL: table 'sbtest\d' already exists .*run cleanup first", msg), msg
    assert "Inserting" not in proc.stdout


def test_error_histogram_with_percentile_0(tmp_path):
    proc = run_cli([*DATA, "--histogram=on", "--percentile=0", "run"], tmp_path)
    assert error_message(proc) == "FATAL: --histogram cannot be used with --percentile=0"


def test_error_percentile_101(tmp_path):
    proc = run_cli([*DATA, "--percentile=101", "run"], tmp_path)
    # sysbench's line, then the range (pysysbench adds what to do)
    assert error_message(proc) == "FATAL: Invalid value for --percentile: 101 (must be between 0 and 100)"


def test_error_config_file_missing(tmp_path):
    proc = run_cli([f"--config-file={tmp_path / 'nope.conf'}", *DATA, "run"], tmp_path)
    msg = error_message(proc)
    assert "nope.conf" in msg and "No such file" in msg


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def test_error_mysql_unreachable(tmp_path):
    assert not _port_open(3999)
    proc = run_cli(["--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-port=3999", *DATA, "run"], tmp_path)
    msg = error_message(proc)
    assert msg.startswith("FATAL: ")
    assert "127.0.0.1" in msg and "3999" in msg


@pytest.mark.mysql
def test_error_mysql_auth_failure(tmp_path):
    if not _port_open(3306):
        pytest.skip("no MySQL server on 127.0.0.1:3306")
    proc = run_cli(
        ["--mysql-host=127.0.0.1", "--mysql-port=3306", "--mysql-user=sbtest", "--mysql-password=wrong", *DATA, "run"],
        tmp_path,
    )
    msg = error_message(proc)
    assert msg.startswith("FATAL: ")
    assert "127.0.0.1" in msg and "sbtest" in msg
    assert "wrong" not in proc.stdout + proc.stderr


@pytest.mark.mysql
def test_error_mysql_missing_database(tmp_path):
    if not _port_open(3306):
        pytest.skip("no MySQL server on 127.0.0.1:3306")
    proc = run_cli(["--mysql-host=127.0.0.1", "--mysql-port=3306", "--mysql-db=nosuchdb", *DATA, "run"], tmp_path)
    msg = error_message(proc)
    assert msg.startswith("FATAL: ")
    assert "nosuchdb" in msg


def test_error_pgsql_unreachable(tmp_path):
    assert not _port_open(5999)
    proc = run_cli(["--db-driver=pgsql", "--pgsql-host=127.0.0.1", "--pgsql-port=5999", *DATA, "run"], tmp_path)
    msg = error_message(proc)
    assert msg.startswith("FATAL: ")
    assert "127.0.0.1" in msg and "5999" in msg


def test_closed_stdout_is_not_a_traceback(prepared):
    """``pysysbench ... run | head -1``: the reader goes away before the report."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSYSBENCH_")}
    proc = subprocess.Popen(
        CLI + [*DATA, "--events=300", "--time=0", "--histogram=on", "run"],
        cwd=prepared,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout.readline().startswith(b"pysysbench ")
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "Exception" not in err, err
