"""history/pages.py: the chart's clickable points sit on the drawn points; the pages name the
series, mark the change point and link every run."""

from __future__ import annotations

import io

from PIL import Image
from test_history_gate import DROP, rows

from pysysbench.history import pages
from pysysbench.history import series as hs
from pysysbench.history.detect import Settings, detect

POINT_RGB = (31, 111, 235)  # the points' colour, #1f6feb


def test_image_map_areas_are_on_the_points():
    (s,) = hs.build(rows("a", DROP))
    findings = detect(s.points("tps"), "tps")
    c = pages.chart(s, "tps", findings, "started")
    img = Image.open(io.BytesIO(c.png)).convert("RGB")
    assert [img.getpixel((x, y)) for x, y, _, _ in c.areas] == [POINT_RGB] * len(DROP)
    assert [r.id for _, _, r, _ in c.areas] == [r.id for r in s.runs]


def test_series_page_and_dashboard(tmp_path):
    found = hs.build(rows("a", DROP) + rows("b", [100, 101]))
    html, images = pages.series_page(found[0], ["tps", "p95"], Settings(), "started")
    assert "<h1>a @ 4 threads (sqlite)</h1>" in html and "change point at run 5: regression: tps -20.0%" in html
    assert list(images) == ["a-t4-sqlite-tps.png"] and "No run has this metric." in html
    assert all(f'href="runs/{r.id}.json"' in html for r in found[0].runs)
    runs = {r.id: {"id": r.id} for s in found for r in s.runs}
    written = pages.write(str(tmp_path), found, ["tps"], Settings(), runs, dashboard=True)
    assert written == 2 + 2 + 1 + 2 + 10  # pages, charts, index, small charts, run dumps
    index = (tmp_path / "index.html").read_text()
    assert "regression</span> tps -20.0%" in index and "not enough data</span> tps: 2 run(s)" in index
