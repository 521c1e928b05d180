"""Report figures a performance engineer relies on (issue 20): the peak summary keeps
"within 5 %" and "within noise" apart and warns with few repeats; unsteady runs,
saturated clients and drift are flagged from the stored data."""

from __future__ import annotations

from test_campaign_compare import doc

from pysysbench.report import tables
from pysysbench.report.model import cells, run_of


def _cells(points, workload="oltp_point_select"):
    runs = [
        run_of(f"{workload}-{t}-{i}.json", doc(workload=workload, threads=t, repeat=i + 1, tps=v))
        for t, values in points.items()
        for i, v in enumerate(values)
    ]
    return cells(runs)


def test_within_5_percent_and_within_noise_are_separate_facts():
    # the case: 2 noisy repeats; 5 threads at -22 % is "within noise" but not within 5 %
    cl = _cells({5: [20000, 27000], 10: [30500, 31500], 20: [31500, 32500]})
    (p,) = tables.peaks(cl["oltp_point_select"])
    assert p.threads == 20
    assert p.saturation_threads == 10  # 31,000 is within 5 % of 32,000
    assert p.noise_threads == 5  # the wide margin swallows -26 %
    row = tables.summary_table(cl).rows[0]
    assert row[-2] == "10 threads (-3.1%)"
    assert row[-1].startswith("5 threads (-26.6%, noise ±")
    headers = tables.summary_table(cl).headers
    assert headers[-2:] == ["within 5% of peak from", "within noise of peak from"]


def test_few_repeats_warn_and_single_runs_say_noise_is_unknown():
    two = _cells({5: [100, 110], 10: [200, 210]})
    notes = tables.summary_notes(two)
    assert len(notes) == 1 and "2 repeats per cell (<= 3)" in notes[0]
    single = _cells({5: [100], 10: [200]})
    (p,) = tables.peaks(single["oltp_point_select"])
    assert p.noise_threads is None and tables.within_noise_text(p) == "unknown (single runs)"
    assert "single run" in tables.summary_notes(single)[0]
    five = _cells({5: [100, 101, 99, 100, 100], 10: [200, 201, 199, 200, 200]})
    assert tables.summary_notes(five) == []


# --- steadiness ----------------------------------------------------------------------------------

from pysysbench.stats import host  # noqa: E402
from pysysbench.stats.steadiness import steadiness  # noqa: E402


def test_a_climbing_run_is_unsteady_and_a_noisy_flat_one_is_not():
    climb = steadiness([24000, 35000, 45000, 55000, 65000, 75000])
    assert climb["steady"] is False and climb["change"] > 1
    flat = steadiness([50000, 47000, 52000, 49000, 51000, 48000, 53000, 50000, 49000])
    assert flat["steady"] is True
    assert steadiness([1, 2, 3])["steady"] is None


def test_report_flags_an_unsteady_run_from_its_intervals():
    d = doc(threads=4, tps=50000)
    d["intervals"] = [
        dict(d["intervals"][0], time_s=float(i + 1), tps=v)
        for i, v in enumerate([24000, 35000, 45000, 55000, 65000, 75000])
    ]
    cl = cells([run_of("x.json", d)])["oltp_read_write"]
    warnings = tables.run_warnings(cl, [])
    assert len(warnings) == 1 and warnings[0].startswith("Unsteady: 4 threads r1: TPS climbs +137%")
    row = tables.runs_table(cl).rows[0]
    assert row[-1] == "unsteady"


def test_saturated_client_is_flagged_with_its_cpu_per_query():
    d = doc(threads=16)
    d["client"] = {"busy_fraction": 0.97, "cpu_s_per_query": 41e-6, "cpu_s": 1.0, "workers": 1}
    d["host"] = {"loadavg_start": [1.5, 1, 1], "loadavg_end": [2.25, 1, 1], "steal_fraction": 0.0}
    cl = cells([run_of("x.json", d)])["oltp_read_write"]
    row = tables.runs_table(cl).rows[0]
    assert row[4:8] == ["97%", "41.0", "1.50 → 2.25", "0%"] and row[-1] == "client saturated"
    assert (
        "Client saturated: 16 threads r1: the client kept 97% of its cores busy (41.0 µs"
        in tables.run_warnings(cl, [])[0]
    )


