"""The C draws (rand.c) and recorder (stats/recorder.c) against the Python code it
replaces on the hot path: the same draws from the same seed (every parameter set
and range, including ranges past the C fast path) and the same recorder state
for the same latencies.  When the extension is not built these tests are skipped
and pysysbench runs the Python versions (which the rest of the suite covers)."""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pysysbench.core.rand import Rand
from pysysbench.drivers.base import Counters
from pysysbench.runtime import native
from pysysbench.stats.recorder import PyRecorder, make_recorder

if not native.ENABLED:
    pytest.skip(f"the C extension is not in use: {native.describe()}", allow_module_level=True)

params = st.fixed_dictionaries(
    {
        "spec_iter": st.integers(1, 40),
        "spec_pct": st.floats(0.0, 100.0),
        "spec_res": st.floats(0.0, 100.0),
    }
)
bounds = st.tuples(st.integers(-(2**40), 2**40), st.integers(0, 2**34)).map(lambda t: (t[0], t[0] + t[1]))


def test_c_draws_are_in_use():
    r = Rand(1)
    assert isinstance(r.special, native._c.Draw) and isinstance(r.uniform, native._c.Draw)
    assert r.default is r.special


@pytest.mark.parametrize("setting, kind", [("on", "Draw"), ("off", "method")])
def test_core_rand_is_handed_its_c_draws_whatever_is_imported_first(setting, kind):
    """core/rand.py imports nothing above core: runtime/native.py hands it the C draws, and the
    package's __init__ imports runtime.native first, so importing core.rand alone is enough."""
    code = "from pysysbench.core.rand import Rand; print(type(Rand(1).uniform).__name__)"
    env = {**os.environ, "PYSYSBENCH_NATIVE": setting}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == kind


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), p=params, ab=st.lists(bounds, min_size=1, max_size=20))
def test_special_and_uniform_equal_python(seed, p, ab):
    c, py = Rand(seed, **p), Rand(seed, **p)
    for a, b in ab:
        assert c.special(a, b) == py._py_special(a, b)
        assert c.uniform(a, b) == py._py_uniform(a, b)
        assert c.default(a, b) == py._py_special(a, b)


def test_out_of_range_arguments_fall_back_to_python():
    c, py = Rand(5), Rand(5)
    for a, b in [(1, 2**70), (-(2**63), 2**63), (True, 10), (1, 10)]:
        assert c.special(a, b) == py._py_special(a, b)
        assert c.uniform(a, b) == py._py_uniform(a, b)
    with pytest.raises(TypeError):
        c.uniform(1)
    assert c.special(a=1, b=10) == py._py_special(1, 10)


def test_set_source_reaches_the_c_draws():
    r = Rand(1)
    r._u = lambda: 0.5  # the documented seam (rand_compat, tests)
    assert r.uniform(1, 10) == 6
    r.set_source(lambda: 0.0)
    assert r.uniform(1, 10) == 1 and r.default is r.special


def test_source_errors_propagate():
    r = Rand(1)

    def broken():
        raise RuntimeError("source broke")

    r.set_source(broken)
    with pytest.raises(RuntimeError, match="source broke"):
        r.special(1, 100)
    r.set_source(lambda: "x")
    with pytest.raises(TypeError):
        r.uniform(1, 100)


@settings(max_examples=200, deadline=None)
@given(events=st.lists(st.tuples(st.integers(10, 17), st.one_of(st.integers(0, 10**12), st.just(0))), max_size=300))
def test_recorder_equals_python(events):
    c, py = make_recorder(Counters(), range(10, 18)), PyRecorder(Counters(), range(10, 18))
    assert type(c) is not PyRecorder
    for i, (tid, lat) in enumerate(events):
        c.record(tid, lat)
        py.record(tid, lat)
        if i == len(events) // 2:
            c.reset_minmax()
            py.reset_minmax()
    assert c.snapshot() == py.snapshot()


def test_recorder_histogram_bucket_edges_equal_python():
    rng = random.Random(3)
    lats = [int(math.exp(rng.uniform(0, 30))) for _ in range(20000)] + [1, 2, 10**15, 10**18]
    c, py = make_recorder(Counters(), range(1)), PyRecorder(Counters(), range(1))
    for lat in lats:
        c.record(0, lat)
        py.record(0, lat)
    assert c.snapshot() == py.snapshot()
    with pytest.raises(ValueError, match="thread 5"):
        c.record(5, 100)


templates = st.one_of(
    st.sampled_from(["###########-###########", "@@@-###", "", "no draws", "%#%@%", "é#ü@"]),
    st.text(alphabet="#@-x%é", max_size=200),
    st.text(max_size=30),
)


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), ts=st.lists(templates, min_size=1, max_size=8))
def test_strings_equal_python(seed, ts):
    c, py = Rand(seed), Rand(seed)
    for t in ts:
        assert c.string(t) == py._py_string(t)
        assert c.special(1, 10**6) == py._py_special(1, 10**6)  # the streams stay in step


def test_the_c_draws_step_a_xoro_in_place_in_step_with_the_python_stream():
    """A connection's stream is a C Xoro whose state the C draws step without a call per
    draw; the Python Xoroshiro128Plus from the same state draws the same numbers, also
    after getstate / setstate (a retried transaction)."""
    from pysysbench.core.rand import XORO_2018, Xoroshiro128Plus

    c, py = Rand(99), Rand(99)
    assert type(c._rng) is native._c.Xoro
    py.set_source(Xoroshiro128Plus(*c._rng.getstate(), XORO_2018).double)  # the Python twin
    for _ in range(20000):
        assert c.uniform(1, 2**40) == py._py_uniform(1, 2**40)
    assert c._rng.getstate() == py._src.__self__.getstate()  # the same state afterwards
    state = c.getstate()
    specials = [c.special(1, 100) for _ in range(1000)]
    c.setstate(state)
    py.setstate(state)
    assert [c.special(1, 100) for _ in range(1000)] == specials == [py._py_special(1, 100) for _ in range(1000)]
    assert c.string("@@@-###") == py._py_string("@@@-###")
    with pytest.raises(TypeError, match="Xoro"):
        native._c.Draw(native._c.UNIFORM, c._rng.double, c._py_uniform, rng=object())
