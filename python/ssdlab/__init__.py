"""ssdlab from Python: the same Rust simulator as the ``ssdlab`` command, called in-process.

>>> import ssdlab
>>> r = ssdlab.run(preset="hotr", trace="testdata/traces/msr_hm_0.csv", verify=True)
>>> r.summary["read"]["mean_us"]          # the CLI's --json, as a dict
>>> r.to_pandas()                          # one row, the metrics flattened with dots

Simulations release the GIL, so threads run them in parallel. Every error of the core (a
malformed trace line, an impossible configuration key) is raised as :class:`SsdlabError`
carrying the same message the CLI prints.
"""

import io
import json
import os

from . import _ssdlab
from ._ssdlab import SsdlabError

__version__ = _ssdlab.__version__
__all__ = [
    "run",
    "sweep",
    "synth",
    "extend",
    "trace_stats",
    "fit",
    "config",
    "presets",
    "schemes",
    "Result",
    "SweepResults",
    "Failure",
    "SsdlabError",
    "flatten",
    "experiment",
]


def _sets(set):
    """``{"ftl.gc_mode": "urgent"}`` or ``["ftl.gc_mode=urgent"]`` as ``key=value`` strings."""
    if set is None:
        return []
    if isinstance(set, dict):
        out = []
        for key, value in set.items():
            if isinstance(value, bool):
                value = "true" if value else "false"
            elif isinstance(value, str):
                value = json.dumps(value)
            out.append(f"{key}={value}")
        return out
    return [str(s) for s in set]


def flatten(tree, prefix=""):
    """A summary as one flat dict, nested keys joined with dots (``read.mean_us``); lists
    (the CDFs) are left out, as in ``ssdlab run --summary-csv``."""
    flat = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, name + "."))
        elif not isinstance(value, list):
            flat[name] = value
    return flat


class Result:
    """One run: :attr:`summary` (the CLI's JSON summary as a dict) and, when the run was asked
    for them, its per-request records."""

    def __init__(self, summary_json, requests_csv):
        self.summary_json = summary_json
        self.summary = json.loads(summary_json)
        self._requests_csv = requests_csv

    def to_pandas(self):
        """A one-row DataFrame of the flattened summary (needs pandas)."""
        import pandas as pd

        return pd.DataFrame([flatten(self.summary)])

    def requests(self):
        """One row per completed request, as ``ssdlab run --requests-out`` writes them
        (needs pandas and ``run(..., requests=True)``)."""
        if self._requests_csv is None:
            raise SsdlabError("this run kept no per-request records: pass requests=True to run()")
        import pandas as pd

        return pd.read_csv(io.StringIO(self._requests_csv))

    def __repr__(self):
        s = self.summary
        return (
            f"<ssdlab.Result {s['scheme']} config {s['config_hash']}: {s['requests']} requests, "
            f"read mean {s['read']['mean_us']:.1f} us, write mean {s['write']['mean_us']:.1f} us>"
        )


def run(
    preset="hotr",
    scheme=None,
    trace=None,
    synth=None,
    set=None,
    seed=1,
    verify=False,
    limit=None,
    format=None,
    time_unit=None,
    device=None,
    requests=False,
    skip=0,
    extend=None,
    timeline=None,
    flows=None,
    alone=False,
):
    """Simulates one drive on one workload and returns a :class:`Result`.

    preset: a drive (``ssdlab.presets()``); scheme: schemes joined by ``+`` (``"hotr+ipc"``);
    exactly one of trace (a file path; ``format``, ``time_unit``, ``limit``, ``device`` as the
    CLI's options) or synth (``"requests=1e4,write_ratio=0.5,iat_us=100"``); set: overrides,
    a dict or ``key=value`` strings; verify: check every read and the mapping invariants;
    requests: keep per-request records for :meth:`Result.requests`; skip: leave out the
    trace's first requests (with ``limit``: any part of it, e.g. its second half); extend: the
    trace lengthened by a block bootstrap (``"requests=1e6,seed=2"``, as ``ssdlab run
    --extend``; see :func:`extend`); timeline: write the run's timeline to this path as Chrome
    trace-event JSON for Perfetto (gzip when it ends in ``.gz``), as ``ssdlab run --timeline``;
    flows: instead of trace or synth, several I/O flows sharing the drive, a list of dicts with
    the keys of a config file's ``[[flow]]`` table (``name`` and ``trace`` or ``synth``, and
    ``start_us``, ``time_scale``, ...); the summary then has a ``flows`` list, one entry per
    flow; alone: with flows, also run each flow by itself on the same drive, as ``--alone``
    (each flow's ``alone`` and ``slowdown``, the run's ``fairness``).
    """
    summary_json, requests_csv = _ssdlab.run(
        preset,
        scheme,
        _sets(set),
        None if trace is None else str(trace),
        _text("synth", synth),
        _whole("seed", seed),
        bool(verify),
        _optional_whole("limit", limit, low=1),
        _text("format", format),
        _text("time_unit", time_unit),
        _optional_whole("device", device, high=2**32 - 1),
        bool(requests),
        _whole("skip", skip),
        _text("extend", extend),
        None if timeline is None else str(timeline),
        _flows(flows),
        bool(alone),
    )
    return Result(summary_json, requests_csv)


