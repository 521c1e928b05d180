"""Ray executor (``--ray-address``): one run's threads as Ray actors on several machines.

Each actor is one worker: the same :class:`InProcessGroup` a worker process runs,
here on the actor's event loop (Ray runs async actors on uvloop when installed),
owning a contiguous slice of the global thread ids with its share of
``--rate`` (as :class:`~pysysbench.engine.procs.ProcessGroup`) and of ``--events``:
actors on other machines cannot map one shared counter as worker processes do, so
each takes from a budget of its own, ``--events`` split evenly (exact in total, but
not shared: a fast actor cannot take a slow one's events; an actor whose share is 0,
with ``--events`` below the actor count, runs no event).
Global thread ids keep the database host/port rotation and the fairness figures
identical to a local run.  Actors are pinned to nodes (hard node affinity, no
CPU reserved): ``--ray-workers-per-node`` each (default: one per CPU the node
offers Ray), on every node with CPUs, or only on the nodes that offer the custom
resource ``--ray-resource`` (then the resource's amount is the default count).

Lifecycle, all over Ray actor calls (no RPC of our own):

    setup   connect to the cluster, place the actors, wait until each has started
            (imports done, versions checked); not part of --thread-init-timeout
    init    every actor connects its threads; the run starts when all are ready
            (the barrier)
    start   one call per actor with the time left (clocks of different machines
            are never compared); then ``wait_done`` is pending on each actor
    sample  one call per actor per report interval, plus a heartbeat every
            HEARTBEAT_S so that a lost node's figures are at most that old

Every reply carries the actor's cumulative :class:`Snapshot`; merging adds
counts and histogram buckets, so totals and percentiles are exact.  An actor
that dies (its process, or its whole node) stops the run with an error naming
the node; what every actor measured until its last reply is kept.

Ray is imported lazily: the base install never needs it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import platform
import socket
import sys
import time
from dataclasses import field
from time import perf_counter_ns
from typing import Any

from ..core import switches
from ..core.errors import ConfigError, ConnectError, PySysbenchError, RunAborted
from ..core.record import record
from ..drivers.base import password_envs
from ..runtime import native
from ..stats.histogram import percentile_ms
from ..stats.records import Snapshot
from ..version import __version__
from .group import InProcessGroup, Share, merge_counts, share_group, shares
from .outside import Origin, bring_in, origins
from .procs import worker_payload
from .remote import MemberLost, RemoteGroup
from .spec import RunSpec

HEARTBEAT_S = 1.0
SETUP_TIMEOUT_S = 120.0  # connect + place + start every actor (process start, imports)
CALL_TIMEOUT_S = 30.0  # an actor that does not answer a sample in time counts as lost
CLOSE_TIMEOUT_S = 10.0
PROBE_TIMEOUT_S = 5.0  # TCP reachability of the head node before ray.init
INSTALL_HINT = "install pysysbench[ray] (pip install 'pysysbench[ray]')"
SAME_VERSIONS_HINT = "every Ray node needs the same Python and pysysbench versions as this client"


def pass_env() -> tuple[str, ...]:
    """The environment variables actors on other machines get from this client: every
    registered driver's password variable, and the native switch (the same code there)."""
    return (*password_envs(), native.ENV)


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError(f"--ray-address needs Ray, which is not installed: {INSTALL_HINT}") from None
    return ray


# --- placement (pure: unit-tested without a cluster) ---------------------------------


@record(frozen=True)
class RayNode:
    """A Ray node that will run worker actors."""

    node_id: str
    address: str
    hostname: str
    ray_cpus: float
    slots: int

    @property
    def label(self) -> str:
        return f"{self.address} (node {self.node_id[:8]}, host {self.hostname})"


def eligible_nodes(nodes: list[dict[Any, Any]], per_node: int, resource: str) -> list[RayNode]:
    """The alive nodes to use (``ray.nodes()`` entries) and how many actors each runs."""
    out = []
    for n in nodes:
        res = n.get("Resources") or {}
        if not n.get("Alive"):
            continue
        amount = res.get(resource, 0) if resource else res.get("CPU", 0)
        if amount <= 0:
            continue
        slots = per_node or max(1, int(amount))
        out.append(
            RayNode(
                n["NodeID"],
                n.get("NodeManagerAddress", "?"),
                n.get("NodeManagerHostname", "?"),
                float(res.get("CPU", 0)),
                slots,
            )
        )
    return sorted(out, key=lambda r: (r.address, r.hostname, r.node_id))


