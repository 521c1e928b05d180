"""The campaign manifest: ``manifest.json`` in the results directory.

Role: one document saying what the campaign is (file, hash, labels), what was
decided once (the table size, the server settings captured), how far it got
(prepare done, every run's status and headline figures, the peaks found) and
where each run's result file and log are.  It is rewritten atomically after
every step, so an interrupted campaign leaves an accurate manifest and the next
invocation resumes from it.  Never contains a password: command lines are
stored redacted.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from typing import Any

from ..core.files import write_atomic
from .spec import Campaign

FORMAT = "pysysbench-campaign-manifest"
FORMAT_VERSION = 1
FILE_NAME = "manifest.json"


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def path_in(results_dir: str) -> str:
    return os.path.join(results_dir, FILE_NAME)


def new(campaign: Campaign, results_dir: str, prior: dict[str, Any] | None) -> dict[str, Any]:
    """A fresh manifest; what was decided once (table size, prepare) is carried over."""
    prior = prior or {}
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "campaign": {
            "name": campaign.name,
            "description": campaign.description,
            "file": campaign.path,
            "sha256": campaign.sha256,
        },
        "labels": dict(campaign.labels),
        "results_dir": os.path.abspath(results_dir),
        "status": "running",
        "started_at": prior.get("started_at") or now(),
        "updated_at": now(),
        "table_size": prior.get("table_size"),
        "table_size_source": prior.get("table_size_source"),
        "server_settings": prior.get("server_settings") or {},
        "prepare": prior.get("prepare") or {"status": "not run"},
        "runs": {},
        "peaks": {},
    }


def load(results_dir: str) -> dict[str, Any] | None:
    """The manifest of an earlier invocation, or None (absent or unreadable: start over)."""
    path = path_in(results_dir)
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, json.JSONDecodeError):
        return None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        return None
    return doc


def save(results_dir: str, doc: dict[str, Any]) -> None:
    doc["updated_at"] = now()
    write_atomic(path_in(results_dir), json.dumps(doc, indent=1) + "\n", "campaign manifest")
