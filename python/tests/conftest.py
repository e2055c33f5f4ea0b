"""Shared helpers of the Python tests."""

import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
TRACE = ROOT / "testdata" / "traces" / "msr_hm_0.csv"


def write_experiment(dir, strict_variant=False):
    """A small experiment in ``dir``: 300 hm_0 requests and a synthetic mix on the tiny drive,
    FIFO and RPS; with ``strict_variant``, a third variant that plans but fails when run
    (hm_0's addresses lie beyond the tiny drive and ``ftl.out_of_range = "error"``)."""
    text = f'''
name = "py"
title = "Python round trip"
preset = "tiny"
baseline = "FIFO"

[[workload]]
name = "hm"
trace = "{TRACE}"
limit = 300

[[workload]]
name = "syn"
synth = "requests=300,write_ratio=0.5,iat_us=200,footprint_gib=0.01,seed=2"

[[variant]]
name = "FIFO"
set = ["sched.policy=fifo"]

[[variant]]
name = "RPS"
set = ["sched.policy=rps"]
'''
    if strict_variant:
        text += '''
[[variant]]
name = "STRICT"
set = ["ftl.out_of_range=error"]
'''
    (pathlib.Path(dir) / "experiment.toml").write_text(text)