def plan_actors(nodes: list[RayNode], threads: int) -> list[RayNode]:
    """One entry per actor, nodes interleaved (so fewer threads than slots still
    spread over every node), never more actors than threads."""
    order: list[RayNode] = []
    for round_ in range(max((n.slots for n in nodes), default=0)):
        order.extend(n for n in nodes if round_ < n.slots)
    return order[:threads]


# --- actor side ----------------------------------------------------------------------


class RayWorker:
    """One worker actor; Ray runs its async methods on the actor's event loop."""

    def __init__(self, spec: RunSpec, share: Share, carried: tuple[Origin, ...] = ()):
        self.spec = spec
        self.share = share
        self.carried = carried  # the client's drivers and workloads from outside the package (.outside)
        self.group: InProcessGroup | None = None
        self.started = asyncio.Event()
        self.seq = 0
        self.wall0 = time.monotonic()

    @property
    def _group(self) -> InProcessGroup:
        """The actor's threads, for the calls the client makes once init_threads made them."""
        assert self.group is not None
        return self.group

    async def ready(self) -> dict[str, Any]:
        import ray

        return {
            "pid": os.getpid(),
            "hostname": socket.gethostname(),
            "cpus": os.cpu_count() or 1,
            "node_id": ray.get_runtime_context().get_node_id(),
            "version": __version__,
            "python": platform.python_version(),
        }

    async def init_threads(self) -> dict[str, Any] | None:
        """Connect this actor's threads; an error comes back as data, not a Ray exception."""
        try:
            bring_in(self.carried)
            group = share_group(self.spec, self.share)
            self.wall0 = time.monotonic()
            self.group = group
            await self.group.init()
        except PySysbenchError as exc:
            return {"error": str(exc), "exit_code": exc.exit_code}
        except Exception as exc:
            return {"error": f"worker actor failed: {type(exc).__name__}: {exc}", "exit_code": 1}
        return None

    def payload(self) -> dict[str, Any]:
        self.seq += 1
        p = worker_payload(self._group)
        p.update(seq=self.seq, wall_s=time.monotonic() - self.wall0, loadavg_1m=os.getloadavg()[0])
        return p

    async def start(self, remaining_ns: int, warming: bool) -> None:
        self._group.start(perf_counter_ns() + remaining_ns if remaining_ns else 0, warming)
        self.started.set()

    async def sample(self) -> dict[str, Any]:
        return self.payload()

    async def end_warmup(self) -> dict[str, Any]:
        await self._group.end_warmup()
        return self.payload()

    async def checkpoint(self) -> dict[str, Any]:
        p = self.payload()
        self._group.worker.recorder.reset_minmax()
        return p

    async def stop(self) -> None:
        if self.group is not None:
            self.group.stop()

    async def cancel(self) -> None:
        if self.group is not None:
            self.group.cancel()

    async def wait_done(self) -> dict[str, Any]:
        await self.started.wait()
        await self._group.wait(None)
        return self.payload()

    async def close(self) -> None:
        if self.group is not None:
            await self.group.close()


# --- driver side ---------------------------------------------------------------------


async def _result(ref: Any) -> Any:
    return await ref


@record
class _Actor:
    index: int
    node: RayNode
    tids: range
    handle: Any = None
    info: dict[str, Any] = field(default_factory=dict)
    last: dict[str, Any] | None = None
    base: Snapshot = field(default_factory=Snapshot)  # at the end of warm-up / last checkpoint
    done: bool = False
    dead: bool = False
    watch: asyncio.Task[Any] | None = None


