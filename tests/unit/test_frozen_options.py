"""Options are immutable once parsed: the run's spec is built once from them, and
every worker process gets exactly that spec (never a bag it could write into)."""

from __future__ import annotations

import dataclasses
import json
import pickle
import textwrap

import pytest

import pysysbench
from pysysbench.cli.main import main
from pysysbench.command.cmdline import parse
from pysysbench.command.library import configure
from pysysbench.core.options import FrozenOptionsError
from pysysbench.engine.spec import RunSpec


def _configured(*args):
    inv = parse(["oltp_read_only", *args, "run"])
    workload, driver = configure(inv)
    return inv.values, workload, driver


def test_writing_into_parsed_options_is_an_error(tmp_path):
    v, workload, driver = _configured(f"--sqlite-db={tmp_path / 'x.db'}", "--threads=3")
    assert v.frozen
    with pytest.raises(FrozenOptionsError):
        v.set(v.registry.get("threads"), 4)
    with pytest.raises(TypeError):
        v.data["threads"] = 4
    with pytest.raises(FrozenOptionsError):
        v.unique_seed = 1
    with pytest.raises(AttributeError):
        v.explicit.add("time")
    spec = RunSpec.build(v, workload.source, driver)
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.threads = 4
    assert v.threads == 3 and spec.threads == 3


def test_derived_values_are_derived_once_at_freeze_time(tmp_path):
    v, workload, driver = _configured(f"--sqlite-db={tmp_path / 'x.db'}", "--data-size=2M", "--tables=2")
    assert v.table_size == workload.table_size == 2 * 2**20 // (2 * 217)  # SQLite's measured row size
    assert not v.is_set("table_size")
    copy = pickle.loads(pickle.dumps(v))  # what a worker process receives
    assert copy.frozen and copy.table_size == v.table_size and copy.unique_seed == v.unique_seed
    with pytest.raises(FrozenOptionsError):
        copy.set(copy.registry.get("threads"), 2)


PROBE = '''
import dataclasses, json, os
from pysysbench.workloads.oltp import OltpPointSelect


def described(spec) -> dict:
    """A spec as JSON-comparable data (the same in every process)."""
    fields = {f.name: getattr(spec, f.name) for f in dataclasses.fields(spec) if f.name != "values"}
    v = spec.values
    return json.loads(json.dumps({"fields": fields, "data": sorted(dict(v.data).items()),
                                  "explicit": sorted(v.explicit), "unique_seed": v.unique_seed}))



class Probe(OltpPointSelect):
    """Writes the spec its worker got, once per worker process."""

    name = "probe"

    async def thread_init(self, ctx):
        await super().thread_init(ctx)
        spec = ctx.engine.spec
        path = os.path.join(os.environ["PROBE_DIR"], f"{os.getpid()}-{ctx.tid}.json")
        with open(path, "w") as fh:
            json.dump({"spec": described(spec), "frozen": spec.values.frozen, "same_values": spec.values is ctx.values,
                       "table_size": self.table_size, "unique_seed": spec.values.unique_seed}, fh)
'''


def test_each_worker_process_gets_exactly_the_frozen_spec(tmp_path, monkeypatch, capsys):
    db = str(tmp_path / "w.db")
    probe = tmp_path / "probe.py"
    probe.write_text(textwrap.dedent(PROBE))
    monkeypatch.setenv("PROBE_DIR", str(tmp_path))
    assert main([str(probe), f"--sqlite-db={db}", "--data-size=1M", "prepare"]) == 0
    capsys.readouterr()
    specs = []
    outcome = pysysbench.run(
        str(probe),
        {"sqlite-db": db, "data-size": "1M", "threads": 2, "workers": 2, "events": 40, "time": 0},
        pysysbench.Hooks(control=lambda run: specs.append(run.spec)),
    )
    assert outcome.exit_code == 0 and outcome.workers == 2 and outcome.summary.events == 40
    seen = [json.loads(p.read_text()) for p in tmp_path.glob("*-*.json")]
    assert len(seen) == 2
    parent = specs[0]
    spec_module = {}
    exec(compile(textwrap.dedent(PROBE), "probe", "exec"), spec_module)
    described = spec_module["described"]
    for s in seen:  # the parent's spec, field for field, and its frozen options
        assert s["spec"] == described(parent) and s["frozen"] and s["same_values"]
        assert s["table_size"] == parent.values.table_size and s["unique_seed"] == parent.values.unique_seed
