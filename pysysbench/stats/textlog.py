"""sysbench's plain text output read back: years of logs become runs again.

Role: :func:`parse` turns the text a sysbench run printed -- sysbench 0.5's legacy report,
1.0.20's (which pysysbench prints by default) or 1.1's (``Throughput:``), one run or many
appended to one log, with the echoed command line when the log has it -- into frozen
:class:`TextRun` records; :func:`to_result_doc` gives one the shape of a result file
(:mod:`pysysbench.stats.results`) so a history store keeps it like any run.

What a log cannot tell is absent, never guessed: per-interval counts (the lines hold
rates), per-thread figures (the report holds their mean and deviation), error codes.
Passwords on an echoed command line are masked before they reach any field.

A log is cut into runs at each echoed command line (``sysbench ...``, ``+ sysbench ...``,
``$ sysbench ...``), each version banner (``sysbench 1.0.20 (using ...)``) and each
``Running the test with following options:``, whichever comes first for a run; text that
is none of sysbench's is skipped.  A run whose report never came (killed, truncated) is
kept with ``complete`` False; text with no run at all gives an empty list.
"""

from __future__ import annotations

import math
import re
from dataclasses import field
from typing import Any

from ..core.errors import UsageError
from ..core.record import record
from .histogram import LN_MIN_MS, N_BUCKETS, M, percentile_ms

SOURCE_KIND = "sysbench text output"
FORMATS = ("0.5", "1.0", "1.1")
MASK = "***"


@record(frozen=True, slots=True)
class TextInterval:
    """One intermediate report line; every figure is the per-second rate the line printed."""

    time_s: float
    threads: int
    tps: float | None = None  # events/s (eps on a generic line)
    qps: float | None = None
    reads_per_s: float | None = None
    writes_per_s: float | None = None
    others_per_s: float | None = None
    percentile: int | None = None
    latency_pct_ms: float | None = None
    errors_per_s: float | None = None
    reconnects_per_s: float | None = None
    queue_length: int | None = None  # --rate mode's following line
    concurrency: int | None = None
    kind: str = "sql"  # "sql" (1.0/1.1), "generic" (eps), "0.5"


@record(frozen=True, slots=True)
class TextSummary:
    """The cumulative report as printed (None: the report had no such line)."""

    reads: int | None = None
    writes: int | None = None
    others: int | None = None
    total_queries: int | None = None
    transactions: int | None = None
    tps: float | None = None
    queries: int | None = None
    qps: float | None = None
    read_write_requests: int | None = None  # 0.5
    read_write_per_s: float | None = None
    other_operations: int | None = None  # 0.5
    other_per_s: float | None = None
    errors: int | None = None
    errors_per_s: float | None = None
    reconnects: int | None = None
    reconnects_per_s: float | None = None
    unfinished: int | None = None
    total_time_s: float | None = None  # "total time" (1.0, 0.5) or "time elapsed" (1.1)
    events: int | None = None
    eps: float | None = None  # 1.1's "events/s (eps)"
    cpu_events_per_s: float | None = None  # the cpu test's "CPU speed"
    read_iops: float | None = None  # 1.1's fileio report ("read:  IOPS=..."), which has no event count
    write_iops: float | None = None
    fsync_iops: float | None = None
    execution_time_s: float | None = None  # 0.5's "total time taken by event execution"
    lat_min_ms: float | None = None
    lat_avg_ms: float | None = None
    lat_max_ms: float | None = None
    percentile: int | None = None  # 0: "percentile stats: disabled"
    lat_pct_ms: float | None = None
    lat_sum_ms: float | None = None
    fairness_events_avg: float | None = None
    fairness_events_stddev: float | None = None
    fairness_time_avg_s: float | None = None
    fairness_time_stddev_s: float | None = None
    complete: bool = False  # the report reached its last line ("execution time (avg/stddev)")


