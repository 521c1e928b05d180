"""The lean wire clients (``--db-fast-path``, pysysbench/drivers/wire.py) against
the real MariaDB and PostgreSQL.

* the bundled workloads count the same reads / writes / others and leave the same
  data with the fast path on and off (the library path is the reference);
* every parameter type a workload can bind (int, negative and 64-bit int, str,
  float, None) reaches the server intact, read back through the library;
* large results (thousands of rows, several network reads) end where they end;
* server errors come out classified as before: listed codes are ignored and
  counted, others stop the run with one FATAL line;
* statements off the hot path (``fetchall``) work between fast statements on
  the same session (the transport goes back to the library and returns).
"""

from __future__ import annotations

import re
import textwrap

import pytest

pytestmark = pytest.mark.timeout(300)

DATA = ["--tables=2", "--table-size=300"]

WORKLOAD = textwrap.dedent('''
    from pysysbench.workloads.base import ThreadContext, Workload

    class WireProbe(Workload):
        """Binds every parameter type, reads a large result, hits a duplicate key."""

        name = "wire_probe"

        async def thread_init(self, ctx: ThreadContext) -> None:
            await ctx.prepare("put", "INSERT INTO sbtest_wire (id, i, s, f, n) VALUES (?, ?, ?, ?, ?)")
            await ctx.prepare("dup", "INSERT INTO sbtest_wire (id, i, s, f, n) VALUES (1, 0, '', 0, NULL)")
            await ctx.prepare("many", "SELECT id, s FROM sbtest_wire_big WHERE id <= ?")
            await ctx.prepare("one", "SELECT s FROM sbtest_wire WHERE id = ?")

        async def event(self, ctx: ThreadContext) -> None:
            attempt = self.count(ctx)
            n = ctx.tid * 100000 + attempt + 10
            await ctx.stmts["put"][0](n, -(2**62) - n, "x'y\\\\z \\u00e9" + str(n), n / 8, None)
            await ctx.stmts["one"][0](n)
            rows = await ctx.conn.fetchall(f"SELECT i, s, f, n FROM sbtest_wire WHERE id = {n}")
            want = (-(2**62) - n, "x'y\\\\z \\u00e9" + str(n), n / 8, None)
            got = tuple(rows[0]) if rows else None
            if got is None or (int(got[0]), str(got[1]), float(got[2]), got[3]) != want:
                raise RuntimeError(f"round trip of {want!r} gave {got!r}")
            await ctx.stmts["many"][0](5000)
            if attempt % 2:   # every first attempt fails (duplicate key): restarted once
                await ctx.stmts["dup"][0]()

        def count(self, ctx: ThreadContext) -> int:
            ctx.done = getattr(ctx, "done", 0) + 1
            return ctx.done
''')


def _setup_tables(db) -> None:
    if db.name == "mysql":
        db.admin(
            [
                "DROP TABLE IF EXISTS sbtest_wire, sbtest_wire_big",
                "CREATE TABLE sbtest_wire (id BIGINT PRIMARY KEY, i BIGINT, s VARCHAR(64), f DOUBLE, n INT)",
                "CREATE TABLE sbtest_wire_big (id INT PRIMARY KEY, s CHAR(120))",
                "INSERT INTO sbtest_wire_big SELECT seq, REPEAT('7', 120) FROM seq_1_to_5000",
            ]
        )
    else:
        db.admin(
            [
                "DROP TABLE IF EXISTS sbtest_wire, sbtest_wire_big",
                "CREATE TABLE sbtest_wire (id BIGINT PRIMARY KEY, i BIGINT, s VARCHAR(64), f DOUBLE PRECISION, n INT)",
                "CREATE TABLE sbtest_wire_big (id INT PRIMARY KEY, s CHAR(120))",
                "INSERT INTO sbtest_wire_big SELECT g, repeat('7', 120) FROM generate_series(1, 5000) g",
                "ALTER TABLE sbtest_wire OWNER TO sbtest",
                "ALTER TABLE sbtest_wire_big OWNER TO sbtest",
            ]
        )


