"""P/E suspension, Fig. 1 from Python: mean read latency of RPS, PER and PE0 normalised to
FIFO, per workload and cell type, beside the paper's means (pe-suspension.txt §3.2).

    python examples/pe_suspension_fig1.py [OUT.png]

Runs whatever points of experiments/pe-suspension have no current result (none, in a checkout
whose committed results match the code), loads all of them with pandas and draws the figure
with matplotlib (pip install matplotlib)."""

import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import ssdlab  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXPERIMENT = ROOT / "experiments" / "pe-suspension"
# The paper's averages over its six traces (the experiment's [figure.paper_mean]).
PAPER = {"slc": {"RPS": 0.554, "PE0": 0.283}, "mlc": {"RPS": 0.517, "PE0": 0.244}}
VARIANTS = ["RPS", "PER", "PE0"]
# One marker per paper series, so the legend tells them apart.
PAPER_MARKER = {"RPS": "^", "PE0": "v"}


def main(out):
    ran = ssdlab.experiment.run(EXPERIMENT)
    print(f"{len(ran['done'])} points run, {len(ran['skipped'])} already done")
    df = ssdlab.experiment.results(EXPERIMENT)
    df["cell"] = df["preset"].str.removeprefix("pe-suspension-")
    # Mean over the runs (seeds) of each point.
    read = df.pivot_table(index=["cell", "workload"], columns="variant", values="read.mean_us")
    norm = read[VARIANTS].div(read["FIFO"], axis=0)
    print(norm.round(3).to_string())

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    for ax, cell in zip(axes, ["slc", "mlc"]):
        part = norm.loc[cell]
        part.loc["mean"] = part.mean()
        part.plot.bar(ax=ax, width=0.8, rot=30)
        for i, v in enumerate(VARIANTS):
            if v in PAPER[cell]:
                x = len(part) - 1 + (i - 1) * 0.8 / len(VARIANTS)
                ax.plot([x], [PAPER[cell][v]], "k" + PAPER_MARKER[v], ls="none",
                        label=f"paper {v}" if cell == "slc" else None)
        ax.axhline(1.0, color="k", ls="--", lw=0.8)
        ax.set_title(f"{cell.upper()}")
        ax.set_xlabel("")
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("mean read latency ÷ FIFO")
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes:
        ax.legend().remove()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=9)
    fig.suptitle("P/E suspension Fig. 1: RPS, PER, PE0 against FIFO (ssdlab; black markers: paper means)")
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "pe-suspension-fig1.png")