def test_host_snapshots_give_load_and_steal():
    a = {"loadavg": [1.0, 1.0, 1.0], "cpu": dict.fromkeys(host.FIELDS, 0)}
    b = {"loadavg": [3.0, 1.0, 1.0], "cpu": dict(a["cpu"], user=60, idle=30, steal=10)}
    h = host.between(a, b)
    assert h["busy_fraction"] == 0.7 and h["steal_fraction"] == 0.1 and host.mean_load(h) == 2.0
    assert host.snapshot().get("loadavg")  # this machine has a load average


# --- compare: drift, separate campaigns, multiple comparisons, pairing -------------------------

from test_campaign_compare import group  # noqa: E402

from pysysbench.report import compare as cmp  # noqa: E402


def _with(d, cpu_us, load):
    d["client"] = {"cpu_s_per_query": cpu_us * 1e-6, "busy_fraction": 0.5}
    d["host"] = {"loadavg_start": [load, 0, 0], "loadavg_end": [load, 0, 0]}
    return d


def test_compare_warns_about_drift_and_separate_campaigns_and_counts_verdicts():
    a = group(
        "a",
        *(
            _with(doc(tps=t, repeat=i + 1, campaign="first"), 41 + i * 0.2, 1.0 + i * 0.1)
            for i, t in enumerate((1000, 1010, 990))
        ),
    )
    b = group(
        "b",
        *(
            _with(doc(tps=t, repeat=i + 1, campaign="second"), 60 + i * 0.5, 4.0 + i * 0.1)
            for i, t in enumerate((700, 720, 690))
        ),
    )
    c = cmp.compare([a, b], "tps")
    notes = cmp.notes([a, b], [c])
    assert any("client's CPU per query differs beyond noise in 1 of 1 cells" in n and "41.2 → 60.5" in n for n in notes)
    assert any("host's load average differs" in n for n in notes)
    assert any("separate campaigns (first; second)" in n and "cannot be told apart" in n for n in notes)
    assert notes[-1].startswith("1 verdicts made, each at 95 %")


def test_interleaved_rounds_are_paired_so_shared_drift_cancels():
    # both variants drift together round by round (1000 -> 1300); B is 2 % above A in every round
    base = [1000, 1150, 1300]
    docs_a, docs_b = [], []
    for r, v in enumerate(base, 1):
        for name, value, out in (("A", v, docs_a), ("B", v * 1.02, docs_b)):
            d = doc(tps=value, repeat=r, labels={"variant": name}, campaign="ab")
            d["campaign"]["variant"] = name
            out.append(d)
    a, b = group("A", *docs_a), group("B", *docs_b)
    c = cmp.compare([a, b], "tps")
    x = c.rows["oltp_read_write"][0]
    assert x.paired == (False, True) and x.verdicts[1].text == "better"
    unpaired = cmp.difference(x.samples[0], x.samples[1], 0.01)
    assert unpaired.significant is False  # Welch on the same data: lost in the drift
    assert "paired noise" in cmp.table(c, "oltp_read_write")[0].rows[0][3]
    assert any("interleaved in one campaign" in n for n in cmp.notes([a, b], [c]))


# --- a busy client machine: load average at the start, CPU steal --------------------------------


def _on_host(d, *, cpus=2, load=0.3, steal=0.0, cpu_s=5.0, workers=1):
    """A result document whose client machine had ``cpus`` cores, 1-minute load ``load`` when the
    measured phase began, ``steal`` of its CPU time stolen, and a client that used ``cpu_s`` of CPU
    over the 10 s phase (doc()'s total_time_s)."""
    d["host"] = {
        "cpus": cpus,
        "loadavg_start": [load, 0.5, 0.5],
        "loadavg_end": [load, 0.5, 0.5],
        "busy_fraction": 0.6,
        "steal_fraction": steal,
    }
    d["client"] = {"workers": workers, "cpu_s": cpu_s, "cpu_s_per_query": 1e-5, "busy_fraction": cpu_s / 10 / workers}
    return d


