"""The declared workload contract (pysysbench/workloads/contract.py): every trait the
engine, the outputs and the CLI read is declared once, read plainly, and checked when a
workload class is made."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from pysysbench.core.errors import WorkloadError
from pysysbench.workloads import find_workload
from pysysbench.workloads.base import Workload
from pysysbench.workloads.contract import TRAITS, ReportHooks, check, conforms

PKG = Path(__file__).resolve().parents[2] / "pysysbench"
EXAMPLE = PKG.parent / "examples" / "custom_workload.py"
# an expression that names a workload or its class: ``workload``, ``self.workload``, ``inv.workload_cls``
WORKLOAD_NAME = re.compile(r"(^|_)workload(_cls)?$")
# trait names that are common words too (a driver's ``name``): flagged in getattr() on a workload only
COMMON_WORDS = {"name", "options", "commands", "source", "reports"}
# read by the engine's C event loop (engine/worker.py _c_loop) from a workload whose native_parts()
# is not None: the OLTP family's configure() sets them; no default fits any other workload
NATIVE_LOOP_STATE = {"tables", "table_size"}
HOOKS = {
    name for name, value in vars(Workload).items() if not name.startswith("_") and callable(getattr(Workload, name))
}


def package_files() -> list[Path]:
    return sorted(PKG.rglob("*.py"))


def terminal(node: ast.AST) -> str | None:
    """The last name of ``a.b.c`` (``c``), of ``a`` (``a``); None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def aliases(func: ast.AST) -> set[str]:
    """The local names of ``func`` that hold a workload or its class: parameters annotated
    ``Workload`` / ``type[Workload]`` and names assigned from a workload (``cls = inv.workload_cls``,
    ``w = self.workload``, tuple assignments included)."""
    out = set()
    args = getattr(func, "args", None)
    for arg in (args.args + args.kwonlyargs) if args else ():
        if arg.annotation is not None and re.search(r"\bWorkload\b", ast.unparse(arg.annotation)):
            out.add(arg.arg)
    for node in ast.walk(func):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        pairs = (
            zip(target.elts, value.elts)
            if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
            else [(target, value)]
        )
        for t, v in pairs:
            if isinstance(t, ast.Name) and names_a_workload(v, out):
                out.add(t.id)
    return out


def names_a_workload(node: ast.AST, local: set[str]) -> bool:
    name = terminal(node)
    return name is not None and (bool(WORKLOAD_NAME.search(name)) or isinstance(node, ast.Name) and name in local)


def scopes(tree: ast.AST):
    """The module and each function, with the workload names it holds and its own nodes (a
    nested function's are its own)."""

    def own(scope: ast.AST):
        todo = list(ast.iter_child_nodes(scope))
        while todo:
            node = todo.pop()
            yield node
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                todo.extend(ast.iter_child_nodes(node))

    yield set(), list(own(tree))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield aliases(node), list(own(node))


def defaulted_reads(tree: ast.AST) -> list[ast.Call]:
    """Every ``getattr(obj, "trait", ...)`` / ``hasattr(obj, "trait")`` in ``tree`` of a declared
    trait or hook, and every one of any constant name on a workload."""
    found = []
    for local, nodes in scopes(tree):
        for node in nodes:
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)
            ):
                continue
            attr, on_workload = node.args[1].value, names_a_workload(node.args[0], local)
            if on_workload or (attr in TRAITS or attr in HOOKS) and attr not in COMMON_WORDS:
                found.append(node)
    return found


def plain_reads() -> list[tuple[str, str]]:
    """(where, attribute) of every attribute read from a workload outside workloads/ and lua/
    (the engine, the outputs, the CLI, campaigns)."""
    found = []
    for path in package_files():
        if path.parent.name in ("workloads", "lua"):
            continue
        for local, nodes in scopes(ast.parse(path.read_text())):
            for node in nodes:
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.ctx, ast.Load)
                    and names_a_workload(node.value, local)
                ):
                    found.append((f"{path.relative_to(PKG.parent)}:{node.lineno}", node.attr))
    return found


def all_workload_classes() -> list[type]:
    import pysysbench.lua.script
    import pysysbench.workloads.legacy  # noqa: F401  (the 0.5 scripts)

    out, todo = [], [Workload]
    while todo:
        for sub in todo.pop().__subclasses__():
            out.append(sub)
            todo.append(sub)
    return out


# --- the contract lists what is read, and nothing reads around it ------------------------------


def test_no_trait_is_read_with_a_default():
    found = [
        f"{path.relative_to(PKG.parent)}:{node.lineno}: {ast.unparse(node)}"
        for path in package_files()
        for node in defaulted_reads(ast.parse(path.read_text()))
    ]
    assert found == [], "read a trait plainly (the base declares its default in workloads/contract.py)"


def test_every_attribute_read_from_a_workload_is_declared():
    reads = plain_reads()
    assert len(reads) > 20, "the scan finds the engine's and the CLI's reads"
    undeclared = [
        f"{where}: .{attr}" for where, attr in reads if not hasattr(Workload, attr) and attr not in NATIVE_LOOP_STATE
    ]
    assert undeclared == [], "declare it in workloads/contract.py (a trait) or on Workload (a hook)"


