"""The Python API against the CLI: same summaries, errors as exceptions, the GIL released."""

import json
import os
import pathlib
import shutil
import subprocess
import threading
import time

import pytest

import ssdlab

from conftest import ROOT, TRACE, write_experiment


def cli():
    """The CLI binary: $SSDLAB_BIN, or the release or debug build of this checkout."""
    for candidate in (
        os.environ.get("SSDLAB_BIN"),
        ROOT / "target" / "release" / "ssdlab",
        ROOT / "target" / "debug" / "ssdlab",
        shutil.which("ssdlab"),
    ):
        if candidate and pathlib.Path(candidate).is_file():
            return str(candidate)
    pytest.skip("no ssdlab binary (build it with cargo build -p ssdlab-cli)")


def without_wall_clock(summary):
    return {k: v for k, v in summary.items() if k != "sim"}


def test_summary_equals_the_cli_json_for_the_same_run(tmp_path):
    out = tmp_path / "cli.json"
    args = ["--preset", "hotr", "--scheme", "rps", "--set", "precondition.fill=0.5"]
    subprocess.run(
        [cli(), "run", "-q", *args, "--trace", str(TRACE), "--limit", "3000", "--verify",
         "--json", str(out)],
        check=True,
    )
    r = ssdlab.run(preset="hotr", scheme="rps", set={"precondition.fill": 0.5},
                   trace=TRACE, limit=3000, verify=True)
    assert without_wall_clock(r.summary) == without_wall_clock(json.loads(out.read_text()))
    assert r.summary["verified"] and r.summary["requests"] == 3000


def test_to_pandas_and_per_request_records():
    r = ssdlab.run(preset="tiny", synth="requests=2000,write_ratio=0.4,iat_us=300,seed=3",
                   requests=True)
    row = r.to_pandas()
    assert len(row) == 1 and row["read.mean_us"][0] == r.summary["read"]["mean_us"]
    reqs = r.requests()
    assert len(reqs) == r.summary["requests"] == 2000
    assert abs(reqs["response_us"].mean() - r.summary["all"]["mean_us"]) < 1e-3
    assert set(reqs["op"]) == {"R", "W"}
    with pytest.raises(ssdlab.SsdlabError, match="requests=True"):
        ssdlab.run(preset="tiny", synth="requests=10,seed=1").requests()


def test_a_timeline_is_the_clis_and_changes_nothing(tmp_path):
    import gzip

    cli_file, py_file = tmp_path / "cli.json.gz", tmp_path / "py.json.gz"
    args = ["--preset", "hotr", "--set", "precondition.fill=0.9"]
    subprocess.run([cli(), "run", "-q", *args, "--trace", str(TRACE), "--limit", "2000",
                    "--timeline", str(cli_file)], check=True)
    plain = ssdlab.run(preset="hotr", set={"precondition.fill": 0.9}, trace=TRACE, limit=2000)
    r = ssdlab.run(preset="hotr", set={"precondition.fill": 0.9}, trace=TRACE, limit=2000,
                   timeline=py_file)
    assert without_wall_clock(r.summary) == without_wall_clock(plain.summary)
    assert gzip.open(py_file).read() == gzip.open(cli_file).read()
    events = json.loads(gzip.open(py_file).read())["traceEvents"]
    flash = sum(1 for e in events if e["cat"] == "flash")
    assert flash == sum(r.summary["flash"][k] for k in ("reads", "programs", "erases"))


