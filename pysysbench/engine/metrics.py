"""Live Prometheus metrics of a run (``--metrics-addr=HOST:PORT``), as go-tpc and dbworkload serve.

Role: while a run goes, an HTTP endpoint serves its counters in the Prometheus
text format: events, queries by kind, errors by code, reconnects, a latency
histogram, threads running, client CPU.  The figures are the group's merged
sample -- every worker process, and every Ray node, added up by the parent as
the interval reports are -- refreshed every ``REFRESH_S`` by a side task of the
run; the HTTP thread only reads the last one.  It uses the ``prometheus_client``
package, an optional extra (``pip install 'pysysbench[metrics]'``); without
it ``--metrics-addr`` fails at once with one line saying so.  Off by default:
nothing of this is loaded then.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

from ..core.errors import ConfigError
from ..stats.histogram import bucket_value_ms

REFRESH_S = 1.0
# Prometheus histogram bounds (seconds) over sysbench's 1024 log buckets
BOUNDS_S = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
HINT = "--metrics-addr needs the prometheus_client package: pip install 'pysysbench[metrics]'"


def parse_addr(text: str) -> tuple[str, int]:
    """HOST:PORT; a bare ``:PORT`` listens on the loopback interface only (the endpoint shows
    the run to whoever can connect: every interface is asked for by name, 0.0.0.0:PORT)."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(
            f"--metrics-addr={text}: expected HOST:PORT (e.g. 127.0.0.1:9464, or 0.0.0.0:9464 for every interface)"
        )
    return host.strip("[]") or "127.0.0.1", int(port)


class RunMetrics:
    """The collector (prometheus_client calls ``collect`` from its HTTP thread)."""

    def __init__(self, addr: str, labels: dict[str, str]):
        try:
            from prometheus_client import start_http_server
            from prometheus_client.core import CollectorRegistry
        except ImportError:
            raise ConfigError(HINT) from None
        self.host, self.port = parse_addr(addr)
        self.labels = labels
        self.sample: Any = None
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self)
        try:
            self.server, self.thread = start_http_server(self.port, self.host, registry=self.registry)
        except OSError as exc:
            raise ConfigError(f"--metrics-addr={addr}: cannot listen there ({exc.strerror})") from None

    def describe(self) -> list[Any]:
        return []

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

        s = self.sample
        keys = list(self.labels)
        values = [self.labels[k] for k in keys]

        def family(cls: Callable[..., Any], name: str, doc: str, extra: tuple[str, ...] = ()) -> Any:
            return cls(name, doc, labels=keys + list(extra))

        if s is None:  # before the first sample: the families exist, at zero
            from ..stats.records import Snapshot
            from .group import Sample

            s = Sample(Snapshot())
        snap = s.snapshot
        events = family(CounterMetricFamily, "pysysbench_events", "transactions (events) completed")
        events.add_metric(values, snap.events)
        yield events
        queries = family(CounterMetricFamily, "pysysbench_queries", "statements by kind", ("kind",))
        for kind, n in (("read", snap.reads), ("write", snap.writes), ("other", snap.others)):
            queries.add_metric(values + [kind], n)
        yield queries
        errors = family(CounterMetricFamily, "pysysbench_errors", "ignored errors by code", ("code",))
        for code, n in sorted(snap.error_codes.items()):
            errors.add_metric(values + [str(code)], n)
        yield errors
        reconnects = family(CounterMetricFamily, "pysysbench_reconnects", "reconnects")
        reconnects.add_metric(values, snap.reconnects)
        yield reconnects
        hist = family(HistogramMetricFamily, "pysysbench_latency_seconds", "transaction latency")
        buckets, i, cum = [], 0, 0
        for bound in BOUNDS_S:
            while i < len(snap.hist) and bucket_value_ms(i) / 1000 <= bound:
                cum += snap.hist[i]
                i += 1
            buckets.append((repr(bound), cum))
        buckets.append(("+Inf", sum(snap.hist)))
        hist.add_metric(values, buckets, snap.lat_sum_ns / 1e9)
        yield hist
        threads = family(GaugeMetricFamily, "pysysbench_threads_running", "benchmark threads looping")
        threads.add_metric(values, s.running)
        yield threads
        inflight = family(GaugeMetricFamily, "pysysbench_inflight", "events executing now")
        inflight.add_metric(values, s.inflight)
        yield inflight
        cpu = family(CounterMetricFamily, "pysysbench_client_cpu_seconds", "client CPU (all worker processes)")
        cpu.add_metric(values, s.cpu_s)
        yield cpu

    async def follow(self, group: Any) -> None:
        """The side task: keep the merged sample fresh."""
        while True:
            self.sample = await group.sample()
            await asyncio.sleep(REFRESH_S)

    def close(self) -> None:
        try:
            self.server.shutdown()
            self.server.server_close()
        except Exception:  # the endpoint going away must never fail a finished run
            pass
