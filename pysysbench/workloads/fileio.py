"""sysbench 1.0.20's ``fileio`` test as a pysysbench workload (the others: workloads/builtin.py).

``prepare`` creates --file-num files ``test_file.N`` in the working directory (only
there: the names have no directory part) of --file-total-size / --file-num bytes each,
written in --file-block-size blocks and fsynced; ``cleanup`` removes them; ``run`` opens
them (checking their sizes as 1.0.20 does, GH-196) and each event is one request of
sysbench's generator -- a read, a write or a periodic fsync -- in C
(workloads/builtin.c, Python twin builtin_core.py).  --file-io-mode sync and mmap are
supported; async (sysbench's libaio mode) is refused with one line: pysysbench has no
libaio binding.  --validate's checksums are not implemented (the flag is printed, the
blocks are not checked).  A write that fails (a full disk) ends the run with one line
naming the file, the position and the errno.
"""

from __future__ import annotations

import mmap
import os
import time
from typing import Any

from ..core.errors import ConfigError, RunAborted, WorkloadError
from ..core.options import Option, OptType
from . import builtin_core as core
from .base import Env, ThreadContext, register
from .builtin import BuiltinTest, Say, print_size, sysbench_size, timestamp

MIB = 1024.0 * 1024.0
MB = 1000.0 * 1000.0
G = "fileio options"
FILEIO_HELP = """fileio options:
  --file-num=N                  number of files to create [128]
  --file-block-size=N           block size to use in all IO operations [16384]
  --file-total-size=SIZE        total size of files to create [2G]
  --file-test-mode=STRING       test mode {seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw}
  --file-io-mode=STRING         file operations mode {sync,async,mmap} [sync]
  --file-async-backlog=N        number of asynchronous operatons to queue per thread [128]
  --file-extra-flags=[LIST,...] list of additional flags to use to open files {sync,dsync,direct} []
  --file-fsync-freq=N           do fsync() after this number of requests (0 - don't use fsync()) [100]
  --file-fsync-all[=on|off]     do fsync() after each write operation [off]
  --file-fsync-end[=on|off]     do fsync() at the end of test [on]
  --file-fsync-mode=STRING      which method to use for synchronization {fsync, fdatasync} [fsync]
  --file-merged-requests=N      merge at most this number of IO requests if possible (0 - don't merge) [0]
  --file-rw-ratio=N             reads/writes ratio for combined test [1.5]
"""
MODE_TEXT = {
    core.SEQWR: "sequential write (creation)",
    core.SEQREWR: "sequential rewrite",
    core.SEQRD: "sequential read",
    core.RNDRD: "random read",
    core.RNDWR: "random write",
    core.RNDRW: "random r/w",
}
FLAGS = {"sync": os.O_SYNC, "dsync": os.O_DSYNC, "direct": getattr(os, "O_DIRECT", 0)}


def file_name(i: int) -> str:
    return f"test_file.{i}"


def errno_text(exc: OSError) -> str:
    return f"errno = {exc.errno} ({os.strerror(exc.errno)})" if exc.errno else str(exc)