def test_flows_are_the_clis_and_bad_ones_are_named(tmp_path):
    flows = [
        {"name": "reader", "trace": TRACE, "limit": 1500},
        {"name": "writer", "synth": "requests=2000,write_ratio=0.9,iat_us=300,seed=2",
         "start_us": 500.0},
    ]
    conf = tmp_path / "flows.toml"
    conf.write_text(
        f'[[flow]]\nname = "reader"\ntrace = "{TRACE}"\nlimit = 1500\n'
        '[[flow]]\nname = "writer"\nsynth = "requests=2000,write_ratio=0.9,iat_us=300,seed=2"\n'
        "start_us = 500.0\n"
    )
    out = tmp_path / "cli.json"
    subprocess.run([cli(), "run", "-q", "--preset", "tiny", "--config", str(conf),
                    "--json", str(out), "--alone"], check=True)
    r = ssdlab.run(preset="tiny", flows=flows, alone=True)
    assert 0 < r.summary["fairness"] <= 1
    assert without_wall_clock(r.summary) == without_wall_clock(json.loads(out.read_text()))
    assert [f["name"] for f in r.summary["flows"]] == ["reader", "writer"]
    assert [f["requests"] for f in r.summary["flows"]] == [1500, 2000]
    with pytest.raises(ssdlab.SsdlabError, match=r"flow 1 of 1 \(`r`\): unknown field `speed`"):
        ssdlab.run(preset="tiny", flows=[{"name": "r", "synth": "requests=5", "speed": 2}])
    with pytest.raises(ssdlab.SsdlabError, match="expected a list of dicts"):
        ssdlab.run(preset="tiny", flows={"name": "r"})
    with pytest.raises(ssdlab.SsdlabError, match="no trace= or synth= beside it"):
        ssdlab.run(preset="tiny", flows=flows, synth="requests=5")
    with pytest.raises(ssdlab.SsdlabError, match="limit= reads a trace"):
        ssdlab.run(preset="tiny", flows=flows, limit=5)


def test_bad_input_raises_with_the_cores_message(tmp_path):
    with pytest.raises(ssdlab.SsdlabError, match=r"ftl\.over_provisioning = 1\.5"):
        ssdlab.run(preset="tiny", set={"ftl.over_provisioning": 1.5}, synth="requests=10")
    bad = tmp_path / "bad.csv"
    bad.write_text("128166372002993263,hm,0,Read,3164x4096,4096,1000\n")
    with pytest.raises(ssdlab.SsdlabError, match=r"bad\.csv:1"):
        ssdlab.run(preset="tiny", trace=bad, format="msr")
    with pytest.raises(ssdlab.SsdlabError, match="exactly one of"):
        ssdlab.run(preset="tiny")
    with pytest.raises(ssdlab.SsdlabError, match="no-such-drive"):
        ssdlab.run(preset="no-such-drive", synth="requests=10")
    for seed in ("x", -1, 1.5, None):
        with pytest.raises(ssdlab.SsdlabError, match=r"seed = .*whole number"):
            ssdlab.run(preset="tiny", synth="requests=10", seed=seed)
    with pytest.raises(ssdlab.SsdlabError, match=r"override `ftl\.gc_mode` \(--set, or a `set` entry\)"):
        ssdlab.run(preset="tiny", synth="requests=10", set=["ftl.gc_mode"])


def test_a_sweep_keeps_the_good_points_and_lists_the_failed_ones():
    points = [
        {"preset": "tiny", "synth": "requests=200,seed=1"},
        {"preset": "tiny", "synth": "requests=200,seed=1", "set": {"ftl.over_provisioning": 1.5}},
        {"preset": "tiny", "synth": "requests=200,seed=2"},
    ]
    with pytest.warns(UserWarning, match="1 of 3 points failed"):
        got = ssdlab.sweep(points, backend="threads", jobs=2)
    assert got[1] is None and got[0].summary["requests"] == got[2].summary["requests"] == 200
    assert [f.index for f in got.failures] == [1]
    assert "ftl.over_provisioning = 1.5" in got.failures[0].error
    assert len(got.ok()) == 2
    with pytest.raises(ssdlab.SsdlabError, match=r"1 of 3 points failed: point 1"):
        ssdlab.sweep(points, backend="serial", errors="raise")


def test_presets_schemes_and_config():
    assert "hotr" in ssdlab.presets() and "disksim-ssd" in ssdlab.presets()
    assert "gc-preempt" in ssdlab.schemes()
    cfg = ssdlab.config(preset="tiny", set={"ftl.gc_mode": "preemptive"})
    assert cfg["scheme"] == "gc-preempt" and cfg["ftl"]["gc_mode"] == "preemptive"