def _flows(flows):
    """``flows`` as the JSON text the core reads (paths as strings), or an
    :class:`SsdlabError`."""
    if flows is None:
        return None
    if isinstance(flows, (str, bytes, dict)) or not hasattr(flows, "__iter__"):
        raise SsdlabError(f"flows = {flows!r}: expected a list of dicts, one per flow")
    out = []
    for i, f in enumerate(flows, 1):
        if not isinstance(f, dict):
            raise SsdlabError(f"flows: flow {i} = {f!r}: expected a dict")
        # A key given as None is left out, as if not given (TOML has no null).
        out.append(
            {k: (str(v) if isinstance(v, os.PathLike) else v) for k, v in f.items() if v is not None}
        )
    return json.dumps(out)


def _whole(name, value, low=0, high=2**64 - 1):
    """``value`` as a whole number in [low, high] (by default what a 64-bit count holds), or an
    :class:`SsdlabError` naming the argument; ``None`` stays ``None`` where the argument is
    optional (its callers pass it through only then)."""
    bad = SsdlabError(f"{name} = {value!r}: expected a whole number in [{low}, {high}]")
    if isinstance(value, bool):
        raise bad
    try:
        n = int(value)
    except (TypeError, ValueError, OverflowError):
        raise bad from None
    if not low <= n <= high or n != value and not isinstance(value, str):
        raise bad
    return n


def _optional_whole(name, value, low=0, high=2**64 - 1):
    return None if value is None else _whole(name, value, low, high)


def _text(name, value):
    """``value`` as an optional string, or an :class:`SsdlabError` naming the argument."""
    if value is not None and not isinstance(value, str):
        raise SsdlabError(f"{name} = {value!r}: expected a string")
    return value


def _run_texts(kwargs):
    """``run(**kwargs)`` as picklable texts (for worker processes and Ray tasks); an error
    comes back as its message, so one bad point does not lose the others."""
    try:
        r = run(**kwargs)
    except Exception as e:  # noqa: BLE001 - every failure of a point is reported, not raised
        return None, f"{type(e).__name__}: {e}"
    return r.summary_json, r._requests_csv


class Failure:
    """A point of :func:`sweep` that failed: its position, its arguments and the error."""

    def __init__(self, index, point, error):
        self.index = index
        self.point = point
        self.error = error

    def __repr__(self):
        return f"<ssdlab.Failure point {self.index}: {self.error}>"


class SweepResults(list):
    """The results of :func:`sweep` in the order of its points, ``None`` where a point failed;
    :attr:`failures` lists those, each a :class:`Failure`."""

    def __init__(self, results, failures):
        super().__init__(results)
        self.failures = failures

    def ok(self):
        """The results of the points that ran."""
        return [r for r in self if r is not None]


def sweep(points, backend="threads", jobs=None, address=None, errors="collect"):
    """Runs every point — a dict of :func:`run` arguments — and returns a
    :class:`SweepResults`: their :class:`Result` objects in the same order, ``None`` where a
    point failed, with ``.failures`` listing each failed point and its error (a warning says
    how many). ``errors="raise"`` raises an :class:`SsdlabError` naming the failed points
    instead, after every point has run.

    backend: ``"serial"``; ``"threads"`` (``jobs`` threads; runs release the GIL);
    ``"processes"`` (``jobs`` worker processes); ``"ray"`` (one task per point on the cluster
    at ``address`` or ``$RAY_ADDRESS``, else a local ``ray.init()``; workers must see the
    traces at the same paths). The results do not depend on the backend."""
    if errors not in ("collect", "raise"):
        raise SsdlabError(f"errors={errors!r}: must be 'collect' or 'raise'")
    jobs = _optional_whole("jobs", jobs, low=1, high=4096)
    points = [dict(p) for p in points]
    for p in points:
        if "trace" in p and p["trace"] is not None:
            p["trace"] = str(p["trace"])
    workers = jobs or os.cpu_count() or 1
    if backend == "serial":
        texts = [_run_texts(p) for p in points]
    elif backend == "threads":
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=workers) as pool:
            texts = list(pool.map(_run_texts, points))
    elif backend == "processes":
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # Spawned, not forked: a fork copies no threads, so a child of a process whose Rust
        # thread pool (or Ray) is running would wait on pool threads that do not exist.
        spawn = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=spawn) as pool:
            texts = list(pool.map(_run_texts, points))
    elif backend == "ray":
        import ray

        if not ray.is_initialized():
            ray.init(address=address or os.environ.get("RAY_ADDRESS"), log_to_driver=False)
        task = ray.remote(_run_texts)
        texts = ray.get([task.remote(p) for p in points])
    else:
        raise SsdlabError(
            f"backend={backend!r}: must be 'serial', 'threads', 'processes' or 'ray'"
        )
    results, failures = [], []
    for i, (summary, rest) in enumerate(texts):
        if summary is None:
            results.append(None)
            failures.append(Failure(i, points[i], rest))
        else:
            results.append(Result(summary, rest))
    if failures:
        listing = "; ".join(f"point {f.index}: {f.error}" for f in failures)
        if errors == "raise":
            raise SsdlabError(f"{len(failures)} of {len(points)} points failed: {listing}")
        import warnings

        warnings.warn(f"{len(failures)} of {len(points)} points failed: {listing}", stacklevel=2)
    return SweepResults(results, failures)


