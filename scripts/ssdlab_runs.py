"""What the workload scripts (workload-validation, gain-causes, fit-spread) share: where the
binary is, the scheme gains they compare and how they run ssdlab."""
import json
import os
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# $SSDLAB_BIN: a copy of the binary, so that a rebuild during the run changes nothing.
BIN = os.environ.get("SSDLAB_BIN", os.path.join(ROOT, "target", "release", "ssdlab"))
# Gain name -> (scheme, its reference): (ref - scheme) / ref on mean read latency, in %.
GAINS = {"HotR": ("hotr", "baseline"), "RPS": ("rps", "baseline"), "IPC": ("ipc", "rps")}


def sh(args):
    """The standard output and error of `args`; raises with its error output if it fails."""
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {r.stderr.strip()}")
    return r.stdout, r.stderr


def run(args):
    """The JSON summary of `ssdlab run -q ARGS`."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    try:
        sh([BIN, "run", "-q", *args, "--json", out])
        with open(out) as f:
            return json.load(f)
    finally:
        os.unlink(out)


def gain(reference, mean):
    """A scheme's gain (%) on mean read latency: (reference - mean) / reference (0 without a
    reference)."""
    return 100.0 * (reference - mean) / reference if reference > 0 else 0.0
