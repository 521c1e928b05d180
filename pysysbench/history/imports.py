"""Getting runs into the store: result files and folders of them (a campaign's, or any
folder, walked for ``*.json``), and, through :func:`text_runs`, the plain-text output of the
real sysbench.

Each run is known by the SHA-256 of its file's bytes: a file already in the store is
counted, not stored again.  In a folder, a JSON file that is no result file (a campaign's
``manifest.json``) is skipped with its reason; a file named on the command line that is
no result file, a damaged one, or one that cannot be read fails, one line each.  The
import commits every :data:`BATCH` files, so an interrupted import keeps what it stored
and a second one takes up the rest.  Nothing here prints: ``progress`` is told how far
it got, and the :class:`ImportReport` says what happened.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import field
from typing import Any

from ..core.errors import NotAResultFile, UsageError
from ..core.record import record
from ..stats import results, textlog
from .store import Location, NewRun, Store

BATCH = 200  # files per transaction
NOT_A_RESULT = "not a pysysbench result file"
NOT_A_LOG = "neither a pysysbench result file nor a sysbench log with a run in it"


def text_runs(text: str, name: str) -> list[dict[str, Any]] | None:
    """The runs of a plain-text log of sysbench (0.5, 1.0.20, 1.1; pysysbench's own text
    too) as result documents, or None when the text holds no run (stats/textlog.py)."""
    runs = textlog.parse(text, name)
    return [textlog.to_result_doc(r) for r in runs] or None


@record(frozen=True)
class Candidate:
    """A file to import: named on the command line (``explicit``) or found in a folder."""

    path: str
    explicit: bool


@record
class ImportReport:
    """What an import did: files looked at, runs imported and already there, files
    skipped (by reason) and failed (one line each)."""

    files: int = 0
    imported: int = 0
    already: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)
    run_ids: list[int] = field(default_factory=list)

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


class Failed(Exception):
    """A file that could not be imported; its one line."""


class Skipped(Exception):
    """A file found in a folder that holds no run; its reason."""


class AlreadyThere(Exception):
    """A result file whose content the store holds already (not read further)."""


def candidates(args: Iterable[str]) -> list[Candidate]:
    """The files to import: each file named, every ``*.json`` under each folder named (walked
    recursively, in name order)."""
    out: list[Candidate] = []
    for arg in args:
        if os.path.isdir(arg):
            for root, dirs, files in os.walk(arg):
                dirs.sort()
                out.extend(Candidate(os.path.join(root, f), False) for f in sorted(files) if f.endswith(".json"))
        else:  # a file, or nothing: read_runs says which, in its turn
            out.append(Candidate(arg, True))
    return out


def parse_labels(items: Iterable[str]) -> dict[str, str]:
    """``KEY=VALUE`` items (``--label``) as a mapping; a malformed one is a usage error."""
    labels: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--label '{item}': expected KEY=VALUE")
        labels[key.strip()] = value
    return labels


def read_runs(c: Candidate, labels: Mapping[str, str], known: AbstractSet[str] = frozenset()) -> list[NewRun]:
    """The runs in the file of ``c``; raises :class:`Failed`, :class:`Skipped`, or
    :class:`AlreadyThere` when the hash of its bytes is ``known``."""
    try:
        with open(c.path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise Failed(f"'{c.path}': no such file or folder") from None
    except OSError as exc:
        raise Failed(f"'{c.path}': cannot read it: {exc.strerror}") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest in known:
        raise AlreadyThere()
    extra = tuple(sorted(labels.items()))
    source = os.path.abspath(c.path)
    try:
        doc = results.loads(data, c.path)
    except NotAResultFile as exc:
        if not c.explicit:
            raise Skipped(NOT_A_RESULT) from None
        docs = text_runs(data.decode("utf-8", "replace"), source)
        if docs is None:  # JSON of another kind says what it is; text is simply no result file
            raise Failed(str(exc) if data.lstrip()[:1] in (b"{", b"[") else f"'{c.path}' is {NOT_A_LOG}") from None
        return [
            NewRun(doc=d, source=source, content_hash=f"{digest}:{i}", source_kind="text-log", extra_labels=extra)
            for i, d in enumerate(docs)
        ]
    except UsageError as exc:  # damaged, or written by a newer pysysbench
        raise Failed(str(exc)) from None
    return [NewRun(doc=doc, source=source, content_hash=digest, extra_labels=extra)]


async def import_paths(
    store: Store,
    args: Iterable[str],
    *,
    labels: Mapping[str, str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    every: int = 100,
) -> ImportReport:
    """Import every run of ``args`` (files and folders) into ``store``; ``progress(done,
    total)`` is called every ``every`` files."""
    report = ImportReport()
    todo = candidates(args)
    known = await store.hashes()
    await store.begin()
    try:
        for done, c in enumerate(todo, 1):
            await _one(store, c, labels or {}, known, report)
            if done % BATCH == 0:
                await store.commit()
                await store.begin()
            if progress is not None and done % every == 0 and done < len(todo):
                progress(done, len(todo))
    except BaseException:
        await store.rollback()
        raise
    await store.commit()
    report.files = len(todo)
    return report


async def _one(store: Store, c: Candidate, labels: Mapping[str, str], known: set[str], report: ImportReport) -> None:
    try:
        runs = read_runs(c, labels, known)
    except AlreadyThere:
        report.already += 1
        return
    except Skipped as exc:
        report.skip(str(exc))
        return
    except Failed as exc:
        report.failed.append(str(exc))
        return
    for run in runs:
        run_id = None if run.content_hash in known else await store.add(run)
        known.add(run.content_hash)
        if run_id is None:
            report.already += 1
        else:
            report.imported += 1
            report.run_ids.append(run_id)


def record_folder(location: Location, folder: str) -> ImportReport:
    """Import a campaign's results folder into the store at ``location`` (``campaign run``
    does when a store is configured)."""

    async def go() -> ImportReport:
        store = await Store.open(location)
        try:
            return await import_paths(store, [folder])
        finally:
            await store.close()

    return asyncio.run(go())


def summary_line(report: ImportReport, location: Location) -> str:
    skipped = sum(report.skipped.values())
    reasons = "; ".join(f"{n} {reason}" for reason, n in sorted(report.skipped.items()))
    return (
        f"history import: {report.files} files: {report.imported} runs imported, {report.already} already there, "
        f"{skipped} skipped{f' ({reasons})' if reasons else ''}, {len(report.failed)} failed; "
        f"store: {location.shown()}"
    )
