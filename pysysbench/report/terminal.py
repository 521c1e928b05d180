"""Terminal rendering with rich: comparison tables and run summaries.

Role: build ``rich`` renderables (the CLI prints them; on a pipe rich writes
plain text without colour codes).
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from . import compare as cmp

STYLES = {"better": "bold green", "worse": "bold red", "same": "dim", "unsure": "yellow", "": ""}


def comparison_table(c: cmp.Comparison, workload: str) -> Table:
    data, classes = cmp.table(c, workload)
    # Text, not str: a label such as "[bold]" is shown as written, not taken for rich markup
    t = Table(title=Text(f"{workload}: {c.metric.title}"), title_justify="left")
    # fold, never "…": a group's name is what tells the columns apart, all of it must show
    for header, right in zip(data.headers, data.align_right):
        t.add_column(Text(header, overflow="fold"), justify="right" if right else "left", overflow="fold")
    for row, cls in zip(data.rows, classes):
        t.add_row(*(Text(value, style=STYLES.get(k, "")) for value, k in zip(row, cls)))
    return t