def _counts(stdout: str) -> tuple[int, ...]:
    out = []
    for key in ("read", "write", "other", "transactions", "ignored errors"):
        m = re.search(rf"^\s+{key}:\s+(\d+)", stdout, re.M)
        assert m, f"no '{key}' line in:\n{stdout}"
        out.append(int(m.group(1)))
    return tuple(out)


@pytest.mark.parametrize("workload", ["oltp_read_write", "oltp_read_only", "oltp_write_only", "oltp_insert"])
def test_fast_path_counts_equal_library_path(server_db, run_cli, workload):
    """Same seed, one thread, same events: the same counters and row counts."""
    results = {}
    for fast in ("on", "off"):
        run_cli.ok(workload, *server_db.opts, *DATA, "cleanup")
        run_cli.ok(workload, *server_db.opts, *DATA, "prepare")
        proc = run_cli.ok(
            workload,
            *server_db.opts,
            *DATA,
            "--threads=1",
            "--events=40",
            "--time=0",
            "--rand-seed=11",
            f"--db-fast-path={fast}",
            "run",
        )
        rows = sum(int(server_db.scalar(f"SELECT COUNT(*) FROM sbtest{t}")) for t in (1, 2))
        results[fast] = (_counts(proc.stdout), rows)
    assert results["on"] == results["off"]
    assert results["on"][0][3] == 40


def test_parameters_large_results_and_errors(server_db, run_cli, tmp_path):
    _setup_tables(server_db)
    script = tmp_path / "wire_probe.py"
    script.write_text(WORKLOAD)
    dup = "1062" if server_db.name == "mysql" else "23505"
    ignore = f"--{server_db.name}-ignore-errors={dup}"
    try:
        server_db.admin("INSERT INTO sbtest_wire (id, i, s, f, n) VALUES (1, 0, '', 0, NULL)")
        proc = run_cli.ok(str(script), *server_db.opts, "--threads=3", "--events=60", "--time=0", ignore, "run")
        reads, writes, others, events, ignored = _counts(proc.stdout)
        # per event two attempts of INSERT (write), SELECT one (read), SELECT 5000 rows (read);
        # the first ends in the duplicate key (ignored, event restarted)
        assert (reads, writes, others, events, ignored) == (240, 120, 0, 60, 60), proc.stdout
        assert server_db.scalar("SELECT COUNT(*) FROM sbtest_wire") == 121

        # not listed (PostgreSQL ignores 23505 by default): one FATAL line naming the error,
        # exit code 1, no traceback
        other = "1213" if server_db.name == "mysql" else "40P01"
        proc = run_cli(
            str(script),
            *server_db.opts,
            "--threads=1",
            "--events=5",
            "--time=0",
            f"--{server_db.name}-ignore-errors={other}",
            "run",
        )
        assert proc.returncode == 1, proc.stdout + proc.stderr
        fatal = [line for line in (proc.stdout + proc.stderr).splitlines() if "FATAL" in line]
        assert len(fatal) >= 1 and dup in fatal[0], proc.stdout + proc.stderr
        assert "Traceback" not in proc.stdout + proc.stderr
    finally:
        server_db.admin("DROP TABLE IF EXISTS sbtest_wire, sbtest_wire_big")


def test_ps_mode_disable_and_fast_path_off_still_work(server_db, run_cli):
    run_cli.ok("oltp_point_select", *server_db.opts, *DATA, "prepare")
    for extra in (["--db-ps-mode=disable"], ["--db-fast-path=off"], ["--db-ps-mode=disable", "--db-fast-path=off"]):
        proc = run_cli.ok(
            "oltp_read_only", *server_db.opts, *DATA, "--threads=2", "--events=20", "--time=0", *extra, "run"
        )
        reads, writes, others, events, ignored = _counts(proc.stdout)
        assert (reads, writes, others, events) == (280, 0, 40, 20), (extra, proc.stdout)