def test_two_threads_run_simulations_at_once():
    spec = "requests=300000,write_ratio=0.5,iat_us=200,seed={}"

    def one(seed, out):
        out.append(ssdlab.run(preset="hotr", synth=spec.format(seed)).summary)

    serial = []
    one(1, serial)
    one(2, serial)
    threaded = []
    threads = [threading.Thread(target=one, args=(s, threaded)) for s in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    def key(summary):
        return json.dumps({k: v for k, v in summary.items() if k != "sim"}, sort_keys=True)

    assert sorted(map(key, serial)) == sorted(map(key, threaded))
    assert [s["requests"] for s in threaded] == [300000, 300000]


def test_a_run_releases_the_gil():
    # Python keeps running beside a simulation: were the GIL held for the run, this thread's
    # loop would stop for all of it. (A property, not a speed: the margin is the whole run.)
    done = threading.Event()
    result = []

    def run():
        spec = "requests=1000000,write_ratio=0.5,iat_us=200,seed=1"
        result.append(ssdlab.run(preset="hotr", synth=spec).summary["requests"])
        done.set()

    worker = threading.Thread(target=run)
    start = last = time.perf_counter()
    worker.start()
    longest = 0.0
    while not done.is_set():
        now = time.perf_counter()
        longest = max(longest, now - last)
        last = now
    worker.join()
    total = time.perf_counter() - start
    assert result == [1000000]
    assert longest < 0.5 * total, (longest, total)


def test_experiment_runs_resumes_and_loads_into_pandas(tmp_path):
    write_experiment(tmp_path)
    first = ssdlab.experiment.run(tmp_path, jobs=2)
    assert len(first["done"]) == 4 and not first["skipped"] and not first["failed"]
    again = ssdlab.experiment.run(tmp_path, jobs=2)
    assert len(again["skipped"]) == 4 and not again["done"]
    df = ssdlab.experiment.results(tmp_path)
    assert len(df) == 4 and set(df["variant"]) == {"FIFO", "RPS"}
    assert "grid" not in df.columns
    # The same point run alone gives the same summary.
    alone = ssdlab.run(preset="tiny", set=["sched.policy=rps"], trace=TRACE, limit=300)
    row = df[(df["workload"] == "hm") & (df["variant"] == "RPS")].iloc[0]
    assert row["read.mean_us"] == alone.summary["read"]["mean_us"]


def test_synth_writes_a_trace_that_replays_like_the_inline_spec(tmp_path):
    out = tmp_path / "mix.csv"
    n = ssdlab.synth(out, requests=3000, write_ratio=0.3, size_kib=[4, 8], iat_us=250, seed=5)
    assert n == 3000 and len(out.read_text().splitlines()) == 3000
    from_file = ssdlab.run(preset="hotr", trace=out, format="msr")
    inline = ssdlab.run(
        preset="hotr", synth="requests=3000,write_ratio=0.3,size_kib=4|8,iat_us=250,seed=5"
    )
    # The same requests; MSR timestamps are 100 ns ticks, so arrivals round by < 100 ns.
    for op in ("read", "write"):
        a, b = from_file.summary[op], inline.summary[op]
        assert a["count"] == b["count"] > 0
        assert abs(a["mean_us"] - b["mean_us"]) < 1e-4 * b["mean_us"], op
    with pytest.raises(ssdlab.SsdlabError, match="write_ratio"):
        ssdlab.synth(tmp_path / "bad.csv", requests=10, write_ratio=2)


def test_extend_writes_the_stream_run_replays_and_matches_the_cli(tmp_path):
    out, cli_out = tmp_path / "long.csv", tmp_path / "cli.csv"
    n = ssdlab.extend(TRACE, out, requests=9000, seed=2)
    assert n == 9000 and len(out.read_text().splitlines()) == 9000
    subprocess.run([cli(), "trace", "extend", str(TRACE), "--requests", "9000", "--seed", "2",
                    "--out", str(cli_out)], capture_output=True, check=True)
    assert out.read_text() == cli_out.read_text()
    from_file = ssdlab.run(preset="hotr", trace=out, format="msr")
    inline = ssdlab.run(preset="hotr", trace=TRACE, extend="requests=9000,seed=2")
    for op in ("read", "write"):
        a, b = from_file.summary[op], inline.summary[op]
        assert a["count"] == b["count"] > 0
        assert abs(a["mean_us"] - b["mean_us"]) < 1e-3 * b["mean_us"], op
    half = ssdlab.run(preset="tiny", trace=TRACE, skip=3508, limit=3508)
    assert half.summary["requests"] == 3508
    with pytest.raises(ssdlab.SsdlabError, match="unknown key `blocks`"):
        ssdlab.extend(TRACE, tmp_path / "bad.csv", requests=10, blocks=3)
    with pytest.raises(ssdlab.SsdlabError, match="give trace="):
        ssdlab.run(preset="tiny", synth="requests=10", extend="requests=5")


def test_trace_stats_and_fit_match_the_cli():
    stats = ssdlab.trace_stats(trace=TRACE)
    out = json.loads(subprocess.run([cli(), "trace", "stats", "--json", str(TRACE)],
                                    capture_output=True, text=True, check=True).stdout)
    assert stats == out
    assert 0 < stats["profile"]["reuse"]["reread_pct"] < 100
    f = ssdlab.fit(TRACE)
    spec = subprocess.run([cli(), "trace", "fit", str(TRACE)],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert f["spec"] == spec
    # The stand-in meets every first-order check, with an activity envelope per direction.
    assert f["checks"] and all(c["ok"] for c in f["checks"])
    assert f["choice"]["enveloped"] and "read_envelope=" in f["spec"]
    r = ssdlab.run(preset="tiny", synth=f["spec"])
    assert r.summary["requests"] == stats["requests"]
    synth = ssdlab.trace_stats(synth=f["spec"])
    assert synth["requests"] == stats["requests"]
    with pytest.raises(ssdlab.SsdlabError, match="at least 2"):
        ssdlab.fit(ROOT / "python" / "tests" / "one_request.csv")


def test_trace_stats_as_a_frame():
    pd = pytest.importorskip("pandas")
    df = ssdlab.trace_stats(trace=TRACE, as_frame=True)
    assert isinstance(df, pd.DataFrame) and len(df) == 1
    assert "profile.burstiness.read.idc_1ms" in df.columns
    assert "profile.page_types.mixed_pct" in df.columns


@pytest.mark.parametrize(
    "call",
    [
        lambda: ssdlab.run(preset="tiny", synth="requests=10", seed=2**64),
        lambda: ssdlab.run(preset="tiny", trace=str(TRACE), limit=-1),
        lambda: ssdlab.run(preset="tiny", trace=str(TRACE), limit=0),
        lambda: ssdlab.run(preset="tiny", trace=str(TRACE), device=2**40),
        lambda: ssdlab.run(preset="tiny", trace=str(TRACE), device="zero"),
        lambda: ssdlab.run(preset="tiny", synth=5),
        lambda: ssdlab.fit(TRACE, rounds=-1),
        lambda: ssdlab.fit(TRACE, seed=1.5),
        lambda: ssdlab.sweep([{"preset": "tiny", "synth": "requests=10"}], jobs=-3),
        lambda: ssdlab.sweep([], backend="nope"),
    ],
)
def test_wrong_types_and_ranges_raise_ssdlab_error_naming_the_argument(call):
    # Never OverflowError, TypeError or ValueError from the binding: one exception class.
    with pytest.raises(ssdlab.SsdlabError):
        call()


def test_a_device_given_as_digits_is_read_as_the_number():
    a = ssdlab.run(preset="tiny", trace=str(TRACE), device="0", limit=50)
    b = ssdlab.run(preset="tiny", trace=str(TRACE), device=0, limit=50)
    assert a.summary["requests"] == b.summary["requests"] == 50
