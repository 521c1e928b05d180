"""From a :class:`Campaign` to concrete requests of the library.

Role: every step of a campaign is a :class:`Request` -- a test, a command and its
options -- that the backend hands to the library (the same code the CLI calls,
no command-line round trip); it stands for the ordinary ``pysysbench TEST ...
run`` command line it records (so it can be reproduced by hand), with a
deterministic result-file name and a fingerprint of its options.
Resuming compares fingerprints: a stored result only counts when it was
produced by the same command line.  Secrets are masked before anything is
hashed or stored.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from typing import Any

from ..core.options import format_value
from ..core.record import record
from .spec import Campaign, Variant, WorkloadSpec, option_key

MASK = "***"
PATH_OPTIONS = ("config_file",)  # relative paths are resolved against the campaign file
CONFIG_FIRST = ("config_file",)  # put first on a command line, so that every other option wins over it
RESULTS_DIR_TOKEN = "{results_dir}"
CAMPAIGN_DIR_TOKEN = "{campaign_dir}"


def secret_keys() -> set[str]:
    """Option keys declared secret by any driver (passwords).  Imported here, not at
    module level, so that reading results (reports) never loads a database library."""
    from ..drivers import REGISTRY as DRIVERS

    return {o.key for drv in DRIVERS.values() for o in drv.options if o.secret}


def redact(words: Iterable[str]) -> list[str]:
    """A command line with secret option values masked (for manifests, fingerprints, messages)."""
    secret = secret_keys()
    out = []
    for arg in words:
        if arg.startswith("--") and "=" in arg and option_key(arg[2:].split("=", 1)[0]) in secret:
            arg = f"--{arg[2:].split('=', 1)[0]}={MASK}"
        out.append(arg)
    return out


def merge(*maps: Mapping[str, Any]) -> dict[str, Any]:
    """Later maps win; ``table-size`` and ``table_size`` are one option."""
    out: dict[str, tuple[str, Any]] = {}
    for m in maps:
        for name, value in m.items():
            out[option_key(name)] = (name, value)
    return dict(out.values())


@record(frozen=True)
class RunKey:
    workload: str
    threads: int
    repeat: int
    variant: str | None = None

    @property
    def stem(self) -> str:
        v = f"-{self.variant}" if self.variant else ""
        return f"{self.workload}{v}-t{self.threads:04d}-r{self.repeat}"


@record(frozen=True)
class Request:
    """One command for the library: ``test``, ``command`` and the options as
    ``--name=value`` items (campaign order: connection, data, run, workload)."""

    test: str
    command: str
    options: tuple[str, ...]

    def words(self) -> list[str]:
        """The command line this request stands for (``pysysbench WORDS``); fingerprints
        and stored campaigns are keyed by it, so it keeps the order they always had."""
        return [self.test, *self.options, self.command]

    @property
    def command_line(self) -> list[str]:
        return redact(self.words())

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.words())


@record(frozen=True)
class PlannedRun:
    key: RunKey
    test: str
    request: Request
    result_path: str
    log_path: str
    fingerprint: str
    phase: str  # "list" | "search" | "refine"
    expected_s: float  # warm-up + measured time
    variant: Variant | None = None

    @property
    def command_line(self) -> list[str]:
        return self.request.command_line


class Planner:
    """Builds the requests of one campaign and results directory."""

    def __init__(self, campaign: Campaign, results_dir: str, table_size: int | None):
        self.c = campaign
        self.results_dir = results_dir
        self.table_size = table_size

    # --- option maps ------------------------------------------------------------

    def _resolve(self, options: Mapping[str, Any]) -> dict[str, Any]:
        out = {}
        for name, value in options.items():
            if isinstance(value, str):
                value = value.replace(RESULTS_DIR_TOKEN, self.results_dir).replace(CAMPAIGN_DIR_TOKEN, self.c.directory)
                if option_key(name) in PATH_OPTIONS and value and not os.path.isabs(value):
                    value = self._from_campaign_dir(value)
            out[name] = value
        return out

    def _args(self, *maps: Mapping[str, Any]) -> list[str]:
        """``--name=value`` items, a config file first: sysbench reads ``--config-file`` where
        it stands, so every option after it wins over the file -- the campaign's own and
        ``--set``'s, whatever order the TOML table or the overrides gave them."""
        merged = merge(*(self._resolve(m) for m in maps))
        items = sorted(merged.items(), key=lambda item: option_key(item[0]) not in CONFIG_FIRST)
        return [f"--{name}={format_value(value)}" for name, value in items]

    def data_options(self) -> dict[str, Any]:
        size = {"table-size": self.table_size} if self.table_size is not None else {}
        return merge(self.c.data, size)

    def connection_args(self, variant: Variant | None = None) -> list[str]:
        return self._args(self.c.connection, variant.connection if variant else {})

    def _from_campaign_dir(self, path: str) -> str:
        """A path relative to the campaign file, written relative to the working
        directory when it lies below it (shorter, machine-independent commands)."""
        full = os.path.join(self.c.directory, path)
        rel = os.path.relpath(full)
        return full if rel.startswith("..") else rel

    def test_path(self, test: str) -> str:
        if test.endswith(".py") and not os.path.isabs(test):
            return self._from_campaign_dir(test)
        return test

    # --- command lines ------------------------------------------------------------

    def prepare_request(self, command: str) -> Request:
        p = self.c.prepare
        assert p is not None
        return Request(
            self.test_path(p.test),
            command,
            (*self._args(self.c.connection, self.data_options(), p.options), f"--threads={p.threads}"),
        )

    def run(self, w: WorkloadSpec, threads: int, repeat: int, phase: str, variant: Variant | None = None) -> PlannedRun:
        key = RunKey(w.name, threads, repeat, variant.name if variant else None)
        result_path = os.path.join(self.results_dir, key.stem + ".json")
        v_conn, v_opts = (variant.connection, variant.options) if variant else ({}, {})
        request = Request(
            self.test_path(w.test),
            "run",
            (
                *self._args(self.c.connection, v_conn, self.data_options(), self.c.run.options, w.options, v_opts),
                f"--threads={threads}",
                f"--time={w.time_s}",
                f"--warmup-time={w.warmup_s}",
                f"--report-interval={self.c.run.report_interval_s}",
                f"--result-file={result_path}",
            ),
        )
        return PlannedRun(
            key=key,
            test=w.test,
            request=request,
            result_path=result_path,
            log_path=os.path.join(self.results_dir, "logs", key.stem + ".log"),
            fingerprint=fingerprint(request.words() + list(variant.sql if variant else ())),
            phase=phase,
            expected_s=w.time_s + w.warmup_s,
            variant=variant,
        )

    def fixed_runs(self, w: WorkloadSpec) -> list[PlannedRun]:
        """Repeats are whole sweeps (r1: all thread counts, then r2, ...), so slow drift
        of the server (caches, checkpoints) spreads over the cells instead of piling up.
        With [[variant]]s each round runs every variant in turn at each thread count
        (A B A B ...), so drift hits the variants alike and ``compare`` pairs the rounds."""
        vs = self.c.variants or (None,)
        return [self.run(w, t, r, "list", v) for r in range(1, w.repeats + 1) for t in w.threads for v in vs]


def fingerprint(words: Iterable[str]) -> str:
    """Identity of a run's options (result-file excluded, secrets masked)."""
    kept = [a for a in redact(words) if option_key(a[2:].split("=", 1)[0]) != "result_file" or not a.startswith("--")]
    return hashlib.sha256("\0".join(kept).encode()).hexdigest()[:16]