class RayGroup(RemoteGroup):
    """The threads of one run split over Ray actors on the nodes of a Ray cluster."""

    def __init__(self, spec: RunSpec):
        if spec.blocking:
            raise ConfigError(
                "--ray-address needs a database server: an embedded database (SQLite) cannot be "
                "shared by several client machines; use --mysql-* or --pgsql-* options"
            )
        self.per_node = spec.ray_workers_per_node
        self.ray = import_ray()
        super().__init__(spec)
        self.address = spec.ray_address
        self.resource = spec.ray_resource
        self.threads = spec.threads
        self.actors: list[_Actor] = self.members
        self._connected = False
        self._stdout = sys.stdout
        self._closed = False

    @property
    def workers(self) -> int:
        return len(self.actors)

    # -- setup: connect, place, start the actors --

    async def setup(self) -> None:
        try:
            await asyncio.wait_for(self._setup(), SETUP_TIMEOUT_S)
        except TimeoutError:
            await self.close()
            raise RunAborted(
                f"the Ray worker actors did not start within {SETUP_TIMEOUT_S:.0f} s "
                f"(is the cluster at '{self.address}' overloaded, or a node unable to start "
                "Python workers?)"
            ) from None
        except BaseException:
            await self.close()
            raise

    async def _setup(self) -> None:
        self._all_done = asyncio.Event()
        self._connect()
        nodes = eligible_nodes(self.ray.nodes(), self.per_node, self.resource)
        if not nodes:
            raise ConfigError(self._no_nodes_message())
        self._place(plan_actors(nodes, self.threads))
        replies = await asyncio.gather(*(self._call(a, "ready") for a in self.actors), return_exceptions=True)
        for a, reply in zip(self.actors, replies):
            if isinstance(reply, BaseException):
                a.dead = True
                raise RunAborted(
                    f"cannot start a worker actor on Ray node {a.node.label}: {_short(reply)}; {SAME_VERSIONS_HINT}"
                )
            a.info = reply
            self._check_versions(a)

    def _connect(self) -> None:
        ray = self.ray
        if ray.is_initialized():  # a caller (a test, a notebook) already connected
            return
        # Ray's driver prints cluster events ("A worker died ...") on sys.stdout from a
        # thread of its own; the report stream must stay sysbench's, so while we are
        # connected they go to stderr (the CLI's printer holds the real stdout).
        self._probe()
        self._stdout = sys.stdout
        sys.stdout = sys.stderr
        try:
            ray.init(address=self.address, logging_level=logging.ERROR, log_to_driver=False, namespace="pysysbench")
        except Exception as exc:  # ConnectionError, ValueError, RuntimeError, ... depending on the cause
            sys.stdout = self._stdout
            raise ConnectError(
                f"cannot connect to the Ray cluster at '{self.address}': {_short(exc)}; start one "
                "with 'ray start --head' or check --ray-address"
            ) from None
        self._connected = True

    def _probe(self) -> None:
        """ray.init retries an unreachable HOST:PORT for many minutes: fail fast instead."""
        address, where = self.address, f"'{self.address}'"
        if address == "auto":  # RAY_ADDRESS, else the last cluster started here (may be stale)
            try:
                from ray._private.services import get_ray_address_from_environment

                address = get_ray_address_from_environment("auto", None) or "auto"
            except Exception:  # none found (Ray says so itself, at once) or a Ray without this helper
                return
            where = f"'auto' ({address}, from RAY_ADDRESS or the last cluster started on this machine)"
        host, _, port = address.split("://", 1)[-1].rpartition(":")
        if not host or not port.isdigit():
            return
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_TIMEOUT_S).close()
        except OSError as exc:
            raise ConnectError(
                f"cannot connect to the Ray cluster at {where}: {exc.strerror or exc}; is its head "
                "node running (ray start --head --port=PORT)? check --ray-address"
            ) from None

    def _no_nodes_message(self) -> str:
        if self.resource:
            return (
                f"no alive node of the Ray cluster at '{self.address}' offers the resource '{self.resource}' "
                f"(start the client nodes with ray start --resources='{{\"{self.resource}\": N}}')"
            )
        return (
            f"no alive node of the Ray cluster at '{self.address}' offers CPUs for worker actors "
            "(start the client nodes with ray start --num-cpus=N)"
        )

    def _place(self, slots: list[RayNode]) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        actor_cls = self.ray.remote(RayWorker)
        env = switches.set_values(pass_env())
        carried = origins()
        for i, (node, share) in enumerate(zip(slots, shares(self.spec, len(slots)))):
            opts: dict[str, Any] = {
                "num_cpus": 0,
                "max_restarts": 0,
                "max_task_retries": 0,
                "scheduling_strategy": NodeAffinitySchedulingStrategy(node.node_id, soft=False),
            }
            if env:
                opts["runtime_env"] = {"env_vars": env}
            handle = actor_cls.options(**opts).remote(self.spec, share, carried)
            self.actors.append(_Actor(i, node, share.tids, handle))

    def _check_versions(self, a: _Actor) -> None:
        mine = (__version__, platform.python_version())
        theirs = (a.info.get("version"), a.info.get("python"))
        if theirs != mine:
            raise ConfigError(
                f"Ray node {a.node.label} runs pysysbench {theirs[0]} on Python {theirs[1]}, this "
                f"client pysysbench {mine[0]} on Python {mine[1]}: {SAME_VERSIONS_HINT}"
            )

    async def _call(self, a: _Actor, method: str, *args: Any, timeout: float | None = None) -> Any:
        ref = getattr(a.handle, method).remote(*args)
        return await asyncio.wait_for(_result(ref), timeout)

    # -- init: connect every thread (the start barrier) --

    async def init(self) -> None:
        try:
            replies = await asyncio.gather(
                *(self._call(a, "init_threads") for a in self.actors), return_exceptions=True
            )
            for a, reply in zip(self.actors, replies):
                if isinstance(reply, BaseException):
                    a.dead = True
                    raise RunAborted(self._lost_message(a, reply))
                if reply:
                    raise RunAborted(
                        f"{reply['error']} (worker actor {a.index} on Ray node {a.node.label})", reply["exit_code"]
                    )
        except BaseException:
            await self.close()
            raise

    # -- run --

    def start(self, deadline_ns: int, warming: bool) -> None:
        remaining_ns = max(1, deadline_ns - perf_counter_ns()) if deadline_ns else 0
        loop = asyncio.get_running_loop()
        for a in self.actors:
            a.handle.start.remote(remaining_ns, warming)
            a.watch = loop.create_task(self._watch(a))
        self._heartbeat = loop.create_task(self._beat())

    async def _watch(self, a: _Actor) -> None:
        """Wait for the actor to finish its threads; notice when it dies."""
        try:
            payload = await _result(a.handle.wait_done.remote())
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._lost(a, exc)
        else:
            self._update(a, payload)
            a.done = True
            if payload["fatal"] and self.fatal is None:
                self._set_fatal(RunAborted(payload["fatal"], payload["exit_code"]))
        self._check_all_done()

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            await self._request("sample")

    async def _request(self, method: str) -> None:
        alive = [a for a in self.actors if not a.dead]
        replies = await asyncio.gather(
            *(self._call(a, method, timeout=CALL_TIMEOUT_S) for a in alive), return_exceptions=True
        )
        for a, reply in zip(alive, replies):
            if isinstance(reply, asyncio.CancelledError):
                continue
            if isinstance(reply, BaseException):
                self._lost(a, reply)
            else:
                self._update(a, reply)

    @staticmethod
    def _update(a: _Actor, payload: dict[str, Any]) -> None:
        # async actor calls may complete out of order: keep the newest reply
        if a.last is None or payload["seq"] > a.last["seq"]:
            a.last = payload

    def _lost(self, a: _Actor, exc: BaseException) -> None:
        if a.dead or self._closed:
            return
        a.dead = True
        self._set_fatal(MemberLost(self._lost_message(a, exc)))
        self._check_all_done()

    def _lost_message(self, a: _Actor, exc: BaseException) -> str:
        pid = a.info.get("pid", "?")
        tail = "; the figures cover what was measured until its last report"
        if isinstance(exc, asyncio.TimeoutError):
            return (
                f"Ray node {a.node.label} stopped answering: worker actor {a.index} (pid {pid}) did not reply "
                f"within {CALL_TIMEOUT_S:.0f} s{tail}"
            )
        if not self._node_alive(a.node.node_id):
            return f"Ray node {a.node.label} died: its worker actor {a.index} (pid {pid}) is lost{tail}"
        unavailable = getattr(self.ray.exceptions, "ActorUnavailableError", ())
        if isinstance(exc, unavailable):  # the node may be going down: Ray confirms that only much later
            return (
                f"lost worker actor {a.index} (pid {pid}) on Ray node {a.node.label}: it stopped answering "
                f"(its process or the whole node is gone){tail}"
            )
        return f"worker actor {a.index} (pid {pid}) on Ray node {a.node.label} died unexpectedly ({_short(exc)}){tail}"

    def _node_alive(self, node_id: str) -> bool:
        try:
            return any(n["NodeID"] == node_id and n["Alive"] for n in self.ray.nodes())
        except Exception:  # the cluster itself is unreachable: the node is as good as dead
            return False

    def _rebase(self) -> None:
        """The figures restart here (end of warm-up, checkpoint): per-node figures too."""
        for a in self.actors:
            if a.last is not None:
                a.base = a.last["snapshot"]

    def _tell(self, method: str) -> None:
        for a in self.actors:
            if not a.dead and a.handle is not None:
                try:
                    getattr(a.handle, method).remote()
                except Exception:
                    pass  # the watch task reports a dead actor

    # -- results --

    def _extra(self) -> dict[str, Any]:
        return {"nodes": self._nodes()}

    def _worker_entry(self, a: _Actor) -> dict[str, Any]:
        p = a.last or {}
        d = p["snapshot"].minus(a.base) if p else Snapshot()
        return {
            "worker": a.index,
            "pid": a.info.get("pid"),
            "node": a.node.address,
            "node_id": a.node.node_id,
            "threads": len(a.tids),
            "cpu_s": p.get("cpu_s", 0.0),
            "died": a.dead,
            "events": d.events,
        }

    def _nodes(self) -> list[dict[str, Any]]:
        """Per client machine: what its actors measured (same window as the summary),
        their connections and CPU; busy_fraction near 1 means the node was saturated."""
        out = []
        by_node: dict[str, list[_Actor]] = {}
        for a in self.actors:
            by_node.setdefault(a.node.node_id, []).append(a)
        for group in by_node.values():
            have = [a for a in group if a.last is not None]
            last = [a.last for a in group if a.last is not None]  # the payloads of ``have``
            d = Snapshot.merge(p["snapshot"] for p in last).minus(Snapshot.merge(a.base for a in have))
            cpu_s = sum(p["cpu_s"] for p in last)
            wall_s = max((p["wall_s"] for p in last), default=0.0)
            cpus = group[0].info.get("cpus", 1)
            cores = min(len(group), cpus)
            node = group[0].node
            pct = self.spec.percentile
            out.append(
                {
                    "node": node.address,
                    "node_id": node.node_id,
                    "hostname": group[0].info.get("hostname", node.hostname),
                    "actors": len(group),
                    "threads": sum(len(a.tids) for a in group),
                    "ray_cpus": node.ray_cpus,
                    "cpus": cpus,
                    "events": d.events,
                    "queries": d.reads + d.writes + d.others,
                    "reads": d.reads,
                    "writes": d.writes,
                    "others": d.others,
                    "errors": d.errors,
                    "reconnects": d.reconnects,
                    "errors_by_code": {k: n for k, n in d.error_codes.items() if n},
                    "latency_ms": {
                        "avg": d.lat_sum_ns / d.events / 1e6 if d.events else 0.0,
                        "percentile": pct,
                        "percentile_value": percentile_ms(d.hist, pct) if pct else 0.0,
                    },
                    "cpu_s": cpu_s,
                    "busy_fraction": cpu_s / (wall_s * cores) if wall_s > 0 else 0.0,
                    "loadavg_1m": max((p["loadavg_1m"] for p in last), default=0.0),
                    "connections": merge_counts(p.get("connections", {}) for p in last),
                    "died": any(a.dead for a in group),
                }
            )
        return out

    # -- shutdown --

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        tasks = [t for t in [self._heartbeat, *(a.watch for a in self.actors)] if t is not None]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        alive = [a for a in self.actors if not a.dead and a.handle is not None]
        if alive:
            try:
                await asyncio.wait_for(
                    asyncio.gather(*(self._call(a, "close") for a in alive), return_exceptions=True), CLOSE_TIMEOUT_S
                )
            except TimeoutError:
                pass  # killed below; the server drops their sessions
        for a in self.actors:
            try:
                self.ray.kill(a.handle, no_restart=True)
            except Exception:
                pass
        if self._connected:
            self.ray.shutdown()
            self._connected = False
            sys.stdout = self._stdout


def _short(exc: BaseException) -> str:
    """One line out of Ray's multi-line exception texts."""
    text = str(exc) or type(exc).__name__
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:  # the sentence that says why an actor died
        if "because" in line or "No module named" in line:
            end = line.find(". ", line.find("because") if "because" in line else 0)
            return (line if end < 0 else line[: end + 1])[:300]
    return (lines[0] if lines else type(exc).__name__)[:300]
