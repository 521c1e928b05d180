#!/usr/bin/env python3
"""A third-party-style parser of a sysbench 1.0 log, the way public log scrapers
read it: split every line on whitespace and take fields by position.  No regular
expressions, no knowledge of pysysbench.

Reads the log of ``sysbench oltp_read_write --report-interval=1 --histogram=on ... run``
(a file or standard input) and prints one JSON document:

* ``version``: field 2 of line 1 (``sysbench 1.0.20 (using ...)``), ``runtime``:
  field 6 (the token a known scraper indexes, and crashes on when it is missing);
* ``intervals``: per ``[ Ns ]`` line, the numbers at their positions (time,
  thds, tps, qps, r/w/o, latency percentile, err/s, reconn/s);
* ``histogram_rows``: the rows of the latency histogram (value, count);
* ``summary``: the cumulative report's labelled numbers.

``--fields`` prints only the field names found (what a comparison of two tools'
logs needs: same names, whatever the numbers).  Exit status 1 when a line the
parser relies on is missing or malformed (a crash, for a scraper).

    sysbench oltp_read_write ... --report-interval=1 --histogram=on run | tee log.txt
    python3 bench/parse_sysbench_log.py log.txt
"""

from __future__ import annotations

import json
import sys


def parse(text: str) -> dict:
    lines = text.splitlines()
    first = lines[0].split()
    doc: dict = {
        "program": first[0],
        "version": first[1],
        "runtime": first[5].rstrip(")"),
        "intervals": [],
        "histogram_rows": [],
        "summary": {},
    }
    in_hist = False
    for line in lines[1:]:
        f = line.split()
        if not f:
            in_hist = False
            continue
        if f[0] == "[" and f[2] == "]" and f[3] == "thds:":
            r, w, o = f[10].rstrip(")").split("/")
            doc["intervals"].append(
                {
                    "time_s": float(f[1].rstrip("s")),
                    "thds": int(f[4]),
                    "tps": float(f[6]),
                    "qps": float(f[8]),
                    "reads": float(r),
                    "writes": float(w),
                    "others": float(o),
                    "lat_pct": float(f[13]),
                    "err_s": float(f[15]),
                    "reconn_s": float(f[17]),
                }
            )
        elif f[0] == "value" and f[-1] == "count":
            in_hist = True
        elif in_hist and len(f) >= 3 and f[1].startswith("|"):
            doc["histogram_rows"].append((float(f[0]), int(f[-1])))
        elif f[0] in ("read:", "write:", "other:", "total:"):
            doc["summary"][f[0].rstrip(":")] = int(f[1])
        elif f[0] in ("transactions:", "queries:"):
            doc["summary"][f[0].rstrip(":")] = int(f[1])
            doc["summary"][f[0].rstrip(":") + "_per_sec"] = float(f[2].lstrip("("))
        elif f[:2] == ["total", "time:"]:
            doc["summary"]["total_time_s"] = float(f[2].rstrip("s"))
        elif f[:4] == ["total", "number", "of", "events:"]:
            doc["summary"]["events"] = int(f[4])
        elif f[0] in ("min:", "avg:", "max:", "sum:"):
            doc["summary"]["lat_" + f[0].rstrip(":")] = float(f[1])
        elif len(f) == 3 and f[0].endswith("th") and f[1] == "percentile:":
            doc["summary"]["lat_pct"] = float(f[2])
    if not doc["intervals"]:
        raise ValueError("no interval lines")
    return doc


def fields(doc: dict) -> dict:
    return {
        "line1": ["program", "version", "runtime"],
        "interval": sorted(doc["intervals"][0]),
        "intervals": len(doc["intervals"]),
        "histogram": bool(doc["histogram_rows"]),
        "summary": sorted(doc["summary"]),
    }


def main(argv: list[str]) -> int:
    only_fields = "--fields" in argv
    paths = [a for a in argv if a != "--fields"]
    text = open(paths[0]).read() if paths else sys.stdin.read()
    try:
        doc = parse(text)
    except (IndexError, ValueError) as exc:
        print(f"parse error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(fields(doc) if only_fields else doc, indent=1 if only_fields else None))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
