#!/usr/bin/env python3
"""Draw PNG charts of tierio's ratios against their targets.

    bench/plot.py RESULTS.jsonl... -o DIR [--all]

Input: JSON lines, either a showcase run's records (bench/showcase.py --json-out, or the
showcase.jsonl that `--plot` writes) or a benchmark's own stdout (tio-bench-* prints one
JSON object per result). One chart per benchmark: a bar per result with its ratio to the
baseline measured in the same run, the issue's target as a black tick (showcase records
only: the benchmarks do not know their targets), green when met, red when missed, grey
without a target. Several files are several runs of the same thing: each bar is then
their median, with the lowest and highest run as an error bar.

Exit status: 0 when charts were written, 1 for input it cannot plot (with the file and
line), 2 for a usage error. Needs matplotlib (scripts/bootstrap installs it in .venv).
"""

import argparse
import json
import os
import re
import statistics
import sys
import textwrap
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import matplotlib
matplotlib.use("Agg")   # files only: no display on a build machine or in CI
from matplotlib.figure import Figure  # noqa: E402  (after the backend is chosen)
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FuncFormatter, PercentFormatter  # noqa: E402

RATIO = "ratio"   # the quantity of most charts; others are a row's `goal` (a fraction)
RATIO_AXIS = ("speed relative to the baseline{}\n"
              "GB/s / baseline GB/s, or baseline time / time: >1 = faster")
COLOURS = {"met": "#2e7d32", "missed": "#c62828", "none": "#90a4ae"}
# The fields that tell a benchmark's records apart, in the order they read well in a label
# (numbers as name=value: "4" alone says nothing).
LABEL_FIELDS = ("kernel", "phase", "dist", "layout", "pattern", "access", "order", "window",
                "method", "mode", "engine", "driver", "stride", "sync_every",
                "particles_per_rank")


class InputError(Exception):
    """Input that cannot be plotted; the message names the file (and line)."""


@dataclass
class Bar:
    label: str
    values: List[float] = field(default_factory=list)   # one per run (input file)
    target: Optional[float] = None
    verified: Optional[bool] = None


@dataclass
class Chart:
    bench: str
    quantity: str           # RATIO, or what a row's goal is about
    subtitle: str           # the showcase section, or the input file
    bars: Dict[str, Bar] = field(default_factory=dict)   # by label, in first-seen order


def read_records(path: str) -> List[dict]:
    """The JSON objects of one file, one per line; '#' lines (a benchmark's header, if
    stderr went along) and blank lines are skipped, anything else is an error."""
    records = []
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as e:
                    raise InputError(f"{path}:{n}: not JSON ({e.msg}): {line[:60]}") from None
                if not isinstance(rec, dict):
                    raise InputError(f"{path}:{n}: a JSON {type(rec).__name__}, "
                                     "expected one object per line")
                records.append(rec)
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}") from None
    return records


def _number(v, where: str, what: str) -> Optional[float]:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise InputError(f"{where}: {what} is {v!r}, expected a number")
    return float(v)


Key = Tuple[str, str, str]   # a chart: (showcase section or "", benchmark, quantity)