def _driver_and_slow_sql(server_db):
    from pysysbench.command.cmdline import choose_driver, parse
    from pysysbench.drivers import REGISTRY

    values = parse(["oltp_point_select", *server_db.opts, "run"]).values
    slow = "SELECT SLEEP(?)" if server_db.name == "mysql" else "SELECT pg_sleep(?)"
    return REGISTRY[choose_driver(values)](values), slow


def test_strand_is_resumed_by_the_wire_and_can_be_cancelled(server_db):
    """A strand's statement is answered straight from the protocol callback (the
    wire holds the strand, no Future is made); cancelling a strand in the middle of
    a statement raises CancelledError inside it; a session killed by the server in
    the middle of a statement resumes the strand with the driver's error."""
    import asyncio

    import uvloop

    from pysysbench.core.errors import FatalSQLError
    from pysysbench.drivers.base import Counters
    from pysysbench.engine.strand import Strand

    driver, slow_sql = _driver_and_slow_sql(server_db)

    async def main():
        loop = asyncio.get_running_loop()
        counters = Counters()
        conn = await driver.connect(counters, index=0)
        try:
            assert conn.wire is not None
            point = await conn.prepare("SELECT 1 + ?")
            slow = await conn.prepare(slow_sql)
            during = []

            async def points():
                for i in range(50):
                    await point(i)
                return "ok"

            s = Strand(points(), loop, "points")
            assert await s.finished == "ok"
            assert counters.reads == 50

            async def sleeper():
                try:
                    await slow(5)
                finally:
                    during.append("finally")

            s = Strand(sleeper(), loop, "sleeper")
            await asyncio.sleep(0.2)
            assert conn.wire.strand is s and conn.wire.waiter is None and conn.wire.busy
            s.cancel()
            await asyncio.wait([s.finished], timeout=2)
            assert s.finished.cancelled() and during == ["finally"] and conn.wire.strand is None
        finally:
            await conn.close()
        # a statement after the session was closed fails at once (it would otherwise wait forever)
        s = Strand(point(7), loop, "after close")
        await asyncio.wait([s.finished], timeout=5)
        assert s.done() and isinstance(s.finished.exception(), FatalSQLError), s

        # the server ends the session while the strand waits: the driver's error, not a hang
        conn = await driver.connect(counters, index=1)
        try:
            slow = await conn.prepare(slow_sql)
            me = "SELECT CONNECTION_ID()" if server_db.name == "mysql" else "SELECT pg_backend_pid()"
            session = (await conn.fetchall(me))[0][0]
            s = Strand(slow(30), loop, "killed")
            await asyncio.sleep(0.3)
            kill = f"KILL {session}" if server_db.name == "mysql" else f"SELECT pg_terminate_backend({session})"
            await loop.run_in_executor(None, server_db.admin, kill)  # admin() runs its own event loop
            await asyncio.wait([s.finished], timeout=10)
            assert s.done(), "the strand was not resumed when its session was killed"
            assert isinstance(s.finished.exception(), FatalSQLError), s.finished.exception()
        finally:
            await conn.close()

    uvloop.run(main())


