"""bench/plot.py draws what it is given, and refuses what it cannot read.

    python test_plot.py

Feeds small JSON-lines fixtures (written here, values chosen so each target is clearly met
or missed) through the command line as a user runs it, then checks the PNG files: they
exist, are PNG, are not near-empty, and the met (green) and missed (red) bars are really
drawn; two files of the same rows give error bars; ratios spanning 40x get a log axis. A
malformed file must exit 1 with the file and line named. Needs matplotlib (the .venv of
scripts/bootstrap). Exit status 1 when anything is wrong.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "..", "..", "bench")
sys.path.insert(0, BENCH)
import plot  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
from checks import check, failures  # noqa: E402  (tests/python/checks.py)


def row(bench, test, subject, ratio, target=None, key=True, **extra):
    return {"showcase": "row", "section": f"{bench} section (seed 000 §3)", "bench": bench,
            "test": test, "subject": subject, "result": "-", "baseline": "memory",
            "ratio": ratio, "verified": True, "note": "", "key": key, "target": target,
            **extra}


def write_jsonl(path, records):
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    return path


def run_plot(args):
    return subprocess.run([sys.executable, os.path.join(BENCH, "plot.py")] + args,
                          capture_output=True, text=True, timeout=120)


def has_colour(png, hex_colour):
    """Whether at least 200 pixels of the PNG are this colour (a bar, not a legend dot)."""
    import matplotlib.image
    import numpy as np
    img = matplotlib.image.imread(png)[:, :, :3]
    want = np.array([int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    return int((np.abs(img - want).max(axis=2) < 0.02).sum()) >= 200


def error_bars(fig):
    from matplotlib.container import ErrorbarContainer
    return any(isinstance(c, ErrorbarContainer) for c in fig.axes[0].containers)


def check_png(path):
    check(os.path.isfile(path), f"{path} was not written")
    if not os.path.isfile(path):
        return
    with open(path, "rb") as f:
        check(f.read(8) == PNG_MAGIC, f"{path} is not a PNG")
    check(os.path.getsize(path) > 10_000, f"{path}: {os.path.getsize(path)} bytes, too small "
          "for a chart with bars, labels and a legend")


def main():
    tmp = tempfile.mkdtemp(prefix="tierio-test-plot-")
    run = {"showcase": "run", "date": "2026-11-01 00:00 UTC", "mpi": "openmpi"}
    raw = {"bench": "mstream", "kernel": "triad", "window": "storage", "ratio": 0.97}
    rows = [raw, run,
            row("mstream", "triad", "storage", 1.02, target=0.95),        # met
            row("mstream", "sync", "storage", 0.5, target=0.8),           # missed
            row("mstream", "put", "storage", 0.7),                        # no target
            row("mstream", "copy", "storage", 0.9, key=False),            # not a key row
            row("ummap_ooc", "rmw", "ummap", 24.0, target=6),             # 40x spread:
            row("ummap_ooc", "rmw", "pread", 0.6),                        # log scale
            row("ckpt_drain", "app time", "multilevel_async", 1.3,
                target=0.8, goal="share hidden", goal_value=0.9)]
    one = write_jsonl(os.path.join(tmp, "run1.jsonl"), rows)

    out = os.path.join(tmp, "charts")
    p = run_plot([one, "-o", out])
    check(p.returncode == 0, f"plot.py on a showcase run exited {p.returncode}: {p.stderr}")
    names = sorted(os.path.basename(l) for l in p.stdout.split())
    check(names == ["ckpt_drain-share-hidden.png", "ckpt_drain.png", "mstream.png",
                    "ummap_ooc.png"], f"charts written: {names}")
    for n in names:
        check_png(os.path.join(out, n))
    mstream = os.path.join(out, "mstream.png")
    if os.path.isfile(mstream):
        check(has_colour(mstream, plot.COLOURS["met"]), "mstream.png: no green (met) bar")
        check(has_colour(mstream, plot.COLOURS["missed"]), "mstream.png: no red (missed) bar")
        check(has_colour(mstream, plot.COLOURS["none"]), "mstream.png: no grey bar")

    charts = {(c.bench, c.quantity): c for c in plot.collect([one])}   # a section each
    labels = list(charts["mstream", plot.RATIO].bars)
    check(labels == ["triad: storage (vs memory)", "sync: storage (vs memory)",
                     "put: storage (vs memory)"],
          f"mstream bars {labels}: key rows in order, the raw record and copy left out")
    drain = charts.get(("ckpt_drain", "share hidden"))
    check(drain is not None and drain.bars["app time: multilevel_async"].values == [0.9],
          "the goal's own chart holds its value, not the ratio")
    check(drain is not None and drain.bars["app time: multilevel_async"].target == 0.8,
          "the goal's chart has the row's target")
    ratio_bar = charts["ckpt_drain", plot.RATIO].bars["app time: multilevel_async (vs memory)"]
    check(ratio_bar.target is None,
          f"the ratio bar of a row whose target is on its goal has target {ratio_bar.target}")
    fig = plot.draw(charts["ummap_ooc", plot.RATIO], os.path.join(tmp, "ooc.png"))
    check(fig.axes[0].get_xscale() == "log", "ratios 0.6x and 24x: not on a log axis")
    fig = plot.draw(charts["mstream", plot.RATIO], os.path.join(tmp, "ms.png"))
    check(fig.axes[0].get_xscale() == "linear", "ratios 0.5x..1.02x: not on a linear axis")
    check(not error_bars(fig), "one run: error bars drawn")

    # A second run of the same rows: every bar a median with min-max error bars.
    two = write_jsonl(os.path.join(tmp, "run2.jsonl"),
                      [dict(r, ratio=r["ratio"] * 1.1) if "ratio" in r else r for r in rows])
    bar = {(c.bench, c.quantity): c for c in plot.collect([one, two])}[
        "mstream", plot.RATIO].bars["sync: storage (vs memory)"]
    check(bar.values == [0.5, 0.55], f"two runs of sync: values {bar.values}")
    fig = plot.draw(plot.collect([one, two])[0], os.path.join(tmp, "two.png"))
    check(error_bars(fig), "two runs: no error bars drawn")

    # A benchmark's own output (no showcase rows): its records, no targets.
    bench_out = write_jsonl(os.path.join(tmp, "mstream.out"),
                            [raw, dict(raw, kernel="sync", ratio=0.6),
                             dict(raw, window="memory", baseline=None, ratio=None)])
    p = run_plot([bench_out, "-o", os.path.join(tmp, "raw")])
    check(p.returncode == 0, f"plot.py on a benchmark's output exited {p.returncode}: "
          f"{p.stderr}")
    check_png(os.path.join(tmp, "raw", "mstream.png"))

    # Input it cannot plot: exit status 1 and a message naming the file and line.
    bad = os.path.join(tmp, "bad.jsonl")
    with open(bad, "w", encoding="utf-8") as f:
        f.write(json.dumps(run) + "\n{\"bench\": \"dht\", \"ratio\": \n")
    for path, want in ((bad, f"{bad}:2: not JSON"),
                       (write_jsonl(os.path.join(tmp, "str.jsonl"),
                                    [row("dht", "total", "storage", "fast")]),
                        "is 'fast', expected a number"),
                       (write_jsonl(os.path.join(tmp, "none.jsonl"), [run]),
                        "no result with a ratio"),
                       (os.path.join(tmp, "missing.jsonl"), "No such file")):
        p = run_plot([path, "-o", os.path.join(tmp, "bad")])
        check(p.returncode == 1, f"{os.path.basename(path)}: exit status {p.returncode}, "
              "expected 1")
        check(want in p.stderr, f"{os.path.basename(path)}: stderr {p.stderr!r} lacks {want!r}")
        check("Traceback" not in p.stderr, f"{os.path.basename(path)}: a traceback, not a "
              "message")
    check(not os.path.exists(os.path.join(tmp, "bad")), "bad input: an output directory made")

    if failures():
        print(f"test_plot: {failures()} failure(s); files kept in {tmp}", file=sys.stderr)
        return 1
    import shutil
    shutil.rmtree(tmp)
    print("test_plot: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