@record(frozen=True, slots=True)
class TextRun:
    """One run found in a log."""

    source: str  # the file (or whatever the caller named) it came from
    line: int  # 1-based line of the log where the run starts
    format: str  # "0.5", "1.0" or "1.1"
    tool: str = ""  # "sysbench" or "pysysbench", from the banner
    version: str = ""  # "1.0.20", "0.5", ... from the banner
    version_line: str = ""
    command_line: str = ""  # as echoed, passwords masked
    args: tuple[str, ...] = ()  # its words after ``sysbench`` (masked): a result file's ``command_line``
    command: str = "run"
    test: str = ""
    threads: int | None = None
    options: dict[str, str] = field(default_factory=dict, hash=False)  # from the command line and banner
    intervals: tuple[TextInterval, ...] = ()
    summary: TextSummary | None = None
    checkpoints: tuple[tuple[float, TextSummary], ...] = ()  # --report-checkpoints: (time, report)
    histogram: tuple[tuple[float, int], ...] = ()  # (value ms as printed, count)
    fatal: tuple[str, ...] = ()  # FATAL: lines
    complete: bool = False  # the cumulative report is all there

    def to_result_doc(self) -> dict[str, Any]:
        """This run in the shape of a pysysbench result file (see :func:`to_result_doc`)."""
        return to_result_doc(self)


# ---------------------------------------------------------------- command lines

_SECRET = re.compile(
    r"(--[\w.-]*pass(?:word|wd)?[\w.-]*)(=(?:'[^']*'|\"[^\"]*\"|\S*)|[ \t]+(?!-)(?:'[^']*'|\"[^\"]*\"|\S+))", re.I
)
_PROMPT = re.compile(r"^\s*(?:\++\s+|(?:\[[^\]]*\]|\S*)[$#%>]\s+)?")
_CUT = re.compile(r"\s(?:\||\|\||&&|;|&|\d?>>?\S*|<\S*)(?:\s|$)")
_PREFIX_WORDS = {"sudo", "time", "nohup", "env", "exec", "command", "numactl", "taskset", "nice", "ionice", "-m"}
_COMMAND_WORDS = {"run", "prepare", "cleanup", "help", "prewarm", "check"}


def mask_secrets(text: str) -> str:
    """``text`` with every ``--*password*=VALUE`` (or ``--*password* VALUE``) value as ``***``."""
    return _SECRET.sub(lambda m: m.group(1) + ("=" + MASK if m.group(2).startswith("=") else " " + MASK), text)


def _is_prefix(word: str) -> bool:
    base = word.rsplit("/", 1)[-1]
    return (
        base in _PREFIX_WORDS
        or base.startswith("python")
        or word.startswith("-")
        or re.fullmatch(r"\w+=\S*|[0-9a-fx,-]+", word) is not None
    )


def _split(text: str) -> list[str]:
    """A command's words as the shell reads them (quotes removed), or split at blanks when
    its quotes do not pair (a log line cut short)."""
    if "'" not in text and '"' not in text and "\\" not in text:
        return text.split()  # shlex costs 0.1 ms a line; most command lines need none of it
    import shlex

    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _command_words(line: str) -> list[str] | None:
    """The words after ``sysbench`` when ``line`` is an echoed sysbench command, else None."""
    prompt = _PROMPT.match(line).end()  # type: ignore[union-attr]  # the pattern always matches
    body = line[prompt:]
    cut = _CUT.search(body)
    words = _split(body[: cut.start()] if cut else body)
    for i, word in enumerate(words[:8]):
        if word.rsplit("/", 1)[-1] in ("sysbench", "pysysbench"):
            args = words[i + 1 :]
            if (prompt or all(_is_prefix(w) for w in words[:i])) and any(
                a.startswith("--") or a in _COMMAND_WORDS for a in args
            ):
                return args
            return None
    return None


