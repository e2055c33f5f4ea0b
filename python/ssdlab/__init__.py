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

from . import _ssdlab
from ._ssdlab import SsdlabError

__version__ = _ssdlab.__version__
__all__ = ["run", "config", "presets", "schemes", "Result", "SsdlabError", "flatten"]


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
):
    """Simulates one drive on one workload and returns a :class:`Result`.

    preset: a drive (``ssdlab.presets()``); scheme: schemes joined by ``+`` (``"hotr+ipc"``);
    exactly one of trace (a file path; ``format``, ``time_unit``, ``limit``, ``device`` as the
    CLI's options) or synth (``"requests=1e4,write_ratio=0.5,iat_us=100"``); set: overrides,
    a dict or ``key=value`` strings; verify: check every read and the mapping invariants;
    requests: keep per-request records for :meth:`Result.requests`.
    """
    summary_json, requests_csv = _ssdlab.run(
        preset,
        scheme,
        _sets(set),
        None if trace is None else str(trace),
        synth,
        int(seed),
        bool(verify),
        limit,
        format,
        time_unit,
        device,
        bool(requests),
    )
    return Result(summary_json, requests_csv)


def config(preset="hotr", scheme=None, set=None):
    """The fully resolved configuration of a preset, schemes and overrides, as a dict."""
    return json.loads(_ssdlab.config(preset, scheme, _sets(set)))


def presets():
    """``{name: description}`` of the built-in drives."""
    return dict(_ssdlab.presets())


def schemes():
    """``{name: {"summary": ..., "paper": ...}}`` of every scheme."""
    return {name: {"summary": summary, "paper": paper} for name, summary, paper in _ssdlab.schemes()}