def _items(path: str, records: List[dict],
           show_all: bool) -> List[Tuple[Key, str, str, dict]]:
    """(chart, subtitle, label, fields) per plottable result of one file. Showcase records:
    its table rows, the key ones and those with a target unless show_all (the benchmarks'
    own records beside them are the same results again), charted per section and
    benchmark (mstream runs in two sections). Otherwise every record with a ratio, charted
    by its "bench"."""
    rows = [r for r in records if r.get("showcase") == "row"]
    out = []
    if rows:
        for r in rows:
            if not (show_all or r.get("key", True) or r.get("target") is not None):
                continue
            bench, section = str(r.get("bench", "?")), str(r.get("section", ""))
            label = f"{r.get('test', '?')}: {r.get('subject', '?')}"
            if r.get("baseline"):
                label += f" (vs {r['baseline']})"
            # a row's target is on its goal when it has one, else on its ratio
            out.append(((section, bench, RATIO), section, label,
                         {"value": r.get("ratio"),
                          "target": None if r.get("goal") else r.get("target"),
                          "verified": r.get("verified")}))
            if r.get("goal"):   # a target on another quantity: a chart of its own
                out.append(((section, bench, r["goal"]), section,
                            f"{r.get('test', '?')}: {r.get('subject', '?')}",
                            {"value": r.get("goal_value"), "target": r.get("target"),
                             "verified": r.get("verified")}))
        return out
    for r in records:
        if r.get("showcase") or r.get("ratio") is None:
            continue   # the showcase's run record, or a result that is its own baseline
        label = ", ".join(r[k] if isinstance(r[k], str) else f"{k}={r[k]}"
                          for k in LABEL_FIELDS if r.get(k) not in (None, ""))
        if r.get("baseline"):
            label += f" (vs {r['baseline']})"
        out.append((("", str(r.get("bench", os.path.basename(path))), RATIO),
                    os.path.basename(path), label or "?",
                    {"value": r.get("ratio"), "target": None, "verified": r.get("verified")}))
    return out


def collect(paths: List[str], show_all: bool = False) -> List[Chart]:
    """The charts of the results in `paths`, each file one run of the same results."""
    charts: Dict[Key, Chart] = {}
    for path in paths:
        seen: Dict[Tuple[Key, str], int] = {}
        for key, subtitle, label, f in _items(path, read_records(path), show_all):
            # A label twice in one file is two results (e.g. HACC-IO at two sizes), not two
            # runs: number it; the same label in another file is another run of it.
            n = seen[key, label] = seen.get((key, label), 0) + 1
            if n > 1:
                label += f" #{n}"
            value = _number(f["value"], path, f"{label}: {key[2]}")
            if value is None:
                continue
            chart = charts.setdefault(key, Chart(key[1], key[2], subtitle))
            bar = chart.bars.setdefault(label, Bar(label))
            bar.values.append(value)
            bar.target = _number(f["target"], path, f"{label}: target")
            bar.verified = False if bar.verified is False else f["verified"]
    if not charts:
        raise InputError(f"{', '.join(paths)}: no result with a ratio (expected the JSON lines "
                         "of bench/showcase.py --json-out or of a tio-bench-* program)")
    return list(charts.values())


def _colour(bar: Bar, value: float) -> str:
    if bar.target is None:
        return COLOURS["none"]
    return COLOURS["met" if value >= bar.target else "missed"]