def test_a_run_started_on_a_busy_host_or_under_steal_is_flagged(tmp_path, capsys):
    from test_campaign_compare import write_results

    from pysysbench.cli.main import main
    from pysysbench.stats import results

    quiet = _on_host(doc(threads=4, labels={"host": "quiet"}), load=0.8)  # 2 cores, client 0.5: 1.5 free
    busy = _on_host(doc(threads=8, labels={"host": "quiet"}), load=3.1)
    stolen = _on_host(doc(threads=16, labels={"host": "quiet"}), load=0.2, steal=0.08)
    assert [results._first_problem(d) for d in (quiet, busy, stolen)] == [None] * 3  # valid result files
    runs = {d["campaign"]["threads"]: run_of(f"{d['campaign']['threads']}.json", d) for d in (quiet, busy, stolen)}
    assert runs[4].free_cores == 1.5 and runs[4].host_problems == []
    assert runs[8].host_problems == ["load 3.10 at start, above 1.5 free cores"]
    assert runs[16].host_problems == ["steal 8%"]
    full = run_of("x", _on_host(doc(), cpus=2, load=1.2, cpu_s=20.0, workers=2))
    assert full.host_problems == ["load 1.20 at start, above 1.0 free cores"]  # a client on every core: 1 left
    a = write_results(tmp_path, "a", [quiet, busy, stolen])
    assert main(["report", str(a), f"--output={tmp_path / 'rep'}", "--no-charts"]) == 0
    md = (tmp_path / "rep" / "report.md").read_text()
    assert (
        "Warning: 2 of 3 runs were measured on a busy host (1-minute load at the start above the cores the "
        "client left free, or CPU steal of 5% or more), e.g. oltp_read_write at 8 threads r1: load 3.10 at start, "
        "above 1.5 free cores; their figures are unreliable." in md
    )
    assert "| busy host (load 3.10 at start, above 1.5 free cores) |" in md and "| steal 8% |" in md
    assert "Busy host: 8 threads r1: load 3.10 at start, above 1.5 free cores: the client machine's CPU" in md
    b = write_results(tmp_path, "b", [_on_host(doc(threads=t, labels={"host": "other"}), load=0.1) for t in (4, 8, 16)])
    capsys.readouterr()
    assert main(["compare", str(b), str(a), "--metric=tps"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Busy host (host=quiet): 2 of 3 runs were measured on a busy host" in out
    assert "Busy host (host=other)" not in out


def test_a_run_records_the_host_load_steal_and_its_own_cpu(tmp_path):
    from pysysbench.cli.main import main
    from pysysbench.stats import results

    db, out = tmp_path / "x.db", tmp_path / "r.json"
    common = [f"--sqlite-db={db}", "--tables=1", "--table-size=100"]
    assert main(["oltp_point_select", *common, "prepare"]) == 0
    assert main(["oltp_point_select", *common, "--time=1", f"--result-file={out}", "run"]) == 0
    d = results.load(str(out))
    h, c = d["host"], d["client"]
    assert len(h["loadavg_start"]) == 3 and len(h["loadavg_end"]) == 3 and h["cpus"] >= 1
    assert 0 <= h["steal_fraction"] <= 1 and c["cpu_s"] > 0 and c["workers"] >= 1
    assert run_of(str(out), d).free_cores is not None


# --- light core install: no matplotlib --------------------------------------------------------


def test_report_without_matplotlib_writes_tables_and_says_how_to_add_charts(tmp_path, monkeypatch, capsys):
    import sys
    from pathlib import Path

    from pysysbench.cli.main import main

    for name in [
        m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.") or m == "pysysbench.report.charts"
    ]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    results = Path(__file__).parents[1] / "golden" / "data" / "campaign-results"
    assert main(["report", str(results), f"--output={tmp_path}"]) == 0
    out = capsys.readouterr().out
    assert "charts left out: matplotlib is not installed (pip install 'pysysbench[report]' adds them)" in out
    assert "(0 charts)" in out
    assert "| Workload |" in (tmp_path / "report.md").read_text() and not (tmp_path / "charts").exists()