@register
class FileIO(BuiltinTest):
    """sysbench's file I/O test: prepare test files, then sequential or random reads, writes and fsyncs on them."""

    name = "fileio"
    kind = core.FILEIO
    options = [
        Option("file-num", OptType.INT, 128, "number of files to create", G),
        Option("file-block-size", OptType.STRING, "16384", "block size to use in all IO operations", G),
        Option("file-total-size", OptType.STRING, "2G", "total size of files to create", G),
        Option("file-test-mode", OptType.STRING, None, "test mode {seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw}", G),
        Option("file-io-mode", OptType.STRING, "sync", "file operations mode {sync,async,mmap}", G),
        Option("file-async-backlog", OptType.INT, 128, "number of asynchronous operatons to queue per thread", G),
        Option(
            "file-extra-flags", OptType.LIST, [], "list of additional flags to use to open files {sync,dsync,direct}", G
        ),
        Option(
            "file-fsync-freq", OptType.INT, 100, "do fsync() after this number of requests (0 - don't use fsync())", G
        ),
        Option("file-fsync-all", OptType.BOOL, False, "do fsync() after each write operation", G),
        Option("file-fsync-end", OptType.BOOL, True, "do fsync() at the end of test", G),
        Option(
            "file-fsync-mode", OptType.STRING, "fsync", "which method to use for synchronization {fsync, fdatasync}", G
        ),
        Option(
            "file-merged-requests",
            OptType.INT,
            0,
            "merge at most this number of IO requests if possible (0 - don't merge)",
            G,
        ),
        Option("file-rw-ratio", OptType.DOUBLE, 1.5, "reads/writes ratio for combined test", G),
    ]
    help_text = FILEIO_HELP

    def configure(self) -> None:
        v = self.values
        self.num = v.file_num
        if self.num <= 0:
            raise ConfigError(f"Invalid value for file-num: {self.num}")
        total = sysbench_size(v.file_total_size)
        if not total:
            raise ConfigError(f"Invalid value for file-total-size: {v.file_total_size}")
        self.total = total
        self.file_size = total // self.num
        mode = v.file_test_mode
        self.mode: int | None = None
        if mode is not None:
            if mode not in core.FILE_MODES:
                raise ConfigError(f"Invalid IO operations mode: {mode}.")
            self.mode = core.FILE_MODES[mode]
        io = v.file_io_mode or "sync"
        if io == "async":
            raise ConfigError(
                "--file-io-mode=async (sysbench's libaio mode) is not supported by pysysbench: use sync or mmap"
            )
        if io not in ("sync", "mmap"):
            raise ConfigError(f"unknown I/O mode: {io}")
        self.io_mode = io
        if v.file_merged_requests < 0:
            raise ConfigError(f"Invalid value for file-merged-requests: {v.file_merged_requests}.")
        block = sysbench_size(v.file_block_size)
        if not block:
            raise ConfigError(f"Invalid value for file-block-size: {v.file_block_size}.")
        self.block = block
        self.request = block * v.file_merged_requests if v.file_merged_requests > 0 else block
        self.extra = 0
        names = []
        for flag in v.file_extra_flags or []:
            if flag == "":
                continue
            if flag not in FLAGS:
                raise ConfigError(f"Invalid value for file-extra-flags: {flag}")
            if not FLAGS[flag]:
                raise ConfigError(f"--file-extra-flags={flag} is not supported on this platform.")
            self.extra |= FLAGS[flag]
            names.append(flag)
        self.flag_names = [n for n in ("sync", "dsync", "direct") if n in names]
        if v.file_fsync_freq < 0:
            raise ConfigError(f"Invalid value for file-fsync-freq: {v.file_fsync_freq}.")
        if v.file_fsync_mode not in ("fsync", "fdatasync"):
            raise ConfigError(f"Invalid fsync mode: {v.file_fsync_mode}.")
        if v.file_rw_ratio < 0:
            raise ConfigError(f"Invalid value for file-rw-ratio: {v.file_rw_ratio:g}.")
        self.fds: list[int] = []
        self.last = (0, 0, 0, 0, 0)

    def flags_line(self) -> str:
        if not self.flag_names:
            return "Extra file open flags: (none)"
        shown = "".join({"sync": "sync ", "dsync": "dsync ", "direct": "directio"}[n] for n in self.flag_names)
        return f"Extra file open flags: {shown}"

    # --- prepare / cleanup ---------------------------------------------------------------

    async def prepare(self, env: Env) -> None:
        say = env.say
        say(f"{self.num} files, {self.file_size // 1024}Kb each, {self.file_size * self.num // (1024 * 1024)}Mb total")
        say("Creating files for the test...")
        say(self.flags_line())
        block = bytes(self.block)
        written = 0
        start = time.perf_counter()
        for i in range(self.num):
            name = file_name(i)
            try:
                fd = os.open(name, os.O_CREAT | os.O_WRONLY | self.extra, 0o600)
            except OSError as exc:
                raise WorkloadError(f"Can't open file {errno_text(exc)}") from None
            try:
                offset = os.lseek(fd, 0, os.SEEK_END)
                if offset >= self.file_size:
                    say(f"Reusing existing file {name}")
                elif offset > 0:
                    say(f"Extending existing file {name}")
                else:
                    say(f"Creating file {name}")
                # O_DIRECT wants an aligned buffer: an anonymous mapping is page-aligned
                buf = mmap.mmap(-1, self.block) if self.extra & FLAGS["direct"] else block
                view = memoryview(buf)
                while offset < self.file_size:
                    done = 0
                    while done < self.block:  # a short write: the next one says why (ENOSPC, EFBIG)
                        done += os.write(fd, view[done:])
                    written += self.block
                    offset += self.block
                os.fsync(fd)
            except OSError as exc:
                raise WorkloadError(f"Failed to write file! {errno_text(exc)}") from None
            finally:
                os.close(fd)
        seconds = time.perf_counter() - start
        if written:
            say(f"{written} bytes written in {seconds:.2f} seconds ({written / MIB / seconds:.2f} MiB/sec).")
        else:
            say("No bytes written.")

    async def cleanup(self, env: Env) -> None:
        env.say("Removing test files...")
        for i in range(self.num):
            try:
                os.unlink(file_name(i))
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise WorkloadError(f"Cannot remove file '{file_name(i)}' {errno_text(exc)}") from None

    # --- run -----------------------------------------------------------------------------

    def params(self) -> dict[str, int]:
        v = self.values
        return {
            "mode": self.mode,
            "file_size": self.file_size,
            "total_size": self.file_size * self.num,
            "block_size": self.block,
            "request_size": self.request,
            "fsync_freq": v.file_fsync_freq,
            "fsync_all": v.file_fsync_all,
            "fdatasync": v.file_fsync_mode == "fdatasync",
            "mmap": self.io_mode == "mmap",
        }

    def run_intro(self, say: Say) -> None:
        v = self.values
        if self.mode is None:
            # sysbench's FATAL line, then the test's options
            raise ConfigError("Missing required argument: --file-test-mode\n\n" + FILEIO_HELP.rstrip("\n"))
        say(self.flags_line())
        say(f"{self.num} files, {print_size(self.file_size)} each")
        say(f"{print_size(self.file_size * self.num)} total file size")
        say(f"Block size {print_size(self.block)}")
        if v.file_merged_requests > 0:
            say(f"Merging requests up to {print_size(self.request)} for sequential IO.")
        if self.mode in (core.RNDRD, core.RNDWR, core.RNDRW):
            say(f"Number of IO requests: {v.events}")
            say(f"Read/Write ratio for combined random IO test: {v.file_rw_ratio:2.2f}")
        if v.file_fsync_freq > 0:
            say(f"Periodic FSYNC enabled, calling fsync() each {v.file_fsync_freq} requests.")
        if v.file_fsync_end:
            say("Calling fsync() at the end of test, Enabled.")
        if v.file_fsync_all:
            say("Calling fsync() after each write operation.")
        say(f"Using {'synchronous' if self.io_mode == 'sync' else 'fast mmaped'} I/O mode")
        say(f"Doing {MODE_TEXT[self.mode]} test")
        self.open_files()
        try:
            self.shared = core.make(self.kind, self.params(), tuple(self.fds), v.file_rw_ratio)
        except OSError as exc:
            self.close_files()
            raise WorkloadError(f"mmap() failed on the test files {errno_text(exc)}") from None

    def open_files(self) -> None:
        flags = os.O_RDWR | self.extra | (os.O_CREAT if self.mode == core.SEQWR else 0)
        for i in range(self.num):
            name = file_name(i)
            try:
                fd = os.open(name, flags, 0o600)
            except OSError as exc:
                self.close_files()
                raise WorkloadError(
                    f"Cannot open file '{name}' {errno_text(exc)}\nWARNING: Did you forget to run the prepare step?"
                ) from None
            self.fds.append(fd)
            if self.mode == core.SEQWR:
                if self.io_mode == "mmap":
                    os.ftruncate(fd, self.file_size)
                continue
            size = os.fstat(fd).st_size
            if size < self.file_size:
                self.close_files()
                raise WorkloadError(
                    f"Size of file '{name}' is {print_size(size)}, but at least "
                    f"{print_size(self.file_size)} is expected.\n"
                    "WARNING: Did you run 'prepare' with different --file-total-size or "
                    "--file-num values?"
                )

    def close_files(self) -> None:
        if self.shared is not None:
            self.shared.close()
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []

    async def thread_init(self, ctx: ThreadContext) -> None:
        if self.shared is None:
            self.run_intro(lambda line: None)
        await super().thread_init(ctx)

    async def thread_done(self, ctx: ThreadContext) -> None:
        if self.values.file_fsync_end and self.mode not in (core.SEQRD, core.RNDRD):
            try:
                ctx.state["runner"].fsync_all()
            except OSError as exc:
                raise self.io_error(exc) from None

    def io_error(self, exc: OSError) -> Exception:
        return RunAborted(f"{exc.strerror} {errno_text(exc)}")

    def finish(self) -> None:
        self.close_files()

    # --- reports -------------------------------------------------------------------------

    def _delta(self) -> tuple[int, ...]:
        now = self.shared.stats() if self.shared is not None else (0, 0, 0, 0, 0)
        out = tuple(a - b for a, b in zip(now, self.last))
        self.last = now
        return out

    def report_intermediate(self, st: Any, say: Say) -> bool:
        _, _, fsyncs, rbytes, wbytes = self._delta()
        sec = st.interval_s or float("nan")
        pct = st.latency_pct_ms if st.percentile > 0 else 0.0
        say(
            f"{timestamp(st.time_s)}reads: {rbytes / MIB / sec:4.2f} MiB/s writes: {wbytes / MIB / sec:4.2f} "
            f"MiB/s fsyncs: {fsyncs / sec:4.2f}/s latency (ms,{st.percentile}%): {pct:4.3f}"
        )
        return True

    def report_cumulative(self, s: Any, say: Say) -> None:
        self.last = (0, 0, 0, 0, 0)  # the cumulative figures: since the start
        reads, writes, fsyncs, rbytes, wbytes = self._delta()
        sec = s.elapsed_s or float("nan")
        if self.values.get("sysbench_compat") == "1.1":
            for line in report_11(s, sec, reads, writes, fsyncs, rbytes, wbytes):
                say(line)
            return
        say("")
        say("File operations:")
        say(f"    reads/s:                      {reads / sec:4.2f}")
        say(f"    writes/s:                     {writes / sec:4.2f}")
        say(f"    fsyncs/s:                     {fsyncs / sec:4.2f}")
        say("")
        say("Throughput:")
        say(f"    read, MiB/s:                  {rbytes / MIB / sec:4.2f}")
        say(f"    written, MiB/s:               {wbytes / MIB / sec:4.2f}")
        super().report_cumulative(s, say)