def draw(chart: Chart, path: str) -> Figure:
    """One chart into the PNG file path; returns the figure (the test looks at its axes)."""
    bars = list(chart.bars.values())
    meds = [statistics.median(b.values) for b in bars]
    lows = [m - min(b.values) for m, b in zip(meds, bars)]
    highs = [max(b.values) - m for m, b in zip(meds, bars)]
    ratio = chart.quantity == RATIO
    fig = Figure(figsize=(9, 1.6 + 0.42 * len(bars)))
    ax = fig.add_subplot()
    ys = range(len(bars))
    repeated = any(len(b.values) > 1 for b in bars)
    ax.barh(ys, meds, height=0.6, color=[_colour(b, m) for b, m in zip(bars, meds)],
            xerr=[lows, highs] if repeated else None, capsize=3, ecolor="#333333")
    targets = [(y, b.target) for y, b in zip(ys, bars) if b.target is not None]
    if targets:
        ax.vlines([t for _, t in targets], [y - 0.42 for y, _ in targets],
                  [y + 0.42 for y, _ in targets], colors="black", linewidth=2.5, zorder=3)
    # Log scale when the ratios span more than 10x: a 20x bar would flatten a 0.9x one.
    spread = (meds + [t for _, t in targets] + [m + h for m, h in zip(meds, highs)]
              + [m - l for m, l in zip(meds, lows)])
    log = ratio and min(spread) > 0 and max(spread) / min(spread) > 10
    top = max(spread + [1.0 if ratio else 0.0])
    if log:   # room on the left for the smallest bar to show, on the right for its figure
        ax.set_xscale("log")
        ax.set_xlim(min(spread + [1.0]) / 2, top * 3)
    else:
        ax.set_xlim(min(0.0, min(spread) * 1.1), top * 1.2)
    if ratio:   # 1x: as fast as the baseline, the line a reader measures against
        ax.axvline(1, color="#555555", linestyle="--", linewidth=1)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
    for y, m, h in zip(ys, meds, highs):   # the figure past the bar and its error bar
        ax.text(m + h, y, f" {m:.3g}x" if ratio else f" {m * 100:.0f} %", va="center",
                fontsize=8)
    ax.set_yticks(list(ys), [b.label + (" [NOT VERIFIED]" if b.verified is False else "")
                             for b in bars], fontsize=8)
    ax.invert_yaxis()   # first result on top, as in the showcase's table
    if ratio:
        ax.set_xlabel(RATIO_AXIS.format(" (log scale)" if log else ""))
        title = f"{chart.bench}: speed relative to the baseline"
    else:
        ax.xaxis.set_major_formatter(PercentFormatter(1.0))
        ax.set_xlabel(chart.quantity)
        title = f"{chart.bench}: {chart.quantity}"
    sub = "\n".join(textwrap.wrap(_cite(chart.subtitle), 90))
    ax.set_title(title + ("\n" + sub if sub else ""), fontsize=10, loc="left")
    # Beside the plot, not on it: a legend over the bars hides a bar or its figure.
    ax.legend(handles=_legend(bars, ratio, repeated), fontsize=7, loc="upper left",
              bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")   # tight: a long title is not cut
    return fig


def _legend(bars: List[Bar], ratio: bool, repeated: bool) -> list:
    """Entries for what this chart shows, nothing else."""
    kinds = {("none" if b.target is None else
              "met" if statistics.median(b.values) >= b.target else "missed") for b in bars}
    names = {"met": "target met", "missed": "target missed", "none": "no target"}
    out = [Patch(color=COLOURS[k], label=names[k]) for k in ("met", "missed", "none")
           if k in kinds]
    if kinds - {"none"}:
        out.append(Line2D([], [], color="black", linewidth=2.5, label="target"))
    if ratio:
        out.append(Line2D([], [], color="#555555", linestyle="--", label="1x = as fast"))
    if repeated:
        out.append(Line2D([], [], color="#333333", marker="|", label="min-max of the runs"))
    return out


def _cite(text: str) -> str:
    try:   # the showcase's seed numbers as citations, when results.py is beside this file
        import results
        return results.cite(text)
    except ImportError:
        return text


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "-", text).strip("-").lower() or "chart"


def write(paths: List[str], outdir: str, show_all: bool = False) -> List[str]:
    """Charts of the results in `paths` into outdir; returns the PNG files written."""
    charts = collect(paths, show_all)
    os.makedirs(outdir, exist_ok=True)
    written, names = [], set()
    for c in charts:
        name = _slug(c.bench if c.quantity == RATIO else f"{c.bench} {c.quantity}")
        if name in names:   # the same benchmark in another section (mstream under ummap)
            name = _slug(c.subtitle.split()[0] if c.subtitle else "") + "-" + name
        while name in names:
            name += "-2"
        names.add(name)
        out = os.path.join(outdir, name + ".png")
        draw(c, out)
        written.append(out)
    return written


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 2)[2])
    ap.add_argument("results", nargs="+", help="JSON lines: a showcase run's records or a "
                    "benchmark's output; several files = several runs")
    ap.add_argument("-o", "--outdir", required=True, help="directory for the PNG files")
    ap.add_argument("--all", action="store_true",
                    help="every showcase row, not only the key ones and those with a target")
    args = ap.parse_args(argv)
    try:
        written = write(args.results, args.outdir, args.all)
    except InputError as e:
        print(f"plot.py: {e}", file=sys.stderr)
        return 1
    for p in written:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
