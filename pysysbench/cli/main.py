"""``pysysbench`` entry point: parse argv, pick the face, call the library
(``command.execute``, a subcommand), render, map exceptions to exit codes.
Only this layer prints or exits.
"""

from __future__ import annotations

import sys
import traceback

from ..command.cmdline import general_help, header, parse
from ..command.execute import execute
from ..core.errors import InvalidOption, PySysbenchError, UsageError, WorkloadError
from ..output import face
from ..output.printer import ALWAYS, DEBUG, EXIT_STDOUT_CLOSED, NOTICE, Printer, silence
from ..runtime import native
from . import subcommands
from .process import end_process, fill_closed_descriptors


def console() -> None:
    """The command (``pysysbench``, ``python -m pysysbench``): :func:`main`, then the exit."""
    end_process(main())


def main(argv: list[str] | None = None) -> int:
    fill_closed_descriptors()
    try:
        return _main(argv)
    except BrokenPipeError:
        # stdout closed early ("pysysbench ... | head"): stop quietly, as sysbench dies of SIGPIPE
        silence(sys.stdout)
        return EXIT_STDOUT_CLOSED


def _unwritable_output(out: Printer, code: int) -> int:
    """Standard output could not be written (closed with >&-, a full disk): the run stopped as
    for a closed pipe; one line on standard error says why, and the exit code is 1."""
    if out.failed is None:
        return code
    try:
        print(
            f"FATAL: cannot write to standard output ({out.failed[:1].lower() + out.failed[1:]}): the report is lost",
            file=sys.stderr,
            flush=True,
        )
    except (OSError, ValueError, AttributeError):
        pass
    return code if code not in (0, EXIT_STDOUT_CLOSED) else 1


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    out = Printer(verbosity=_early_verbosity(argv))
    debug = any(a.split("=", 1)[0] == "--debug" and a.split("=", 1)[-1] not in ("off", "0", "false") for a in argv)
    try:
        face.use(face.select())  # a bad PYSYSBENCH_COMPAT: one line (UsageError)
        native.check()
        return _unwritable_output(out, dispatch(argv, out))
    except UsageError as exc:
        _to_stderr(str(exc))
        return 1
    except PySysbenchError as exc:
        if debug:
            traceback.print_exc()
        _say_error(out, f"FATAL: {exc}")
        return _unwritable_output(out, exc.exit_code)
    except KeyboardInterrupt:
        _say_error(out, "FATAL: interrupted")
        return 130
    except Exception as exc:  # a bug: one line, the traceback with --debug
        if debug:
            traceback.print_exc()
        _say_error(
            out,
            f"FATAL: internal error: {type(exc).__name__}: {exc} (rerun with --debug for a "
            "traceback and please report it)",
        )
        return 1


def _to_stderr(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):  # standard error closed too: the exit code says it
        pass


def _say_error(out: Printer, line: str) -> None:
    """An error line where the output goes; on standard error when standard output failed."""
    if out.failed is not None:
        if "(stdout closed)" not in line:  # the stop it caused: _unwritable_output's line says it
            _to_stderr(line)
    else:
        out(line)


def _early_verbosity(argv: list[str]) -> int:
    """--verbosity / --debug as given on the command line, for the lines printed before
    the options are parsed (a test that is not found); the parsed value replaces it."""
    level = NOTICE
    for a in argv:
        name, _, value = a.partition("=")
        if name == "--verbosity" and value.isdigit():
            level = int(value)
        elif name == "--debug" and value not in ("off", "0", "false"):
            return DEBUG
    return level


def dispatch(argv: list[str], out: Printer) -> int:
    command = subcommands.find(argv[0]) if argv else None
    if command is not None:
        return command(argv[1:], out)
    try:
        inv = parse(argv)
    except WorkloadError:
        out(header())  # sysbench prints its first line before it looks for the test
        raise
    except InvalidOption as exc:
        # ... and before it checks the test's options (a general option's value: before it)
        if face.active().strict and not exc.sysbench_text:
            out(header())
        raise
    v = inv.values
    for line in inv.stderr_warnings:
        print(line, file=sys.stderr)
    if v.version:
        out(face.active().version_line(), ALWAYS)
        return 0
    if v.help or inv.test is None:
        out.raw(general_help(), ALWAYS)
        return 0 if v.help else 1
    if v.get("fault"):  # a lab node killed during the run: the lab layer's companion
        from ..command.run import use
        from ..lab.fault import companion

        use(companion)
    return execute(inv, out, argv)


if __name__ == "__main__":
    sys.exit(main())