def report_11(s: Any, sec: float, reads: int, writes: int, fsyncs: int, rbytes: int, wbytes: int) -> list[str]:
    """sysbench 1.1.0's fileio report (file_report_cumulative): IOPS and both units, then the
    latency in its own column widths, and no thread fairness."""

    def ms(ns: float) -> str:
        return f"{ns / 1e9 * 1000:10.2f}"

    pct = (
        f"        {s.percentile:3d}th percentile:                {s.latency_pct_ms / 1000.0 * 1000:10.2f}"
        if s.percentile > 0
        else "         percentile stats:               disabled"
    )
    return [
        "",
        "Throughput:",
        f"         read:  IOPS={reads / sec:4.2f} {rbytes / MIB / sec:4.2f} MiB/s ({rbytes / MB / sec:4.2f} MB/s)",
        f"         write: IOPS={writes / sec:4.2f} {wbytes / MIB / sec:4.2f} MiB/s ({wbytes / MB / sec:4.2f} MB/s)",
        f"         fsync: IOPS={fsyncs / sec:4.2f}",
        "",
        "Latency (ms):",
        f"         min:                            {ms(s.lat_min_ns)}",
        f"         avg:                            {ms(s.lat_avg_ns)}",
        f"         max:                            {ms(s.lat_max_ns)}",
        pct,
        f"         sum:                            {ms(s.lat_sum_ns)}",
        "",
    ]
