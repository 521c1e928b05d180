"""Campaigns: sweeps of workloads x thread counts x repeats, run and stored as result files.

``spec`` reads and validates campaign files (TOML), ``plan`` turns them into
sysbench command lines, ``executor`` runs them through a backend (``backend``'s
in-process one: the library's command layer), keeps ``manifest.json`` and resumes,
``peak`` finds the thread count of peak throughput, ``noise`` holds the run-to-run
statistics.
"""

from .executor import Backend, CampaignRun, CommandOutcome, Events, RunRecord, estimate_runs, run_campaign
from .peak import Peak, find_peak
from .spec import Campaign, load

__all__ = [
    "Backend",
    "Campaign",
    "CampaignRun",
    "CommandOutcome",
    "Events",
    "Peak",
    "RunRecord",
    "estimate_runs",
    "find_peak",
    "load",
    "run_campaign",
]
