"""Reports, comparisons and exports, computed from result files only.

``model`` loads result files into runs and cells, ``tables`` decides what the
tables show, ``charts`` draws them with matplotlib, ``document`` assembles a
report, ``markdown`` / ``html`` / ``terminal`` render it, ``compare`` does the
comparison arithmetic and ``export`` writes CSV / JSON lines.  Nothing here
imports a database library.
"""

from .document import build, write
from .model import load_runs

__all__ = ["build", "load_runs", "write"]
