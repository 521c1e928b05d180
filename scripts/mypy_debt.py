"""Rewrite the mypy debt block at the end of pyproject.toml: the error codes mypy still finds,
per module, as ``disable_error_code`` overrides (the gate then fails on anything new).

    .venv/bin/python scripts/mypy_debt.py

Run it after fixing errors (the block shrinks); never to hide new ones.
"""

from __future__ import annotations

import collections
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEGIN = "# --- mypy debt: begin"
END = "# --- mypy debt: end ---\n"
ERROR = re.compile(r"(pysysbench/\S+?)\.pyi?:\d+: error: .*\[([a-z-]+)\]$")


def without_debt(text: str) -> str:
    if BEGIN not in text:
        return text
    return text[: text.index(BEGIN)] + text[text.index(END) + len(END) :]


def debt() -> dict[str, set[str]]:
    out = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True).stdout
    found: dict[str, set[str]] = collections.defaultdict(set)
    for line in out.splitlines():
        if m := ERROR.match(line):
            found[m[1].replace("/", ".").removesuffix(".__init__")].add(m[2])
    return found


def block(found: dict[str, set[str]]) -> str:
    groups: dict[tuple[str, ...], list[str]] = collections.defaultdict(list)
    for module, codes in found.items():
        groups[tuple(sorted(codes))].append(module)
    lines = [BEGIN + " (errors mypy still finds, by module and code: shrink it, never grow it) ---"]
    for codes, modules in sorted(groups.items(), key=lambda kv: sorted(kv[1])[0]):
        lines += [
            "[[tool.mypy.overrides]]",
            "module = [" + ", ".join(f'"{m}"' for m in sorted(modules)) + "]",
            "disable_error_code = [" + ", ".join(f'"{c}"' for c in codes) + "]",
        ]
    return "\n".join(lines) + "\n" + END


def main() -> None:
    path = ROOT / "pyproject.toml"
    path.write_text(without_debt(path.read_text()))
    found = debt()
    path.write_text(path.read_text().rstrip("\n") + "\n\n" + block(found))
    print(f"mypy debt: {sum(map(len, found.values()))} codes in {len(found)} modules")


if __name__ == "__main__":
    main()
