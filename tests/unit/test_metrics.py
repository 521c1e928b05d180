"""--metrics-addr (issue 20 pt 6) without a server: the address is checked, a missing
prometheus_client is one line saying how to add it, and the exposition holds the
merged figures."""

from __future__ import annotations

import socket
import sys
import urllib.request

import pytest

from pysysbench.core.errors import ConfigError
from pysysbench.engine import metrics
from pysysbench.engine.group import Sample
from pysysbench.stats.records import Snapshot


def test_address_forms():
    assert metrics.parse_addr("127.0.0.1:9464") == ("127.0.0.1", 9464)
    assert metrics.parse_addr(":9464") == ("127.0.0.1", 9464)  # issue 40 f: loopback, not every interface
    assert metrics.parse_addr("0.0.0.0:9464") == ("0.0.0.0", 9464)
    with pytest.raises(ConfigError, match="expected HOST:PORT"):
        metrics.parse_addr("9464x")


def test_a_bare_port_listens_on_loopback_only():
    """--metrics-addr=:PORT served every interface (issue 40 f): now 127.0.0.1 alone."""
    pytest.importorskip("prometheus_client")
    m = metrics.RunMetrics(":0", {"test": "t"})
    try:
        assert m.server.server_address[0] == "127.0.0.1"
    finally:
        m.close()


def test_a_bad_metrics_address_fails_before_the_run(tmp_path):
    from pysysbench.cli.main import main

    code = main(["oltp_read_only", f"--sqlite-db={tmp_path / 'none.db'}", "--metrics-addr=9464x", "run"])
    assert code == 1 and not (tmp_path / "none.db").exists()


def test_without_prometheus_client_one_line_says_how_to_add_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "prometheus_client", None)
    with pytest.raises(ConfigError) as info:
        metrics.RunMetrics("127.0.0.1:0", {})
    assert str(info.value) == "--metrics-addr needs the prometheus_client package: pip install 'pysysbench[metrics]'"


def test_exposition_of_a_merged_sample():
    pytest.importorskip("prometheus_client")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    m = metrics.RunMetrics(f"127.0.0.1:{port}", {"test": "oltp_point_select"})
    try:
        before = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        assert 'pysysbench_events_total{test="oltp_point_select"} 0.0' in before  # before the first sample
        hist = [0] * 1024
        hist[300] = 7  # ~1 ms
        snap = Snapshot(
            events=7, reads=70, writes=14, others=0, lat_sum_ns=7_000_000, hist=hist, error_codes={"1213": 2}
        )
        m.sample = Sample(snapshot=snap, running=4, cpu_s=1.5)
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    finally:
        m.close()
    assert 'pysysbench_events_total{test="oltp_point_select"} 7.0' in text
    assert 'pysysbench_queries_total{kind="write",test="oltp_point_select"} 14.0' in text
    assert 'pysysbench_errors_total{code="1213",test="oltp_point_select"} 2.0' in text
    assert 'pysysbench_latency_seconds_count{test="oltp_point_select"} 7.0' in text
    assert 'pysysbench_threads_running{test="oltp_point_select"} 4.0' in text
    assert 'pysysbench_client_cpu_seconds_total{test="oltp_point_select"} 1.5' in text
