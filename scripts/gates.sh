#!/usr/bin/env bash
# The house's gates, run by .ci/run before the tests and runnable alone:
#   bash scripts/gates.sh            (PYTHON=/path/to/python to use another venv's tools)
# ruff (lint and format), mypy ([tool.mypy] in pyproject.toml), the C extension built with
# -Wall -Wextra -Werror (into a temporary folder: the built extension in place is left alone),
# the import layers (tests/unit/test_layers.py, the C includes among them), and the client's
# instructions per event on the dry-run driver against bench/client_cost_baseline.json
# (bench/client_cost_guard.py: cachegrind, about 40 s of CPU; needs valgrind, fails without it).
# Every gate runs; the exit status is non-zero when any failed.
set -uo pipefail

cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
PATHS=(pysysbench tests bench scripts)
failed=()

gate() {   # gate NAME COMMAND...: run one gate, remember its failure
    local name=$1
    shift
    echo "gates: $name"
    if ! "$@"; then
        echo "gates: FAILED: $name" >&2
        failed+=("$name")
    fi
}

c_werror() {   # the C is clean under -Wall -Wextra -Werror (the extension is optional: check it was built)
    local dir rc=0
    dir=$(mktemp -d /tmp/pysysbench-gates-c.XXXXXX)
    CFLAGS="-Wall -Wextra -Werror" "$PYTHON" setup.py -q build_ext --build-temp "$dir/tmp" --build-lib "$dir/lib" \
        >"$dir/log" 2>&1 || rc=$?
    if ((rc != 0)) || ! compgen -G "$dir/lib/pysysbench/_native*.so" >/dev/null; then
        grep -E "error|warning" "$dir/log" >&2 || cat "$dir/log" >&2
        rm -rf "$dir"
        return 1
    fi
    rm -rf "$dir"
}

gate "ruff check" "$PYTHON" -m ruff check "${PATHS[@]}"
gate "ruff format --check" "$PYTHON" -m ruff format --check --output-format concise "${PATHS[@]}"
gate "mypy" "$PYTHON" -m mypy
gate "C with -Wall -Wextra -Werror" c_werror
gate "import layers" "$PYTHON" -m pytest -q -p no:cacheprovider tests/unit/test_layers.py
gate "client cost per event (cachegrind)" "$PYTHON" bench/client_cost_guard.py

if ((${#failed[@]})); then
    echo "gates: ERROR: failed: ${failed[*]}" >&2
    exit 1
fi
echo "gates: all passed"