def _read_command(args: list[str]) -> tuple[str, str, dict[str, str]]:
    """(test, command, options) of a command's words (values as typed, secrets masked)."""
    options: dict[str, str] = {}
    positional: list[str] = []
    for arg in args:
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            options[name] = (MASK if _SECRET.match(arg) else value) if eq else "on"
        elif not arg.startswith("-") and arg != MASK:  # MASK: the value of a spaced --*password* VALUE
            positional.append(arg)
    command = next((w for w in reversed(positional) if w in _COMMAND_WORDS), "")
    tests = [w for w in positional if w != command]
    test = tests[0] if tests else options.get("test", "")
    test = test.rsplit("/", 1)[-1]
    return (test[:-4] if test.endswith(".lua") else test), command or "run", options


# ---------------------------------------------------------------- line patterns

_BANNER = re.compile(r"^(py)?sysbench v?(\d+\.\d+[\w.+-]*?)(?::|\s+\(|\s*$)")
_SQL_LINE = re.compile(
    r"^\[\s*(\d+)s\s*\] thds: (\d+) tps:\s+(\S+) qps:\s+(\S+) \(r/w/o:\s+([^/\s]+)/([^/\s]+)/([^)\s]+)\) "
    r"lat \(ms,(\d+)%\):\s+(\S+) err/s:?\s+(\S+) reconn/s:\s+(\S+)"  # "%4.2f": " inf" pads to two spaces
)
_GENERIC_LINE = re.compile(r"^\[\s*(\d+)s\s*\] thds: (\d+) eps:\s+(\S+) lat \(ms,(\d+)%\):\s+(\S+)")
_LINE_05 = re.compile(
    r"^\[\s*(\d+)s\] threads: (\d+), tps: (\S+), reads: (\S+), writes: (\S+), "
    r"response time: (\S+?)ms \((\d+)%\), errors: (\S+), reconnects:\s*(\S+)"
)
_RATE_LINE = re.compile(r"^\[\s*(\d+)s\s*\] queue length: (\d+), concurrency: (\d+)")
_CHECKPOINT = re.compile(r"^\[\s*(\d+)s\s*\] Checkpoint report:")
_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?:?(?:\s+|$)")
_HIST_ROW = re.compile(r"^\s*(\d+\.\d+) \|\**\s+(\d+)\s*$")
_PERCENTILE = re.compile(r"(?:approx\.\s+)?(\d+)(?:th)? percentile")
_COUNT_RATE = re.compile(r"(\d+)\s+\((\S+) per sec\.\)")
_IOPS = re.compile(r"IOPS=(\S+)")


def _num(text: str) -> float:
    value = text.strip().removesuffix("ms").removesuffix("s")
    try:
        return float(value)
    except ValueError:
        return math.nan