def synth(out, **spec):
    """Writes a synthetic workload to ``out`` and returns the number of requests; ``spec``
    takes the ``--synth`` keys (``requests``, ``write_ratio``, ``size_kib`` (a list or
    ``"4|8"``), ``iat_us`` or ``rate_iops``, ``arrivals``, ``footprint_gib``, ``zipf``,
    ``seq``, ``rw_mix``, ``dedup``, ``dup_zipf``, ``dup_pool``, ``dup_reads``, ``seed``).
    The file is MSR Cambridge CSV, or FIU IODedup (with content hashes) when ``dedup`` > 0;
    replay it with ``run(trace=out)``."""
    parts = []
    for key, value in spec.items():
        if isinstance(value, (list, tuple)):
            value = "|".join(str(v) for v in value)
        parts.append(f"{key}={value}")
    n, _format = _ssdlab.synth(",".join(parts), str(out))
    return n


def extend(trace, out, requests, seed=1, format=None, **keys):
    """``ssdlab trace extend``: writes ``trace`` lengthened to ``requests`` requests by a block
    bootstrap of its own activity (busy periods, or windows with ``block="window",
    window_ms=...``; also ``idle_ms``, ``min_block``) to ``out`` as MSR Cambridge CSV, the
    written footprint growing as the trace's own; returns the requests written. The same
    stream is ``run(trace=trace, extend="requests=...,seed=...")`` without the file."""
    parts = [f"requests={_whole('requests', requests, low=1)}", f"seed={_whole('seed', seed)}"]
    parts += [f"{k}={v}" for k, v in keys.items()]
    return _ssdlab.extend(str(trace), _text("format", format), ",".join(parts), str(out))


def trace_stats(trace=None, synth=None, format=None, as_frame=False):
    """The statistics of a trace file or a ``--synth`` spec string, as ``ssdlab trace stats
    --json`` gives them (a dict: counts, footprint, and ``profile`` with burstiness, popularity,
    reuse, page types, sizes and sequentiality; docs/workloads.md defines each). With
    ``as_frame=True``, one flattened row as a pandas DataFrame (needs the ``[pandas]`` extra)."""
    if (trace is None) == (synth is None):
        raise SsdlabError("give exactly one of trace= or synth=")
    stats = json.loads(
        _ssdlab.trace_stats(None if trace is None else str(trace), synth, format)
    )
    if not as_frame:
        return stats
    import pandas as pd

    row = flatten(stats)
    burst = stats["profile"]["burstiness"]
    for cls in ("all", "read", "write"):
        for ms, idc in zip(burst["scales_ms"], burst[cls]["idc"]):
            row[f"profile.burstiness.{cls}.idc_{ms:g}ms"] = idc
    return pd.DataFrame([row])


def fit(trace, requests=None, seed=1, rounds=6, format=None, force=False):
    """``ssdlab trace fit``: fits a synthetic stand-in to ``trace``. Returns a dict with
    ``spec`` (the ``--synth`` string: pass it as ``run(synth=...)``), ``arrivals`` (how each
    direction's arrival process was chosen), ``residuals`` (each fitted statistic, the
    trace's and the stand-in's), ``checks`` (the first-order statistics and process
    parameters, each with its verdict ``ok``), ``choice`` (with or without activity envelopes)
    and ``failure`` (what it misses, in words, or ``None``). A stand-in that misses a check
    raises :class:`SsdlabError` naming the misses, unless ``force=True``."""
    f = json.loads(
        _ssdlab.fit(
            str(trace),
            _text("format", format),
            _optional_whole("requests", requests, low=1),
            _whole("seed", seed),
            _whole("rounds", rounds, high=1000),
        )
    )
    if f["failure"] and not force:
        raise SsdlabError(f"fitting {trace}: {f['failure']}; pass force=True to get it anyway")
    return f


def config(preset="hotr", scheme=None, set=None):
    """The fully resolved configuration of a preset, schemes and overrides, as a dict."""
    return json.loads(_ssdlab.config(preset, scheme, _sets(set)))


def presets():
    """``{name: description}`` of the built-in drives."""
    return dict(_ssdlab.presets())


def schemes():
    """``{name: {"summary": ..., "paper": ...}}`` of every scheme."""
    return {name: {"summary": summary, "paper": paper} for name, summary, paper in _ssdlab.schemes()}


from . import experiment  # noqa: E402  (needs flatten above)
