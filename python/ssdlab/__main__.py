"""``python -m ssdlab experiment DIR [--backend threads|ray] [--jobs N] [--address ADDR]``:
runs an experiment's pending points (``ssdlab experiment run`` with a Ray backend) and prints
what happened; exits 1 if any point failed."""

import argparse
import sys

from . import experiment


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m ssdlab", description=__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("experiment", help="run an experiment's pending points")
    ex.add_argument("dir")
    ex.add_argument("--backend", choices=["threads", "ray"], default="threads")
    ex.add_argument("--jobs", type=int)
    ex.add_argument("--address", help="Ray cluster address (default: $RAY_ADDRESS, else local)")
    a = ap.parse_args(argv)
    out = experiment.run(a.dir, jobs=a.jobs, backend=a.backend, address=a.address)
    print(f"{len(out['done'])} run, {len(out['skipped'])} already done, {len(out['failed'])} failed")
    for point, error in out["failed"].items():
        print(f"  {point}: {error}", file=sys.stderr)
    return 1 if out["failed"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
