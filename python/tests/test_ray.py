"""Sweeps and experiments on a real (local) Ray cluster: the same results as without Ray."""

import pytest
from conftest import TRACE, write_experiment

import ssdlab

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def without_wall_clock(summary):
    return {k: v for k, v in summary.items() if k != "sim"}


def test_a_ray_sweep_equals_the_serial_and_process_sweeps():
    points = [
        {"preset": "tiny", "scheme": s, "synth": f"requests=1500,write_ratio=0.5,seed={seed}"}
        for s in ("baseline", "rps")
        for seed in (1, 2)
    ]
    points.append({"preset": "hotr", "trace": TRACE, "limit": 1000, "verify": True})
    serial = [without_wall_clock(r.summary) for r in ssdlab.sweep(points, backend="serial")]
    for backend in ("ray", "processes", "threads"):
        got = [without_wall_clock(r.summary) for r in ssdlab.sweep(points, backend=backend)]
        assert got == serial, backend


def test_an_experiment_on_ray_stores_what_local_threads_store_and_resumes(tmp_path):
    on_ray, local = tmp_path / "ray", tmp_path / "local"
    for d in (on_ray, local):
        d.mkdir()
        write_experiment(d, strict_variant=True)
    first = ssdlab.experiment.run(on_ray, backend="ray")
    assert sorted(first["done"]) == sorted(
        ["hm__FIFO", "hm__RPS", "syn__FIFO", "syn__RPS", "syn__STRICT"]
    )
    assert list(first["failed"]) == ["hm__STRICT"] and "beyond" in first["failed"]["hm__STRICT"]
    threads = ssdlab.experiment.run(local, backend="threads")
    assert sorted(threads["done"]) == sorted(first["done"])
    a, b = ssdlab.experiment.results(on_ray), ssdlab.experiment.results(local)
    measured = [c for c in a.columns if not c.startswith("sim.")]
    assert a[measured].equals(b[measured])
    # Done points are skipped; the failed one is tried again (and fails again).
    again = ssdlab.experiment.run(on_ray, backend="ray")
    assert not again["done"] and len(again["skipped"]) == 5 and list(again["failed"]) == ["hm__STRICT"]
    assert not any(p.name.startswith(".ssdlab-ray-") for p in on_ray.iterdir())
