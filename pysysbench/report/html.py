"""Self-contained HTML rendering of a :class:`Report` (and of comparisons).

Role: one file that opens anywhere without a network: inline CSS, charts
embedded as base64 PNG (rendered by matplotlib), no scripts, no external
references (even the favicon is an inline ``data:`` URL).
"""

from __future__ import annotations

import base64
from html import escape

from . import compare as cmp
from .document import Chart, Report, slug
from .tables import TableData

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1100px;
       padding: 0 1rem; color: #1d2125; line-height: 1.45; }
h1 { font-size: 1.7rem; margin-bottom: .3rem; }
h2 { border-bottom: 1px solid #d0d7de; padding-bottom: .2rem; margin-top: 2.2rem; }
table { border-collapse: collapse; margin: .8rem 0; font-size: .92rem; }
th, td { border: 1px solid #d0d7de; padding: .3rem .6rem; }
th { background: #f3f5f7; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
figure { margin: 1rem 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eaeef2; }
figcaption { font-size: .85rem; color: #57606a; }
pre { background: #f6f8fa; padding: .8rem; overflow-x: auto; font-size: .82rem; }
nav ul { columns: 2; }
.better { color: #116329; font-weight: 600; } .worse { color: #a40e26; font-weight: 600; }
.same { color: #57606a; } .unsure { color: #9a6700; }
.muted { color: #57606a; font-size: .9rem; }
.warn { background: #fff8c5; border-left: 4px solid #d4a72c; padding: .4rem .7rem; margin: .8rem 0; }
.warn ul { margin: 0; padding-left: 1.2rem; }
"""


def page(title: str, body: list[str]) -> str:
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<link rel="icon" href="data:,">',
            f"<title>{escape(title)}</title>",
            f"<style>{CSS}</style>",
            "</head>",
            "<body>",
            *body,
            "</body>",
            "</html>",
            "",
        ]
    )


def _td(value: str, right: bool, cls: str) -> str:
    names = " ".join(n for n in ("num" if right else "", cls) if n)
    attr = f' class="{names}"' if names else ""
    return f"<td{attr}>{escape(value)}</td>"


def table(t: TableData, classes: list[list[str]] | None = None) -> str:
    """``classes[i][j]``: extra CSS class of a body cell (verdict colours)."""
    head = "".join(f"<th>{escape(h)}</th>" for h in t.headers)
    rows = []
    for i, row in enumerate(t.rows):
        extra = classes[i] if classes else [""] * len(row)
        rows.append("<tr>" + "".join(_td(v, r, c) for v, r, c in zip(row, t.align_right, extra)) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def figure(c: Chart) -> str:
    data = base64.b64encode(c.png).decode("ascii")
    return (
        f'<figure><img class="chart" alt="{escape(c.alt)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{escape(c.alt)}</figcaption></figure>"
    )


def render(report: Report) -> str:
    body = [f"<h1>{escape(report.title)}</h1>", f'<p class="muted">{escape(report.description)}.</p>']
    toc = "".join(f'<li><a href="#w-{slug(s.workload)}">{escape(s.workload)}</a></li>' for s in report.sections)
    body += [
        f'<nav><ul>{toc}<li><a href="#environment">Environment</a></li>'
        f'<li><a href="#commands">Commands to reproduce</a></li></ul></nav>'
    ]
    body += ["<h2>Summary</h2>", table(report.summary)]
    body += [f'<p class="warn">{escape(n)}</p>' for n in report.notes]
    for s in report.sections:
        body += [f'<h2 id="w-{slug(s.workload)}">{escape(s.workload)}</h2>']
        if s.tests != [s.workload]:
            body.append(f"<p>Test: <code>{escape(', '.join(s.tests))}</code></p>")
        body += [table(s.table), "<ul>" + "".join(f"<li>{escape(p)}</li>" for p in s.peaks) + "</ul>"]
        if s.warnings:  # one box, not one per run: a noisy campaign flags many
            body.append('<div class="warn"><ul>' + "".join(f"<li>{escape(w)}</li>" for w in s.warnings) + "</ul></div>")
        body += [figure(c) for c in s.charts]
        if s.faults is not None:
            body += ["<p>Faults (a lab node killed during the run; the chart marks them):</p>", table(s.faults)]
        if s.runs is not None:
            body += [
                "<details open><summary>Runs: steadiness, client saturation, host load, server</summary>",
                table(s.runs),
                "</details>",
            ]
        if s.nodes is not None:
            body += [
                "<details open><summary>Server nodes: share of the work, errors, CPU, skew</summary>",
                table(s.nodes),
                "</details>",
            ]
    env = TableData(["Item", "Value"], [[k, v] for k, v in report.environment], [False, False])
    body += ['<h2 id="environment">Environment</h2>', table(env)]
    body += ['<h2 id="commands">Commands to reproduce</h2>', f"<pre>{escape(chr(10).join(report.commands))}</pre>"]
    if report.failed:
        items = "".join(
            f"<li><code>{escape(r.path)}</code>: {escape(r.workload)}, {r.threads} threads: exit code "
            f"{escape(str(r.doc.get('exit_code')))}, {escape(str(r.doc.get('error') or 'no summary'))}"
            "</li>"
            for r in report.failed
        )
        body += ["<h2>Failed or interrupted runs</h2>", f"<ul>{items}</ul>"]
    return page(report.title, body)


def render_comparison(title: str, groups: list[cmp.Group], comparisons: list[cmp.Comparison]) -> str:
    sizes = TableData(["Group", "Runs"], [[n, s] for n, s in cmp.group_sizes(groups)], [False, False])
    body = [
        f"<h1>{escape(title)}</h1>",
        f'<p class="muted">Baseline: <b>{escape(groups[0].name)}</b>. Ratios are group / baseline; verdicts '
        "account for run-to-run noise when repeats exist (Welch 95 %), else say &ldquo;no repeats&rdquo;.</p>",
        table(sizes),
    ]
    body += [f'<p class="warn">{escape(n)}</p>' for n in cmp.notes(groups, comparisons)]
    for c in comparisons:
        for workload in c.rows:
            data, classes = cmp.table(c, workload)
            body += [f"<h2>{escape(workload)}: {escape(c.metric.title)}</h2>", table(data, classes)]
    return page(title, body)
