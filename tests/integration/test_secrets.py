"""Passwords never leak: given on the command line, in the environment or in a
config file, they must not appear in the output, the result files, reports,
exports or campaign manifests.  Runs against a private MariaDB started without
grant tables, so any password is accepted and the run really happens.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from private_servers import PrivateMariaDB

PORT = 3393
DATA = ["--tables=1", "--table-size=200"]
SECRETS = {"cli": "Cl1-S3cret-pw", "env": "Env-S3cret-pw", "conf": "Conf-S3cret-pw"}


@pytest.fixture(scope="module")
def server():
    s = PrivateMariaDB(PORT)
    s.start()
    yield s
    s.destroy()


def run(*args: str, env_extra: dict | None = None, cwd: Path = REPO) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), **(env_extra or {}))
    return subprocess.run(
        [sys.executable, "-m", "pysysbench", *args], capture_output=True, text=True, timeout=180, env=env, cwd=cwd
    )


def everything_written(root: Path) -> str:
    chunks = []
    for path in root.rglob("*"):
        if path.is_file():
            chunks.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(chunks)


@pytest.mark.mysql
def test_no_password_in_output_results_reports_or_manifests(server, tmp_path):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    conf = tmp_path / "secret.conf"
    conf.write_text(f"mysql-password='{SECRETS['conf']}'\n")
    conf.chmod(0o600)
    opts = [*server.options, *DATA]
    transcript = []
    p = run("oltp_point_select", *opts, f"--mysql-password={SECRETS['cli']}", "prepare")
    assert p.returncode == 0, p.stdout + p.stderr
    transcript.append(p.stdout + p.stderr)
    runs = [
        (["--mysql-password=" + SECRETS["cli"]], None),
        ([], {"PYSYSBENCH_MYSQL_PASSWORD": SECRETS["env"]}),
        ([f"--config-file={conf}"], None),
    ]
    for i, (extra, env) in enumerate(runs):
        p = run(
            "oltp_point_select",
            *opts,
            *extra,
            "--events=50",
            "--time=0",
            "--report-interval=1",
            "--debug=on",
            f"--result-file={out_dir / f'r{i}.json'}",
            "run",
            env_extra=env,
        )
        assert p.returncode == 0, p.stdout + p.stderr
        transcript.append(p.stdout + p.stderr)
    # a failing run (wrong port) prints an error and still writes its result file
    p = run(
        "oltp_point_select",
        *server.options[:2],
        "--mysql-port=1",
        f"--mysql-password={SECRETS['cli']}",
        *DATA,
        f"--result-file={out_dir / 'failed.json'}",
        "run",
    )
    assert p.returncode == 1
    transcript.append(p.stdout + p.stderr)
    # reports and exports built from those result files
    results = sorted(str(f) for f in out_dir.glob("*.json"))
    for cmd in (
        ["report", *results, f"--output={out_dir / 'report'}"],
        ["export", *results, "--format=csv", f"--output={out_dir / 'export.csv'}"],
    ):
        p = run(*cmd)
        assert p.returncode == 0, p.stdout + p.stderr
        transcript.append(p.stdout + p.stderr)
    written = everything_written(out_dir) + "\n".join(transcript)
    assert (out_dir / "r0.json").exists() and (out_dir / "failed.json").exists()
    for where, secret in SECRETS.items():
        assert secret not in written, f"the {where} password leaked"
    assert "***" in (out_dir / "r0.json").read_text()  # the command line is recorded, masked


@pytest.mark.mysql
def test_no_password_in_campaign_manifest(server, tmp_path):
    campaign = tmp_path / "c.toml"
    campaign.write_text(f"""
name = "secret-check"
[connection]
db-driver = "mysql"
mysql-host = "127.0.0.1"
mysql-port = "{PORT}"
mysql-user = "sbtest"
mysql-password = "{SECRETS["cli"]}"
mysql-db = "sbtest"
[data]
tables = 1
table-size = 100
[prepare]
test = "oltp_common"
threads = 1
[run]
time = 1
warmup = 0
pause = 0
[[workload]]
test = "oltp_point_select"
threads = [1]
""")
    p = run("campaign", "run", str(campaign), f"--results-dir={tmp_path / 'results'}")
    written = everything_written(tmp_path / "results") + p.stdout + p.stderr
    assert p.returncode == 0, p.stdout + p.stderr
    assert SECRETS["cli"] not in written
