"""The one way pysysbench writes a file it produces: result files, campaign
manifests, reports, comparisons and exports.

:func:`write_atomic` writes a temporary file next to the target, fsyncs it,
renames it over the target and fsyncs the directory, so a reader (or a crash)
sees either the old file or the whole new one, never half of it; on any
failure the temporary file is removed.  :func:`check_writable` asks the same
questions before a run starts, so a run is not measured into a path that
cannot take its result.  Every failure is one :class:`UsageError` line naming
the path and the problem (a directory, a missing or non-directory parent, no
permission, a read-only file system, no space left).  Missing parent
directories are created.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

from .errors import UsageError

TMP_PREFIX = ".pysysbench-"
TMP_SUFFIX = ".tmp"

_PROBLEMS = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EISDIR: "it is a directory: give a file name",
    errno.ENOTDIR: "a parent in the path is not a directory",
    errno.ENAMETOOLONG: "the name is too long",
}
_IN_DIRECTORY = {  # problems of the directory the file goes into
    errno.EROFS: "'{dir}' is on a read-only file system",
    errno.EACCES: "no permission to create files in '{dir}'",
    errno.EPERM: "no permission to create files in '{dir}'",
    errno.ENOENT: "its directory '{dir}' does not exist",
}


def problem(exc: OSError, directory: str = "") -> str:
    """What went wrong, in the words of a one-line error."""
    if exc.errno in _PROBLEMS:
        return _PROBLEMS[exc.errno]
    if exc.errno in _IN_DIRECTORY:
        directory = directory or os.path.dirname(exc.filename or "") or "."
        if exc.errno == errno.ENOENT and os.path.isdir(directory):  # /proc: there, but takes no new file
            return f"files cannot be created in '{directory}'"
        return _IN_DIRECTORY[exc.errno].format(dir=directory)
    text = exc.strerror or str(exc)
    return text[:1].lower() + text[1:]


def private_file(folder: str, prefix: str, what: str, suffix: str = "") -> tuple[int, str]:
    """(fd, path) of a new file of this user's alone (0600, ``O_EXCL``) in ``folder``, named
    ``prefix``, random hex and ``suffix``, as tempfile.mkstemp makes one without importing
    tempfile (with random and shutil, a tenth of a Lua run's imports).  FileExistsError
    naming ``what`` after 100 names taken."""
    for _ in range(100):
        path = os.path.join(folder, f"{prefix}{os.urandom(6).hex()}{suffix}")
        try:
            return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError(f"cannot create a file for {what} in {folder}")


def _error(what: str, path: str, reason: str) -> UsageError:
    return UsageError(f"cannot write {what} '{path}': {reason}")


def _directory(what: str, path: str) -> tuple[str, str]:
    """(absolute target, its directory, created if missing); the target must not be a directory."""
    target = os.path.abspath(path)
    if os.path.isdir(target):
        raise _error(what, path, _PROBLEMS[errno.EISDIR])
    directory = os.path.dirname(target)
    try:
        os.makedirs(directory, exist_ok=True)
    except (FileExistsError, NotADirectoryError):  # a file where a directory should be
        raise _error(what, path, _PROBLEMS[errno.ENOTDIR]) from None
    except OSError as exc:
        raise _error(
            what,
            path,
            f"its directory '{directory}' does not exist and cannot be created: "
            f"{problem(exc, os.path.dirname(exc.filename or directory))}",
        ) from None
    return target, directory


def check_writable(path: str, what: str = "result file") -> None:
    """Raise the error :func:`write_atomic` would raise for ``path``, as far as
    that can be known before writing (space may still run out later)."""
    target, directory = _directory(what, path)
    if _special(target):
        if not os.access(target, os.W_OK):
            raise _error(what, path, "no permission to write it")
        return
    import tempfile  # (shutil, random, ...): imported where a file is written or probed

    try:
        fd, tmp = tempfile.mkstemp(prefix=TMP_PREFIX, suffix=TMP_SUFFIX, dir=directory)
    except OSError as exc:
        raise _error(what, path, problem(exc, directory)) from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def _mode(target: str) -> int:
    """The mode a plain ``open()`` would give: the existing file's, else 0666 less the umask."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _fsync_directory(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return  # some file systems do not open directories; the rename is done either way
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _special(target: str) -> bool:
    """An existing target that is not a regular file (/dev/stdout, /dev/full, a pipe): written
    in place, never renamed over (that would replace the device with a file)."""
    try:
        return not stat.S_ISREG(os.stat(target).st_mode)
    except OSError:
        return False


def _write_in_place(target: str, path: str, raw: bytes, what: str) -> None:
    try:
        with open(target, "wb") as fh:
            fh.write(raw)
    except OSError as exc:
        raise _error(what, path, problem(exc, os.path.dirname(target))) from None


def write_atomic(path: str, data: str | bytes, what: str = "result file") -> None:
    """Write ``data`` to ``path`` durably and atomically (see the module docstring)."""
    target, directory = _directory(what, path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if _special(target):
        _write_in_place(target, path, raw, what)
        return
    tmp = None
    import tempfile  # (shutil, random, ...): imported where a file is written or probed

    try:
        fd, tmp = tempfile.mkstemp(prefix=TMP_PREFIX, suffix=TMP_SUFFIX, dir=directory)
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), _mode(target))
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise _error(what, path, problem(exc, directory)) from None
    finally:
        if tmp is not None:  # failed, or interrupted (KeyboardInterrupt) half-way
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    _fsync_directory(directory)


__all__ = ["write_atomic", "check_writable", "problem", "TMP_PREFIX"]
