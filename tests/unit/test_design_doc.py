"""docs/design.md's map stays true to the code.

The layer lists of design.md (the fenced ``layers``, ``c-layers`` and ``lua-layers`` blocks)
are the ones tests/unit/test_layers.py enforces, each layer has its paragraph, the named
upward imports (the ``upward`` block) are exactly ``ALLOWED_UP`` with a reason each, and
every file and function the option walk names exists where it says, in the layer its step
names.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import test_layers

ROOT = Path(__file__).resolve().parents[2]
DESIGN = ROOT / "docs" / "design.md"
PKG = ROOT / "pysysbench"
MAX_UPWARD = 4  # issue 45: at most four named upward imports


def text() -> str:
    return DESIGN.read_text()


def block(kind: str) -> list[str]:
    """The lines of design.md's fenced block ```kind (exactly one)."""
    found = re.findall(rf"^```{re.escape(kind)}\n(.*?)^```$", text(), flags=re.MULTILINE | re.DOTALL)
    assert len(found) == 1, f"design.md must hold one ```{kind} block, found {len(found)}"
    return [line for line in found[0].splitlines() if line.strip()]


def rows(kind: str) -> list[tuple[str, ...]]:
    return [tuple(line.split()) for line in block(kind)]


def section(title: str) -> str:
    """The body of design.md's ``## title`` section."""
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text(), flags=re.MULTILINE | re.DOTALL)
    assert m, f"design.md has no section '## {title}'"
    return m.group(1)


def test_the_layers_are_test_layers_layers():
    assert rows("layers") == [tuple(names) for names in test_layers.LAYERS]


def test_each_layer_has_its_paragraph_in_order():
    """One paragraph per layer, lowest first, opening with the layer's names in bold."""
    heads = re.findall(r"^\*\*([^*]+)\.\*\*", section("The layers"), flags=re.MULTILINE)
    wanted = [", ".join(names) for names in test_layers.LAYERS]
    assert [h.replace("\\", "") for h in heads] == wanted


def test_the_c_layers_are_test_layers_c_layers():
    assert rows("c-layers") == [tuple(names) for names in test_layers.C_LAYERS]


def test_the_lua_layers_are_test_layers_lua_layers():
    assert rows("lua-layers") == [tuple(names) for names in test_layers.LUA_LAYERS]


def upward() -> dict[tuple[str, str], str]:
    out = {}
    for line in block("upward"):
        m = re.fullmatch(r"\s*([\w.]+)\s*->\s*([\w.]+)\s*:\s*(.*)", line)
        assert m, f"an upward import reads 'importer -> imported: reason', not {line!r}"
        out[(m.group(1), m.group(2))] = m.group(3).strip()
    return out


def test_the_upward_imports_are_allowed_up_with_a_reason_each():
    named = upward()
    assert set(named) == test_layers.ALLOWED_UP
    assert all(named.values()), "every upward import says why"
    assert len(named) <= MAX_UPWARD


def defined(path: Path) -> set[str]:
    """The names a module defines at its top: functions, classes (``Class`` and
    ``Class.method``) and assigned names."""
    out = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.add(node.name)
        elif isinstance(node, ast.ClassDef):
            out.add(node.name)
            out.update(
                f"{node.name}.{n.name}" for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            )
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out.update(t.id for t in targets if isinstance(t, ast.Name))
    return out


def walk_steps() -> list[tuple[str, str]]:
    """The option walk's numbered steps: (layer, text)."""
    body = section("A walk of one option from the command line to the wire")
    steps = re.findall(r"^\d+\. \*\*(\w+)\*\* — (.*?)(?=^\d+\. |\Z)", body, flags=re.MULTILINE | re.DOTALL)
    assert steps, "the option walk has no numbered steps ('1. **layer** — ...')"
    return steps


def test_the_walk_passes_each_layer_once():
    layers = [layer for layer, _ in walk_steps()]
    assert len(layers) == len(set(layers)), f"a layer named twice in the walk: {layers}"
    assert set(layers) <= set(test_layers.RANK), f"not layers: {set(layers) - set(test_layers.RANK)}"


def walk_names() -> list[tuple[str, str, str]]:
    """(step's layer, file, name) for every name the walk gives after a file: in each
    step, a backticked ``x/y.py`` names a file below pysysbench/ and each backticked
    identifier after it (``fn``, ``Class.method``) something that file defines."""
    out = []
    for layer, body in walk_steps():
        current = None
        for token in re.findall(r"`([^`]+)`", body):
            if token.endswith(".py"):
                current = token
                out.append((layer, token, ""))
            elif re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)?", token):
                assert current is not None, f"'{token}' in the walk's {layer} step comes before any file"
                out.append((layer, current, token))
    return out


@pytest.mark.parametrize("layer,file,name", walk_names())
def test_every_file_and_function_of_the_walk_exists(layer, file, name):
    path = PKG / file
    assert path.is_file(), f"the option walk names pysysbench/{file}, which does not exist"
    assert file.split("/")[0] == layer, f"pysysbench/{file} is not in the {layer} layer its step names"
    if name:
        assert name in defined(path), f"the option walk names {name} in pysysbench/{file}, which defines no such thing"
