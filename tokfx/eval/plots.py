"""The figures of `tokfx eval` (matplotlib, Agg backend; the optional extra tokfx[plot]).

Each figure is drawn from the report dict alone, so figures can be redrawn from metrics.json.
The PNGs carry no timestamp: the same report gives the same files.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
from matplotlib.patches import Circle  # noqa: E402

_PNG_METADATA = {"Software": None}  # no matplotlib version in the file: same report, same bytes


def _save(fig, path: Path) -> str:
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata=_PNG_METADATA)
    plt.close(fig)
    return path.name


def token_lengths(report: dict, path: Path) -> str:
    """Token length histograms over the corpus (share of token occurrences), one bar group per
    tokenizer."""
    names = list(report["tokenizers"])
    histograms = [{int(k): v for k, v in report["tokenizers"][n]["metrics"]["token_length_corpus"].items()}
                  for n in names]
    lengths = range(1, max(max(h) for h in histograms) + 1)
    width = 0.8 / len(names)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for k, (name, hist) in enumerate(zip(names, histograms)):
        total = sum(hist.values())
        ax.bar([x + (k - (len(names) - 1) / 2) * width for x in lengths],
               [hist.get(x, 0) / total for x in lengths], width, label=name)
    ax.set_xlabel(f"token length ({report['settings']['token_length_unit']})")
    ax.set_ylabel("share of corpus tokens")
    ax.set_title("Token length distribution on the corpus")
    ax.legend()
    return _save(fig, path)


def frequency_rank(report: dict, path: Path) -> str:
    """Frequency-rank curves, log-log, every tokenizer on one plot."""
    fig, ax = plt.subplots(figsize=(7, 5))
    for name, entry in report["tokenizers"].items():
        counts = entry["metrics"]["frequency_rank"]
        ax.loglog(range(1, len(counts) + 1), counts, label=name)
    ax.set_xlabel("rank")
    ax.set_ylabel("token count")
    ax.set_title("Token frequency by rank")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend()
    return _save(fig, path)


# Circle centres, where each set's name and each region's count go, for 2 and 3 sets (radius 1).
_VENN = {
    2: {"centres": [(-0.5, 0), (0.5, 0)], "names": [(-0.7, 1.15), (0.7, 1.15)],
        "labels": {"10": (-0.95, 0), "01": (0.95, 0), "11": (0, 0)}},
    3: {"centres": [(-0.5, 0.35), (0.5, 0.35), (0, -0.5)],
        "names": [(-0.9, 1.5), (0.9, 1.5), (0, -1.7)],
        "labels": {"100": (-0.9, 0.6), "010": (0.9, 0.6), "001": (0, -1.0), "110": (0, 0.75),
                   "101": (-0.55, -0.35), "011": (0.55, -0.35), "111": (0, 0.05)}},
}


def venn(report: dict, path: Path) -> str:
    """A Venn diagram of 2 or 3 vocabularies: circles (not to scale) with each region's count."""
    names = list(report["tokenizers"])
    layout = _VENN[len(names)]
    fig, ax = plt.subplots(figsize=(6, 5.5))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for centre, place, name, colour in zip(layout["centres"], layout["names"], names, colours):
        ax.add_patch(Circle(centre, 1, alpha=0.3, color=colour))
        ax.text(*place, name, ha="center", va="center", fontsize=11)
    for region, (x, y) in layout["labels"].items():
        ax.text(x, y, f"{report['overlap']['regions'][region]:,}", ha="center", va="center")
    ax.set_xlim(-2.4, 2.4)
    ax.set_ylim(-2.2, 2.2)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title("Vocabulary overlap (tokens compared by base symbols)")
    return _save(fig, path)


def jaccard_heatmap(report: dict, path: Path) -> str:
    """Pairwise Jaccard similarity of the vocabularies, with the values written in."""
    names = list(report["tokenizers"])
    matrix = [[report["overlap"]["jaccard"][a][b] for b in names] for a in names]
    fig, ax = plt.subplots(figsize=(1.2 * len(names) + 3, 1.2 * len(names) + 2))
    image = ax.imshow(matrix, vmin=0, vmax=1, cmap="viridis")
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
    ax.set_yticks(range(len(names)), names)
    for i, row in enumerate(matrix):
        for j, value in enumerate(row):
            ax.text(j, i, f"{value:.2f}", ha="center", va="center",
                    color="black" if value > 0.5 else "white")
    fig.colorbar(image, ax=ax, label="Jaccard")
    ax.set_title("Vocabulary overlap (Jaccard)")
    return _save(fig, path)


def ctc_and_bytes_per_token(report: dict, path: Path) -> str:
    """Bars: corpus token count and bytes per token, per tokenizer."""
    names = list(report["tokenizers"])
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 4))
    for ax, key, title in ((left, "ctc", "corpus token count (lower is better)"),
                           (right, "bytes_per_token", "bytes per token (higher is better)")):
        values = [report["tokenizers"][n]["metrics"][key] for n in names]
        bars = ax.bar(names, values, color=plt.rcParams["axes.prop_cycle"].by_key()["color"][:len(names)])
        ax.bar_label(bars, fmt="{:,.0f}" if key == "ctc" else "{:.3f}")
        ax.set_title(title)
        ax.tick_params(axis="x", rotation=20)
    return _save(fig, path)


def write_figures(report: dict, output: Path) -> list[str]:
    """Draw every figure into `output`; return their file names."""
    overlap = venn if 2 <= len(report["tokenizers"]) <= 3 else jaccard_heatmap
    figures = [(token_lengths, "token_lengths.png"), (frequency_rank, "frequency_rank.png"),
               (ctc_and_bytes_per_token, "ctc_bytes_per_token.png")]
    if len(report["tokenizers"]) > 1:
        figures.append((overlap, "vocabulary_overlap.png"))
    return [draw(report, output / name) for draw, name in figures]