def test_python_code_after_a_wire_response_in_the_c_loop_sees_the_strand_as_its_task(server_db):
    """The C event loop takes a wire's response straight from the strand (engine/strand.c's
    inner step) without registering the strand as asyncio's current task, which only Python
    code can ask for; a statement of Python code after a lean-wire statement (a driver
    library call with a timeout, a reconnect) must still find the strand there, and the
    strand must not stay registered once it has stopped running."""
    import asyncio
    import time

    import uvloop

    from pysysbench.core.rand import Rand
    from pysysbench.drivers.base import Counters
    from pysysbench.engine.strand import Strand
    from pysysbench.engine.worker import Limits
    from pysysbench.runtime import native
    from pysysbench.workloads.base import ID, native_step

    if not native.ENABLED:
        pytest.skip(f"the C extension is not in use: {native.describe()}")
    driver, _ = _driver_and_slow_sql(server_db)
    seen = []

    async def main():
        loop = asyncio.get_running_loop()
        counters = Counters()
        conn = await driver.connect(counters, index=0)
        try:
            point = await conn.prepare("SELECT 1 + ?")

            async def python_statement(i):
                seen.append(asyncio.current_task())
                async with asyncio.timeout(5):  # needs the current task (RuntimeError without one)
                    await asyncio.sleep(0)

            steps = [
                native_step((point, python_statement), 1, draws=(ID,), calls=((0, (0,)), (1, (0,))), per_table=False)
            ]
            r = Rand(7)
            limits = Limits(deadline_ns=time.perf_counter_ns() + 300_000_000)
            ev = native.EventLoop(steps, r.uniform, r.default, r.string, 1, 100, lambda tid, lat: None, 0, limits)

            async def body():
                await ev

            s = Strand(body(), loop, "c loop")
            await asyncio.wait_for(s.finished, 10)
            assert s.finished.exception() is None
            assert asyncio.current_task() is not s
        finally:
            await conn.close()
        return s

    s = uvloop.run(main())
    assert len(seen) > 10 and all(t is s for t in seen), (len(seen), {type(t).__name__ for t in seen})


def test_mariadb_cache_metadata_negotiated_and_followed(server_db):
    """On MariaDB 10.6+ the lean wire asks for MARIADB_CLIENT_CACHE_METADATA, as MariaDB's
    C client does: the server then leaves out the column definitions of a prepared
    statement's result sets after the first, and sends them again when the statement's
    columns change (here an ALTER TABLE adds one).  Statements run through both the C
    path (in a strand) and the Python path (in a Task) across the change, and the
    session stays in step: the value read back through the library is the one written."""
    if server_db.name != "mysql":
        pytest.skip("a MariaDB capability")
    import asyncio

    import uvloop

    from pysysbench.drivers.base import Counters
    from pysysbench.engine.strand import Strand

    driver, _ = _driver_and_slow_sql(server_db)
    server_db.admin(
        [
            "DROP TABLE IF EXISTS sbtest_meta",
            "CREATE TABLE sbtest_meta (id INT PRIMARY KEY, a INT)",
            "INSERT INTO sbtest_meta VALUES (1, 10), (2, 20)",
        ]
    )

    async def main():
        loop = asyncio.get_running_loop()
        counters = Counters()
        conn = await driver.connect(counters, index=0)
        try:
            assert conn.wire is not None and conn.wire.cache_metadata == 1
            select = await conn.prepare("SELECT * FROM sbtest_meta WHERE id <= ?")
            update = await conn.prepare("UPDATE sbtest_meta SET a = a + 1 WHERE id = ?")

            async def round_(n):
                for _ in range(n):
                    await select(2)
                    await update(1)

            await Strand(round_(5), loop, "before").finished
            await asyncio.wait_for(round_(5), 10)  # the Python statement path
            await loop.run_in_executor(None, server_db.admin, "ALTER TABLE sbtest_meta ADD COLUMN b INT DEFAULT 7")
            await asyncio.wait_for(Strand(round_(5), loop, "after").finished, 10)
            await asyncio.wait_for(round_(5), 10)
            assert (counters.reads, counters.writes) == (20, 20)
            rows = await conn.fetchall("SELECT a, b FROM sbtest_meta WHERE id = 1")
            assert [tuple(map(int, r)) for r in rows] == [(30, 7)]
        finally:
            await conn.close()

    try:
        uvloop.run(main())
    finally:
        server_db.admin("DROP TABLE IF EXISTS sbtest_meta")

    # not asked when the library's own result parsing is in use
    from pysysbench.command.cmdline import choose_driver, parse
    from pysysbench.drivers import REGISTRY

    values = parse(["oltp_point_select", *server_db.opts, "--db-fast-path=off", "run"]).values
    library_driver = REGISTRY[choose_driver(values)](values)

    async def library():
        conn = await library_driver.connect(Counters(), index=0)
        try:
            assert conn.wire is None and not getattr(conn.conn, "pysb_cache_metadata", False)
        finally:
            await conn.close()

    uvloop.run(library())