def test_the_scans_find_what_they_look_for():
    tree = ast.parse(
        "def f(inv, w: Workload, d):\n    cls = inv.workload_cls\n"
        "    getattr(d, 'name', ''), getattr(d, 'batched', 0), hasattr(self.workload, 'x')\n"
        "    return cls.batched, getattr(cls, 'help_text', ''), w.os_threads\n"
    )
    func = tree.body[0]
    assert aliases(func) == {"cls", "w"}
    reads = [n.attr for n in ast.walk(func) if isinstance(n, ast.Attribute) and names_a_workload(n.value, {"cls", "w"})]
    assert sorted(reads) == ["batched", "os_threads"]
    assert sorted(ast.unparse(n) for n in defaulted_reads(tree)) == [
        "getattr(cls, 'help_text', '')",
        "getattr(d, 'batched', 0)",
        "hasattr(self.workload, 'x')",
    ]


def test_each_trait_has_a_type_a_default_of_that_type_and_a_meaning():
    assert {
        "os_threads",
        "batched",
        "own_event_limit",
        "ready_notes",
        "tx_per_event",
        "runs_own_commands",
        "help_text",
        "logs_messages",
        "reports",
        "measures_the_client",
        "accepts_unknown_options",
        "inert_options",
        "connects",
        "holds_loop",
    } <= set(TRAITS)
    for trait in TRAITS.values():
        assert conforms(trait.default, trait.type), trait
        assert trait.doc and "\n" not in trait.doc, trait
        assert getattr(Workload, trait.name) is trait.default
    assert {"run_intro", "after_parse", "dispatch", "event_steps", "io_error"} <= HOOKS


# --- every workload fits ------------------------------------------------------------------------------


def test_every_workload_class_fits_the_contract(tmp_path):
    from pysysbench.lua.script import LuaWorkload
    from pysysbench.workloads.builtin import BuiltinTest
    from pysysbench.workloads.legacy_options import LegacyMixin

    classes = all_workload_classes()
    for cls in classes:  # checked when made; and still so after the registry set name and source
        check(cls, Workload)
    assert any(issubclass(c, BuiltinTest) for c in classes) and any(issubclass(c, LegacyMixin) for c in classes)
    script = tmp_path / "mine.lua"
    script.write_text("function event() end\n")
    lua = find_workload(str(script))  # a Lua script's class is made (and checked) per script
    assert issubclass(lua, LuaWorkload) and lua.runs_own_commands and not lua.connects
    user = find_workload(str(EXAMPLE))
    assert user.name == "k_lookup" and not user.batched
    assert find_workload("cpu").batched and find_workload("cpu").os_threads and find_workload("memory").own_event_limit


def test_report_hooks_of_builtins_and_lua_scripts_fit_the_protocol():
    from pysysbench.lua.reports import Reports as LuaReports
    from pysysbench.workloads.builtin import Reports as BuiltinReports

    members = [name for name in vars(ReportHooks) if not name.startswith("_")]
    assert set(members) == {"attach", "sql", "intermediate", "checkpoint", "cumulative"}
    for cls in (LuaReports, BuiltinReports):
        assert all(callable(getattr(cls, name, None)) for name in members), cls


# --- a bad class fails clearly ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, says",
    [
        ({"os_threads": 1}, "trait 'os_threads' must be bool, not int (1)"),
        ({"tx_per_event": True}, "trait 'tx_per_event' must be int, not bool"),
        ({"ready_notes": ["x"]}, "trait 'ready_notes' must be tuple[str, ...], not list"),
        ({"inert_options": {"x": 1}}, "trait 'inert_options' must be dict[str, str]"),
        ({"options": ["--x"]}, "trait 'options' must be list[Option]"),
        ({"reports": "mine"}, "trait 'reports' must be ReportHooks | None"),
        ({"os_thread": True}, "'os_thread' is no trait of the workload contract: did you mean 'os_threads'?"),
        ({"batch": True}, "did you mean 'batched'?"),
        ({"own_events_limit": True}, "did you mean 'own_event_limit'?"),
        ({"run_intro": "Running the test"}, "'run_intro' must be a method, as Workload.run_intro is"),
    ],
)
def test_a_bad_workload_class_fails_naming_the_class_and_the_trait(body, says):
    with pytest.raises(WorkloadError) as err:
        type("Mistaken", (Workload,), body)
    assert str(err.value).startswith("workload class Mistaken (")
    assert says in str(err.value) and "pysysbench/workloads/contract.py" in str(err.value)


def test_a_mixin_s_traits_are_checked_too():
    class Old:
        accepts_unknown_options = "yes"

    with pytest.raises(WorkloadError, match="trait 'accepts_unknown_options' must be bool"):
        type("OldScript", (Old, Workload), {})


def test_a_user_file_with_a_misspelt_trait_fails_at_load(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text("from pysysbench.workloads import Workload\n\n\nclass Mine(Workload):\n    conects = False\n")
    with pytest.raises(WorkloadError, match=r"cannot load workload file .*'conects' is no trait .* 'connects'"):
        find_workload(str(path))


def test_a_good_subclass_sets_only_what_differs():
    class Quiet(Workload):
        name = "quiet"
        connects = False
        ready_notes = ("one",)

    assert Quiet.connects is False and Quiet.batched is False and Quiet.tx_per_event == 1
    assert Quiet.reports is None and Quiet.inert_options == {}
