"""Experiments (``experiments/<name>/experiment.toml``) from Python: the same resumable runner
and result store as ``ssdlab experiment run``, on local threads or on a Ray cluster."""

import json
import os
import pathlib
import tempfile

from . import _ssdlab
from . import SsdlabError, _optional_whole, flatten

__all__ = ["run", "results"]


def _points(dir):
    return json.loads(_ssdlab.experiment_results(str(dir)))


def run(dir, jobs=None, backend="threads", address=None):
    """Runs every point of the experiment in ``dir`` that has no current result, storing each
    result in ``dir/results`` as ``ssdlab experiment run`` does: a point already done is
    skipped, a failing point is reported and the others kept.

    backend: ``"threads"`` (``jobs`` threads in this process, default: the machine's cores) or
    ``"ray"`` (one Ray task per point: on the cluster at ``address`` or ``$RAY_ADDRESS``, else
    a local ``ray.init()``; the workers must see ``dir`` and the traces at the same paths, as
    on one machine or a shared file system). Returns ``{"done": [...], "skipped": [...],
    "failed": {point: error}}``."""
    if backend == "threads":
        jobs = _optional_whole("jobs", jobs, low=1, high=4096) or os.cpu_count() or 1
        done, skipped, failed = _ssdlab.experiment_run(str(dir), jobs)
        return {"done": done, "skipped": skipped, "failed": dict(failed)}
    if backend == "ray":
        return _run_ray(pathlib.Path(dir).resolve(), address)
    raise SsdlabError(f"backend={backend!r}: must be 'threads' or 'ray'")


def _ray_job(job, out):
    """One point on a Ray worker: runs its job file, writes the result into ``out``."""
    from ssdlab import _ssdlab as native

    return native.experiment_run_job(job, out)


def _run_ray(dir, address):
    import ray

    if not ray.is_initialized():
        ray.init(address=address or os.environ.get("RAY_ADDRESS"), log_to_driver=False)
    skipped = [p["point"] for p in _points(dir) if p["summary"] is not None]
    task = ray.remote(_ray_job)
    done, failed = [], {}
    # Jobs and results are staged inside the experiment directory, where every worker of a
    # cluster with a shared file system finds them; the collected results replace them.
    with tempfile.TemporaryDirectory(prefix=".ssdlab-ray-", dir=dir) as stage:
        out = os.path.join(stage, "results")
        jobs = _ssdlab.experiment_plan_pending(str(dir), os.path.join(stage, "jobs"))
        refs = [(pathlib.Path(job).stem, task.remote(job, out)) for job in jobs]
        for point, ref in refs:
            try:
                ray.get(ref)
                done.append(point)
            except Exception as e:  # a RayTaskError carrying the point's SsdlabError
                failed[point] = str(getattr(e, "cause", None) or e)
        if done:
            _ssdlab.experiment_collect(str(dir), out)
    return {"done": done, "skipped": skipped, "failed": failed}


def _grid_value(text):
    """A grid value as the experiment file wrote it in TOML (``"slc"``, ``0.9``, ``true``), as
    a Python value."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def results(dir):
    """The experiment's points and their stored results as a DataFrame (needs pandas): one
    row per point with ``point``, ``workload``, ``variant``, the grid keys and the flattened
    summary (empty where a point has no current result). An experiment with ``seeds = N``
    has one row per run of a point; the summary's ``seed`` column tells them apart (average
    over it for the reports' means)."""
    import pandas as pd

    rows = []
    for r in _points(dir):
        row = {"point": r["point"], "workload": r["workload"], "variant": r["variant"]}
        row.update({k: _grid_value(v) for k, v in r["grid"].items()})
        if r["summary"] is not None:
            row.update(flatten(r["summary"]))
        rows.append(row)
    return pd.DataFrame(rows)
