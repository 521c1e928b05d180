"""Every sysbench text log form of the project's tests and docs, imported in under 10 s.

The forms are collected, not listed, so that a new fixture or example is in on its own:

* every text file under tests/ (``.txt``, ``.log``, ``.out``) that holds sysbench output
  (tests/data/textlog/*: real sysbench 1.0.20 / 1.1.0 logs, pysysbench's, a 0.5 one);
* every string literal in tests/**/*.py that does, and every list or tuple of string literals
  (joined as lines): the golden outputs, the spec's appendix blocks, the 1.1 reports;
* every fenced block of README.md, docs/**/*.md and examples/**/*.md that does.

"Holds sysbench output": a final report's heading (``SQL statistics:``, ``OLTP test
statistics:``, ``General statistics:``, ``Throughput:``) or an intermediate report line
(``[ 1s ] thds: ...``, 0.5's ``[   1s] threads: ...``). Two rules leave a block out, as no run's
output:

1. a template: it holds golden placeholders (``<N>``, ``<N-6>``): the pattern output is matched
   against (tests/golden/test_cli_transcripts.py), not output;
2. a fragment: it holds no figure of a run -- no intermediate line with its rate and no report
   line with a number for transactions, queries, events, events/s, IOPS or latency -- only a
   heading or the start of a line an assertion looks for.

This file's own literals (the rules' examples) are not collected.

Identical texts count once. Each form is written to a file of its own, all of them go to one
``pysysbench history import`` into a fresh SQLite store, and every one must give at least one
run; a form that gives none is a bug of stats/textlog.py.
"""

from __future__ import annotations

import ast
import json
import re
import time
from pathlib import Path

from test_history_store import cli, ok

REPO = Path(__file__).resolve().parents[2]
BUDGET_S = 10.0

HEADINGS = ("SQL statistics:", "OLTP test statistics:", "General statistics:", "Throughput:")
INTERVAL = re.compile(r"^\[\s*\d+s\s*\] (?:thds: \d+ (?:tps|eps):|threads: \d+, tps:)", re.M)
TEMPLATE = re.compile(r"<N[^>]*>")
FIGURE = re.compile(
    r"^\s+(?:transactions|queries|read|write|other|total|read/write requests|total number of events"
    r"|events/s \(eps\)|events per second|min|avg|max|\d+th percentile|approx\.\s+\d+ percentile)"
    r":\s+(?:IOPS=)?\d",
    re.M,
)
INTERVAL_FIGURE = re.compile(r"^\[\s*\d+s\s*\] (?:thds: \d+ (?:tps|eps):\s+|threads: \d+, tps: )(?:\d|inf)", re.M)
FENCE = re.compile(r"^ *(```|~~~)[^\n]*\n(.*?)^ *\1", re.M | re.S)


def holds_output(text: str) -> bool:
    return any(h in text for h in HEADINGS) or bool(INTERVAL.search(text))


def excluded(text: str) -> str:
    """The rule that leaves ``text`` out ("" none)."""
    if TEMPLATE.search(text):
        return "template"
    if not (INTERVAL_FIGURE.search(text) or FIGURE.search(text)):
        return "fragment"
    return ""


def literals(path: Path):
    """(line, text) of every string literal, and of every list/tuple of them joined as lines."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value
        elif isinstance(node, (ast.List, ast.Tuple)) and node.elts:
            if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
                yield node.lineno, "\n".join(e.value for e in node.elts) + "\n"


def blocks():
    """(where, text) of every block that holds sysbench output."""
    tests = REPO / "tests"
    for path in sorted(tests.rglob("*")):
        if path.suffix in (".txt", ".log", ".out") and path.is_file():
            yield str(path.relative_to(REPO)), path.read_text(errors="replace")
        elif path.suffix == ".py" and path.name != Path(__file__).name:  # not this file's own examples
            for line, text in literals(path):
                yield f"{path.relative_to(REPO)}:{line}", text
    docs = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")), *sorted((REPO / "examples").rglob("*.md"))]
    for path in docs:
        text = path.read_text()
        for m in FENCE.finditer(text):
            yield f"{path.relative_to(REPO)}:{text.count(chr(10), 0, m.start()) + 1}", m.group(2)


def collect() -> tuple[dict[str, str], dict[str, list[str]]]:
    """The forms (text -> where it was first found) and the blocks left out (rule -> wheres)."""
    forms: dict[str, str] = {}
    out: dict[str, list[str]] = {"template": [], "fragment": []}
    for where, text in blocks():
        if not holds_output(text):
            continue
        rule = excluded(text)
        if rule:
            out[rule].append(where)
        else:
            forms.setdefault(text, where)
    return forms, out


def test_the_rules_keep_runs_and_leave_out_patterns_and_quotes():
    assert excluded("SQL statistics:\n    transactions:       <N-6> (<N> per sec.)\n") == "template"
    assert excluded("\nGeneral statistics:\n") == excluded("[ 1s ] thds: 1 tps: ") == "fragment"
    assert excluded("    reconnects:     0      (0.00 per sec.)\n\nGeneral statistics:\n") == "fragment"
    assert excluded("Throughput:\n         read:  IOPS=3995.66 62.43 MiB/s (65.46 MB/s)\n") == ""
    assert excluded("[ 1s ] thds: 4 tps: 1175.22 qps: 23948.37 (r/w/o: 1/2/3) lat (ms,95%): 5.37 err/s: 0.00") == ""


def test_every_form_imports_into_a_fresh_store_in_under_10_s(tmp_path):
    forms, left_out = collect()
    wheres = sorted(forms.values())
    in_data = [w for w in wheres if w.startswith("tests/data/textlog/")]
    in_code = [w for w in wheres if ".py:" in w]
    assert len(in_data) >= 15 and len(in_code) >= 15, wheres  # the collector finds what is there
    folder = tmp_path / "forms"
    folder.mkdir()
    files = {}
    for i, (text, where) in enumerate(sorted(forms.items(), key=lambda kv: kv[1])):
        path = folder / f"form{i:03d}.log"
        path.write_text(text)
        files[str(path)] = where
    store = tmp_path / "forms.sqlite"
    start = time.monotonic()
    proc = cli("history", f"--history-db={store}", "import", *files)
    took = time.monotonic() - start
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"history import: {len(files)} files: " in proc.stdout and ", 0 failed;" in proc.stdout, proc.stdout
    assert took < BUDGET_S, f"{len(files)} forms took {took:.1f} s"
    runs = json.loads(ok("history", f"--history-db={store}", "list", "--output-format=json").stdout)
    by_source: dict[str, int] = {}
    for run in runs:
        by_source[run["source"]] = by_source.get(run["source"], 0) + 1
    no_run = [files[p] for p in files if p not in by_source]
    assert no_run == [], f"forms that gave no run: {no_run}"
    print(
        f"{len(files)} forms ({len(in_data)} files under tests/, {len(in_code)} literals in tests/*.py, "
        f"{len(files) - len(in_data) - len(in_code)} from the docs), {len(runs)} runs, imported in {took:.2f} s; "
        f"left out: {len(left_out['template'])} template(s), {len(left_out['fragment'])} fragment(s)"
    )
