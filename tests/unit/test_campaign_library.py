"""A campaign is a library call: it loads, prepares, runs and stores its results through
``pysysbench.campaign`` (its in-process backend, the ``command`` layer and ``engine.run``)
with no module of the command line imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

CAMPAIGN = """
name = "lib"
[connection]
db-driver = "sqlite"
sqlite-db = "{results_dir}/sbtest.db"
[data]
tables = 1
table-size = 100
[prepare]
threads = 1
[run]
time = 1
[[workload]]
test = "oltp_point_select"
threads = [1]
"""

SCRIPT = """
import json, sys
from pysysbench.campaign import load, run_campaign
from pysysbench.campaign.backend import InProcessBackend
manifest = run_campaign(load(sys.argv[1], []), sys.argv[2], InProcessBackend())
print(json.dumps({"status": manifest["status"],
                  "cli": sorted(m for m in sys.modules if m.startswith("pysysbench.cli"))}))
"""


def test_a_campaign_runs_without_the_command_line(tmp_path):
    path = tmp_path / "campaign.toml"
    path.write_text(CAMPAIGN)
    res = tmp_path / "res"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(path), str(res)], capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got == {"status": "complete", "cli": []}
    doc = json.loads((res / "oltp_point_select-t0001-r1.json").read_text())
    assert doc["exit_code"] == 0 and doc["summary"]["tps"] > 0
    log = (res / "logs" / "oltp_point_select-t0001-r1.log").read_text()
    assert log.startswith("$ pysysbench oltp_point_select ") and "SQL statistics:" in log
