"""The --ray-* options, apart from engine/raygroup.py so that parsing a command line
does not import the Ray executor (start-up time counts in every run's client CPU)."""

from __future__ import annotations

from ..core.options import NON_NEGATIVE, Option, OptType

G = "General options"
RAY_OPTIONS = [
    Option(
        "ray-address",
        OptType.STRING,
        "",
        "run the threads as Ray actors on the Ray cluster at this address "
        "(HOST:PORT of its head node, or 'auto'); needs pysysbench[ray] on every node",
        G,
    ),
    Option(
        "ray-workers-per-node",
        OptType.INT,
        0,
        "with --ray-address: worker actors (one event loop each) per "
        "Ray node. 0 = one per CPU the node offers Ray (or the amount of --ray-resource)",
        G,
        bounds=NON_NEGATIVE,
    ),
    Option(
        "ray-resource",
        OptType.STRING,
        "",
        "with --ray-address: use only the Ray nodes offering this custom "
        "resource (ray start --resources='{\"NAME\": N}')",
        G,
        show_default=False,
    ),
]