def _int(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isdigit() else None


# ---------------------------------------------------------------- the cumulative report's lines

_COUNTS = {
    "read": "reads",
    "write": "writes",
    "other": "others",
    "total": "total_queries",
    "total number of events": "events",
    "Number of unfinished transactions on forced shutdown": "unfinished",
}
_RATED = {
    "transactions": ("transactions", "tps"),
    "queries": ("queries", "qps"),
    "read/write requests": ("read_write_requests", "read_write_per_s"),
    "other operations": ("other_operations", "other_per_s"),
    "ignored errors": ("errors", "errors_per_s"),
    "deadlocks": ("errors", "errors_per_s"),  # 0.4's only ignored error
    "reconnects": ("reconnects", "reconnects_per_s"),
}
_FIGURES = {
    "total time": "total_time_s",
    "time elapsed": "total_time_s",
    "events/s (eps)": "eps",
    "events per second": "cpu_events_per_s",
    "total time taken by event execution": "execution_time_s",
    "min": "lat_min_ms",
    "avg": "lat_avg_ms",
    "max": "lat_max_ms",
    "sum": "lat_sum_ms",
}
_PAIRS = {
    "events (avg/stddev)": ("fairness_events_avg", "fairness_events_stddev"),
    "execution time (avg/stddev)": ("fairness_time_avg_s", "fairness_time_stddev_s"),
}
# headings that open (or continue) a cumulative report; the value: a format they prove
_SECTIONS = {
    "SQL statistics:": "",
    "OLTP test statistics:": "0.5",
    "General statistics:": "",
    "Test execution summary:": "0.5",  # 0.4's name of it
    "Throughput:": "",
    "CPU speed:": "",
    "File operations:": "",
    "Latency (ms):": "",
    "response time:": "0.5",
    "per-request statistics:": "0.5",
    "queries performed:": "",
    "Threads fairness:": "",
}
_FIGURE_FORMAT = {"eps": "1.1"}  # a line only one format prints (1.1's "events/s (eps)")
_HIST_TITLE = "Latency histogram (values are in milliseconds)"


def _report_line(values: dict[str, Any], label: str, value: str) -> str:
    """Read one ``label: value`` line of a report into ``values``; the format it proves ("" none)."""
    iops = _IOPS.match(value.strip()) if label in ("read", "write", "fsync") else None
    if iops:  # 1.1's fileio "Throughput:" lines
        values[f"{label}_iops"] = _num(iops.group(1))
        return "1.1"
    if label in _COUNTS:
        number = _int(value)
        if number is not None:
            values[_COUNTS[label]] = number
    elif label in _RATED:
        m = _COUNT_RATE.match(value.strip())
        if m:
            count_key, rate_key = _RATED[label]
            values[count_key], values[rate_key] = int(m.group(1)), _num(m.group(2))
            return "0.5" if label in ("read/write requests", "other operations") else ""
    elif label in _FIGURES:
        values[_FIGURES[label]] = _num(value)
        if label == "sum" and "read_iops" in values:
            values["complete"] = True  # 1.1's fileio report ends with its latency: no thread fairness
        if label == "time elapsed" or label == "events/s (eps)":
            return "1.1"
    elif label in _PAIRS:
        avg, _, sd = value.strip().partition("/")
        values[_PAIRS[label][0]], values[_PAIRS[label][1]] = _num(avg), _num(sd)
        if label.startswith("execution"):
            values["complete"] = True
    elif label.endswith("percentile"):
        m = _PERCENTILE.search(label)
        if m:
            values["percentile"], values["lat_pct_ms"] = int(m.group(1)), _num(value)
            return "0.5" if label.startswith("approx") else ""
    elif label == "percentile stats" and value.strip() == "disabled":
        values["percentile"] = 0
    return ""


# ---------------------------------------------------------------- one run being read

_RANK_COMMAND, _RANK_BANNER, _RANK_RUNNING, _RANK_BODY = 0, 1, 2, 3


class _Run:
    """What has been read of one run so far (mutable; :meth:`freeze` makes the record)."""

    def __init__(self, line: int) -> None:
        self.line = line
        self.rank = -1
        self.closed = False  # its final report ended: more report text is another run
        self.tool = self.version = self.version_line = self.command_line = self.test = ""
        self.command = "run"
        self.args: list[str] = []
        self.threads: int | None = None
        self.options: dict[str, str] = {}
        self.banner_options: dict[str, str] = {}
        self.intervals: list[TextInterval] = []
        self.report: dict[str, Any] | None = None  # the open cumulative report
        self.checkpoint: float | None = None  # the open report is a checkpoint's
        self.summary: TextSummary | None = None
        self.checkpoints: list[tuple[float, TextSummary]] = []
        self.histogram: list[tuple[float, int]] = []
        self.fatal: list[str] = []
        self.proves = ""  # a format the body proved ("0.5", "1.1")
        self.running = False  # "Running the test with following options:" was seen

    def measured(self) -> bool:
        """Whether this is a run (not a prepare, a cleanup, a help text or an echo alone)."""
        if self.command in ("prepare", "cleanup", "help", "prewarm", "check") and not self.intervals:
            return False
        return self.rank >= _RANK_RUNNING and bool(
            self.running or self.intervals or self.summary or self.report or self.checkpoints
        )  # self.report: a report cut short, and no start of the run in the text

    def end_report(self) -> None:
        if not self.report:  # none open, or only headings (a stray "Threads fairness:")
            self.report = None
            return
        summary = TextSummary(**self.report)
        self.report = None
        if self.checkpoint is not None:
            self.checkpoints.append((self.checkpoint, summary))
            self.checkpoint = None
        else:
            self.summary = summary
            self.closed = summary.complete

    def format(self) -> str:
        if self.proves:
            return self.proves
        if self.tool == "sysbench" and self.version.startswith("0."):
            return "0.5"
        return "1.1" if self.version.startswith("1.1") else "1.0"

    def freeze(self, source: str) -> TextRun:
        self.end_report()
        options = {**self.banner_options, **self.options}
        threads = self.threads
        if threads is None:
            raw = options.get("threads", options.get("num-threads", options.get("num_threads", "")))
            threads = int(raw) if raw.isdigit() else None
        return TextRun(
            source=source,
            line=self.line,
            format=self.format(),
            tool=self.tool,
            version=self.version,
            version_line=self.version_line,
            command_line=self.command_line,
            args=tuple(self.args),
            command=self.command,
            test=self.test or ("cpu" if "cpu-max-prime" in options and not self.command_line else ""),
            threads=threads,
            options=options,
            intervals=tuple(self.intervals),
            summary=self.summary,
            checkpoints=tuple(self.checkpoints),
            histogram=tuple(self.histogram),
            fatal=tuple(self.fatal),
            complete=self.summary is not None and self.summary.complete,
        )


_BANNER_OPTIONS = (
    (re.compile(r"^Report intermediate results every (\d+) second"), "report-interval"),
    (re.compile(r"^Target transaction rate: (\d+)/sec"), "rate"),
    (re.compile(r"^Initializing random number generator from seed \((\d+)\)"), "rand-seed"),
    (re.compile(r"^Report checkpoint\(s\) at (.*) seconds"), "report-checkpoints"),
    (re.compile(r"^Prime numbers limit: (\d+)"), "cpu-max-prime"),
)


class _Reader:
    """Cuts a log into runs and hands each line to the run it belongs to."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.runs: list[TextRun] = []
        self.run: _Run | None = None
        self.in_histogram = False
        self.lineno = 0

    def finish(self) -> list[TextRun]:
        self._close()
        return self.runs

    def _close(self) -> None:
        if self.run is not None and self.run.measured():
            self.runs.append(self.run.freeze(self.source))
        self.run = None

    def _at(self, rank: int) -> _Run:
        """The run a marker of ``rank`` belongs to: the current one unless it is past that point."""
        run = self.run
        if run is None or run.closed or run.rank >= rank:
            self._close()
            run = self.run = _Run(self.lineno)
        run.rank = max(run.rank, rank)
        return run

    def _body(self) -> _Run:
        return self._at(_RANK_BODY) if self.run is None or self.run.closed else self._mark(_RANK_BODY)

    def _mark(self, rank: int) -> _Run:
        run = self.run
        assert run is not None
        run.rank = max(run.rank, rank)
        return run

    def feed(self, line: str) -> None:
        self.lineno += 1
        text = line.strip()
        if text[:2].isdigit() and text[4:5] == "-":  # a timestamp a logger put first (`ts`, ISO)
            stamp = _TIMESTAMP.match(text)
            if stamp:
                text = line = text[stamp.end() :]
        if self.in_histogram:
            if self._histogram_row(line, text):
                return
        if not text:
            return
        if "sysbench" in text and self._banner_or_command(text):
            return
        if text[0] == "[":
            self._bracketed(text)
        elif text in _SECTIONS:
            self._section(text)
        elif text == "Running the test with following options:":
            self._at(_RANK_RUNNING).running = True
        elif text == _HIST_TITLE:
            self._body()
            self.in_histogram = True
        elif text.startswith("FATAL:") and self.run is not None and not self.run.closed:
            self.run.fatal.append(mask_secrets(text[6:].strip()))
        elif self.run is not None and not self.run.closed:
            self._other(text)

    def _histogram_row(self, line: str, text: str) -> bool:
        m = _HIST_ROW.match(line)
        if m and self.run is not None:
            self.run.histogram.append((float(m.group(1)), int(m.group(2))))
            return True
        if text.startswith("value") and "distribution" in text:
            return True
        self.in_histogram = False
        return not text  # the one-space line that ends the block

    def _banner_or_command(self, text: str) -> bool:
        m = _BANNER.match(text)
        if m:
            run = self._at(_RANK_BANNER)
            run.tool = "pysysbench" if m.group(1) else "sysbench"
            run.version, run.version_line = m.group(2), text
            return True
        masked = mask_secrets(text)
        args = _command_words(masked)
        if args is None:
            return False
        run = self._at(_RANK_COMMAND)
        run.command_line = masked[_PROMPT.match(masked).end() :]  # type: ignore[union-attr]
        run.args = args
        run.test, run.command, run.options = _read_command(args)
        return True

    def _section(self, text: str) -> None:
        run = self.run
        if run is None or run.closed or (run.report is None and run.summary is not None):
            run = self._body()
        self._mark(_RANK_BODY)
        if run.report is None:
            run.report = {}
        run.proves = _SECTIONS[text] or run.proves

    def _other(self, text: str) -> None:
        run = self.run
        assert run is not None
        if run.report is not None:
            label, colon, value = text.partition(":")
            if colon:
                run.proves = _report_line(run.report, label.strip(), value) or run.proves
                if run.report.get("complete"):
                    run.end_report()
            return
        if text.startswith("Number of threads:"):
            run.threads = _int(text[18:])
            return
        for pattern, name in _BANNER_OPTIONS:
            m = pattern.match(text)
            if m:
                run.banner_options[name] = m.group(1)
                return

    def _bracketed(self, text: str) -> None:
        m = _SQL_LINE.match(text)
        if m:
            g = m.groups()
            self._body().intervals.append(
                TextInterval(
                    time_s=float(g[0]),
                    threads=int(g[1]),
                    tps=_num(g[2]),
                    qps=_num(g[3]),
                    reads_per_s=_num(g[4]),
                    writes_per_s=_num(g[5]),
                    others_per_s=_num(g[6]),
                    percentile=int(g[7]),
                    latency_pct_ms=_num(g[8]),
                    errors_per_s=_num(g[9]),
                    reconnects_per_s=_num(g[10]),
                )
            )
            return
        m = _GENERIC_LINE.match(text)
        if m:
            time_s, threads, eps, pct, lat = m.groups()
            self._body().intervals.append(
                TextInterval(
                    float(time_s),
                    int(threads),
                    tps=_num(eps),
                    percentile=int(pct),
                    latency_pct_ms=_num(lat),
                    kind="generic",
                )
            )
            return
        m = _LINE_05.match(text)
        if m:
            self._interval_05(m.groups())
            return
        self._rate_or_checkpoint(text)

    def _interval_05(self, g: tuple[str, ...]) -> None:
        run = self._body()
        run.proves = "0.5"
        run.intervals.append(
            TextInterval(
                time_s=float(g[0]),
                threads=int(g[1]),
                tps=_num(g[2]),
                reads_per_s=_num(g[3]),
                writes_per_s=_num(g[4]),
                latency_pct_ms=_num(g[5]),
                percentile=int(g[6]),
                errors_per_s=_num(g[7]),
                reconnects_per_s=_num(g[8]),
                kind="0.5",
            )
        )

    def _rate_or_checkpoint(self, text: str) -> None:
        run = self.run
        if run is None or run.closed:
            return
        m = _RATE_LINE.match(text)
        if m and run.intervals and run.intervals[-1].time_s == float(m.group(1)):
            import dataclasses

            last = run.intervals[-1]
            run.intervals[-1] = dataclasses.replace(last, queue_length=int(m.group(2)), concurrency=int(m.group(3)))
            return
        m = _CHECKPOINT.match(text)
        if m:
            run.end_report()
            run.checkpoint = float(m.group(1))


def parse(text: str | bytes, source: str = "") -> list[TextRun]:
    """Every sysbench run in ``text`` (a log of one run or many), in order; [] when it holds none.

    ``source`` names where the text came from (a file name) and is kept on each run.  Raises
    :class:`~pysysbench.core.errors.UsageError` only when ``text`` is not text at all."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    if not isinstance(text, str):
        raise UsageError(f"{source or 'the log'}: sysbench output is text, not {type(text).__name__}")
    reader = _Reader(source)
    for line in text.splitlines():
        reader.feed(line)
    return reader.finish()


def parse_file(path: str) -> list[TextRun]:
    """:func:`parse` of a file (any bytes that are not UTF-8 read as replacement characters)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise UsageError(f"cannot read sysbench log '{path}': {exc.strerror}") from None
    return parse(data, source=path)


# ---------------------------------------------------------------- as a result file


def _put(table: dict[str, Any], key: str, value: Any) -> None:
    """Set ``key`` unless the log did not give it (None, or a printed ``-nan`` or ``inf``: a
    0-second interval's rates)."""
    if value is not None and not (isinstance(value, float) and not math.isfinite(value)):
        table[key] = value


def bucket_of(value_ms: float) -> int:
    """The histogram bucket whose value prints as ``value_ms`` (``%12.3f``; the nearest one)."""
    if value_ms <= 0:
        return 0
    return min(N_BUCKETS - 1, max(0, round((math.log(value_ms) - LN_MIN_MS) * M)))


def histogram_counts(rows: tuple[tuple[float, int], ...]) -> dict[int, int]:
    """Bucket -> count of a printed histogram.  Below 0.03 ms neighbouring buckets print the
    same three decimals; rows are ascending and one per bucket, so each takes the next free one."""
    counts: dict[int, int] = {}
    last = -1
    for value, count in rows:
        i = max(bucket_of(value), last + 1)
        if i >= N_BUCKETS:
            break
        counts[i] = counts.get(i, 0) + count
        last = i
    return counts


def _latency(run: TextRun, s: TextSummary, counts: dict[int, int]) -> dict[str, Any]:
    from .results import RESULT_PERCENTILES

    lat: dict[str, Any] = {}
    sum_ms = s.lat_sum_ms if s.lat_sum_ms is not None else None
    if sum_ms is None and s.execution_time_s is not None:
        sum_ms = s.execution_time_s * 1000
    for key, value in (("min", s.lat_min_ms), ("avg", s.lat_avg_ms), ("max", s.lat_max_ms), ("sum", sum_ms)):
        _put(lat, key, value)
    _put(lat, "percentile", s.percentile)
    _put(lat, "percentile_value", s.lat_pct_ms)
    if counts and sum(counts.values()):
        hist = [0] * N_BUCKETS
        for i, n in counts.items():
            hist[i] = n
        lat.update({f"p{p:g}": percentile_ms(hist, p) for p in RESULT_PERCENTILES})
    if s.percentile and s.lat_pct_ms is not None:
        lat[f"p{s.percentile:g}"] = s.lat_pct_ms  # the printed figure wins over the rebuilt one
    return lat


def _summary_dict(run: TextRun, s: TextSummary) -> dict[str, Any]:
    counts = histogram_counts(run.histogram)
    out: dict[str, Any] = {}
    _put(out, "total_time_s", s.total_time_s)
    _put(out, "elapsed_s", s.total_time_s)
    _put(out, "threads", run.threads)
    events = s.events if s.events is not None else s.transactions
    _put(out, "events", events)
    tps = next((v for v in (s.eps, s.tps, s.cpu_events_per_s) if v is not None), None)  # eps: 4 decimals
    if tps is None and events is not None and s.total_time_s:
        tps = events / s.total_time_s
    if tps is None and s.read_iops is not None:  # 1.1's fileio: each request (fsyncs too) is an event
        tps = s.read_iops + (s.write_iops or 0.0) + (s.fsync_iops or 0.0)
    _put(out, "tps", tps)
    if s.transactions is not None and s.transactions != events:
        out["transactions"] = s.transactions  # 0.5 counted COMMITs, not events
    queries = {
        k: v
        for k, v in (("read", s.reads), ("write", s.writes), ("other", s.others), ("total", s.total_queries))
        if v is not None
    }
    if queries:
        out["queries"] = queries
    qps = s.qps
    if qps is None and s.read_write_per_s is not None:
        qps = s.read_write_per_s + (s.other_per_s or 0.0)
    _put(out, "qps", qps)
    for key in ("errors", "errors_per_s", "reconnects", "reconnects_per_s", "unfinished"):
        _put(out, key, getattr(s, key))
    out["latency_ms"] = _latency(run, s, counts)
    out["histogram"] = {str(i): n for i, n in sorted(counts.items())}
    fairness = {
        "events_avg": s.fairness_events_avg,
        "events_stddev": s.fairness_events_stddev,
        "time_avg_s": s.fairness_time_avg_s,
        "time_stddev_s": s.fairness_time_stddev_s,
    }
    out["fairness"] = {k: v for k, v in fairness.items() if v is not None and not math.isnan(v)}
    return out


def _interval_dicts(run: TextRun) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    previous = 0.0
    for iv in run.intervals:
        d: dict[str, Any] = {"time_s": iv.time_s, "interval_s": iv.time_s - previous, "threads": iv.threads}
        previous = iv.time_s
        for key, value in (
            ("tps", iv.tps),
            ("qps", iv.qps),
            ("reads_per_s", iv.reads_per_s),
            ("writes_per_s", iv.writes_per_s),
            ("others_per_s", iv.others_per_s),
            ("errors_per_s", iv.errors_per_s),
            ("reconnects_per_s", iv.reconnects_per_s),
            ("latency_pct_ms", iv.latency_pct_ms),
            ("queue_length", iv.queue_length),
            ("concurrency", iv.concurrency),
        ):
            _put(d, key, value)
        out.append(d)
    return out


def _driver(options: dict[str, str]) -> str:
    if options.get("db-driver"):
        return options["db-driver"]
    for family in ("mysql", "pgsql", "sqlite"):
        if any(name.startswith(family + "-") or name.startswith(family + "_") for name in options):
            return family
    return ""


def to_result_doc(run: TextRun) -> dict[str, Any]:
    """``run`` as a result document (:mod:`pysysbench.stats.results`'s shape, which ``load``
    accepts): what the log gave is filled, what it cannot give is absent (per-interval counts,
    per-thread figures, error codes, the client and the server) and ``source`` / ``implementation``
    say it was read from sysbench's text output, in which format and by which version."""
    from .results import FORMAT, FORMAT_VERSION
    from .steadiness import of_intervals

    intervals = _interval_dicts(run)
    summary = _summary_dict(run, run.summary) if run.summary is not None else None
    error = None
    if not run.complete:
        error = run.fatal[0] if run.fatal else "the log ends before the run's report (killed or truncated)"
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "tool": {"name": run.tool or "sysbench", "version": run.version},
        "implementation": {
            "source": SOURCE_KIND,
            "text_format": run.format,
            "sysbench_version": run.version,
            "version_line": run.version_line,
        },
        "source": {
            "kind": SOURCE_KIND,
            "path": run.source,
            "line": run.line,
            "format": run.format,
            "complete": run.complete,
        },
        "command_line": list(run.args),
        "test": run.test,
        "command": run.command,
        "driver": _driver(run.options),
        "server_version": "",
        "started_at": "",
        "options": dict(run.options),
        "summary": summary,
        "intervals": intervals,
        "steadiness": of_intervals(intervals) if summary is not None else None,
        "exit_code": None,
        "error": error,
        "interrupted": None,
        "labels": {},
        "campaign": None,
    }


__all__ = ["TextRun", "TextSummary", "TextInterval", "parse", "parse_file", "to_result_doc", "mask_secrets"]
