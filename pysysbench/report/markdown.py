"""Markdown rendering of a :class:`Report` and of a comparison table.

Role: GitHub-flavoured Markdown laid out like the seed reports: per workload a
table (threads, TPS, QPS, 95 % and 99 % latency, errors/s), the peak, and the
PNG charts (linked from ``charts/``); then the environment and the commands to
reproduce.  Pure functions returning text.
"""

from __future__ import annotations

import re

from . import compare as cmp
from .document import Report
from .tables import TableData

# text from result files (labels, names, errors) must render as written: HTML and the
# characters that open Markdown markup are escaped; an underscore inside a word is not
# markup (GFM), so "table_size" stays as it is
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_MARKUP = re.compile(r"[\\`*\[\]|~]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")


def escape(text: str) -> str:
    text = " ".join(str(text).splitlines())  # a line break would end the table row
    text = "".join(_HTML.get(ch, ch) for ch in text)
    return _MARKUP.sub(lambda m: "\\" + m.group(0), text)


def table(t: TableData) -> str:
    lines = [
        "| " + " | ".join(escape(h) for h in t.headers) + " |",
        "|" + "|".join("---:" if r else "---" for r in t.align_right) + "|",
    ]
    lines += ["| " + " | ".join(escape(c) for c in row) + " |" for row in t.rows]
    return "\n".join(lines)


def render(report: Report) -> str:
    out = [f"# {escape(report.title)}", "", report.description + ".", ""]
    out += ["## Summary", "", table(report.summary), ""]
    out += [f"> {escape(n)}\n" for n in report.notes]
    for s in report.sections:
        out += [f"## {s.workload}", ""]
        if s.tests != [s.workload]:
            out += [f"Test: `{'`, `'.join(s.tests)}`", ""]
        out += [table(s.table), ""]
        out += [f"* {escape(p)}" for p in s.peaks] + [""]
        if s.warnings:
            out += [f"> * {escape(w)}" for w in s.warnings] + [""]
        for c in s.charts:
            out += [f"![{c.alt}]({c.file})", ""]
        if s.faults is not None:
            out += ["Faults (a lab node killed during the run; the chart marks them):", "", table(s.faults), ""]
        if s.runs is not None:
            out += [
                "<details><summary>Runs: steadiness, client saturation, host load, server</summary>",
                "",
                table(s.runs),
                "",
                "</details>",
                "",
            ]
        if s.nodes is not None:
            out += ["<details><summary>Server nodes: share of the work, errors, CPU, skew</summary>", ""]
            out += [table(s.nodes), "", "</details>", ""]
    out += [
        "## Environment",
        "",
        table(TableData(["", ""], [[k, v] for k, v in report.environment], [False, False])),
        "",
    ]
    out += ["## Commands to reproduce", "", "```sh", *report.commands, "```", ""]
    if report.failed:
        out += ["## Failed or interrupted runs", ""]
        out += [
            f"* `{r.path}`: {escape(r.workload)}, {r.threads} threads: exit code {r.doc.get('exit_code')}, "
            f"{escape(r.doc.get('error') or 'no summary')}"
            for r in report.failed
        ]
        out.append("")
    return "\n".join(out)


def render_comparison(title: str, groups: list[cmp.Group], comparisons: list[cmp.Comparison]) -> str:
    out = [
        f"# {escape(title)}",
        "",
        f"Baseline: **{escape(groups[0].name)}**. Ratios are group / baseline; verdicts "
        'account for run-to-run noise when repeats exist (Welch 95 %), else say "no repeats".',
        "",
    ]
    out += [table(TableData(["Group", "Runs"], [[n, s] for n, s in cmp.group_sizes(groups)], [False, False])), ""]
    out += [f"> {escape(n)}\n" for n in cmp.notes(groups, comparisons)]
    for c in comparisons:
        for workload in c.rows:
            out += [f"## {workload}: {c.metric.title}", "", table(cmp.table(c, workload)[0]), ""]
    return "\n".join(out)
