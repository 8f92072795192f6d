#!/usr/bin/env python3
"""Run tierio's benchmarks and print ONE table of what ran, its result, its ratio to the
baseline measured in the same run, and whether the data was verified.

    bench/showcase.py --build-dir build --mpi openmpi --np 2 --size small

Exit status: 0 when every benchmark ran and every result was verified (and every storage
window really was on storage), 1 otherwise, 2 for a usage error.

Adding a capability: write a function `section_<name>(runner) -> Section` that runs its
benchmark(s) with `runner.run(...)` and turns the JSON records into rows, and append it to
SECTIONS at the bottom. Standard library only.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

# Benchmark arguments per --size. "small" runs in seconds on 2 cores.
SIZES: Dict[str, Dict[str, List[str]]] = {
    "small": {
        "mstream": ["-m", "64", "-r", "7"],
        "dht": ["-n", "8192", "-r", "3"],
        "hacc_io": ["-n", "131072", "-r", "3"],
    },
    "medium": {
        "mstream": ["-m", "64", "-r", "5"],
        "dht": ["-n", "65536", "-r", "3"],
        "hacc_io": ["-n", "1000000", "-r", "3"],
    },
}

# Open MPI on this machine kind (MACHINE.md): root needs the two ALLOW variables, more ranks
# than cores need oversubscription, and the default one-sided component (osc rdma) is broken:
# sm + pt2pt are selected knowingly. The same settings as the CTest helpers.
OPENMPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "OMPI_MCA_mpi_yield_when_idle": "1",
    "OMPI_MCA_osc": "sm,pt2pt",
    "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
}
LAUNCHERS = {"openmpi": "mpiexec.openmpi", "mpich": "mpiexec.mpich"}


# --------------------------------------------------------------------------------------------
# Table rows and sections
# --------------------------------------------------------------------------------------------

@dataclass
class Row:
    bench: str                 # benchmark
    test: str                  # kernel / phase
    subject: str               # window kind or I/O method
    result: str                # formatted result (GB/s, seconds, ...)
    baseline: str = ""         # what the ratio compares against
    ratio: Optional[float] = None
    verified: Optional[bool] = None   # None: nothing to verify
    note: str = ""
    problem: bool = False      # counts as a failure (besides verified == False)
    key: bool = True           # shown by default; others only with --all (or if failing)


@dataclass
class Section:
    title: str
    rows: List[Row] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)   # a benchmark that did not run through


class Runner:
    """Runs one benchmark under the chosen MPI launcher and returns its JSON records."""

    def __init__(self, args: argparse.Namespace, workdir: str):
        self.args = args
        self.workdir = workdir
        self.sizes = SIZES[args.size]
        self.launcher = args.mpiexec or LAUNCHERS[args.mpi]
        self.env = dict(os.environ)
        if args.mpi == "openmpi":
            self.env.update(OPENMPI_ENV)
        self.env.setdefault("TIERIO_LOG", "warn")
        self.records: List[dict] = []    # everything, for --json-out
        self.headers: List[str] = []     # the benchmarks' '#' header lines

    def find(self, exe: str) -> Optional[str]:
        for d in ("bench", "bin", "."):
            p = os.path.join(self.args.build_dir, d, exe)
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return p
        return shutil.which(exe)

    def run(self, exe: str, args: List[str]) -> Tuple[List[dict], Optional[str]]:
        """Run exe with args (plus -d workdir). Returns (records, error or None)."""
        path = self.find(exe)
        if path is None:
            return [], f"{exe} not found under {self.args.build_dir} (built with the bench/ targets?)"
        cmd = [self.launcher, "-n", str(self.args.np), path] + args + ["-d", self.workdir]
        if self.args.verbose:
            print("+ " + " ".join(cmd), file=sys.stderr)
        t0 = time.monotonic()
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    env=self.env, text=True, start_new_session=True)
        except OSError as e:
            return [], f"cannot start {self.launcher}: {e}"
        try:
            out, err = proc.communicate(timeout=self.args.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)   # the launcher and its ranks, nothing else
            out, err = proc.communicate()
            return self._parse(out, exe), f"{exe} timed out after {self.args.timeout} s"
        records = self._parse(out, exe)
        for line in err.splitlines():
            if line.startswith("#"):
                self.headers.append(line)
        if self.args.verbose:
            sys.stderr.write(err)
            print(f"  ({time.monotonic() - t0:.1f} s)", file=sys.stderr)
        if proc.returncode != 0:
            tail = "\n".join("    " + l for l in err.strip().splitlines()[-8:])
            return records, f"{exe} exited with status {proc.returncode}:\n{tail}"
        if not records:
            return records, f"{exe} printed no results"
        return records, None

    def _parse(self, out: str, exe: str) -> List[dict]:
        records = []
        for line in out.splitlines():
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                print(f"warning: {exe}: unparsable line: {line}", file=sys.stderr)
        self.records.extend(records)
        return records


# --------------------------------------------------------------------------------------------
# Formatting helpers
# --------------------------------------------------------------------------------------------

def fmt_gbps(rec: dict) -> str:
    v = rec.get("GBps")
    return "-" if v is None else f"{v:.3g} GB/s"


def fmt_seconds(s: Optional[float]) -> str:
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.3g} us"
    if s < 1:
        return f"{s * 1e3:.3g} ms"
    return f"{s:.3g} s"


def placement_check(rec: dict, window: str) -> Tuple[str, bool]:
    """A storage / combined window that MPI placed in memory means the hints were ignored."""
    if window in ("storage", "combined") and rec.get("placement") == "memory":
        return "hints ignored: window is in memory", True
    return "", False


# --------------------------------------------------------------------------------------------
# Sections (one per benchmark of a capability)
# --------------------------------------------------------------------------------------------

def section_mstream(r: Runner) -> Section:
    sec = Section("mSTREAM (seed 000 §3.3.1): STREAM kernels + Put/Get in one window")
    recs, err = r.run("tio-bench-mstream", r.sizes["mstream"])
    if err:
        sec.errors.append(err)
    for rec in recs:
        kernel, window = rec.get("kernel", "?"), rec.get("window", "?")
        note, problem = placement_check(rec, window)
        if kernel in ("put", "get"):
            note = (note + "; " if note else "") + rec.get("sync_mode", "")
        sec.rows.append(Row(
            bench="mstream", test=kernel, subject=window, result=fmt_gbps(rec),
            baseline=rec.get("baseline") or "", ratio=rec.get("ratio"),
            verified=rec.get("verified"), note=note, problem=problem,
            key=kernel in ("triad", "triad_after_sync", "sync", "write+fsync", "put", "get")))
    return sec


def section_dht(r: Runner) -> Section:
    sec = Section("DHT (seed 000 §3.3.2): CAS-based hash table filled to 80 %, memory vs storage")
    recs, err = r.run("tio-bench-dht", r.sizes["dht"])
    if err:
        sec.errors.append(err)
    for rec in recs:
        phase, window = rec.get("phase", "?"), rec.get("window", "?")
        note, problem = placement_check(rec, window)
        result = fmt_seconds(rec.get("seconds"))
        if rec.get("Mops") is not None:
            result += f" ({rec['Mops']:.3g} Mop/s)"
        if phase == "sync":
            note = (note + "; " if note else "") + "write-back of the filled table"
        sec.rows.append(Row(
            bench="dht", test=phase, subject=window, result=result,
            baseline=rec.get("baseline") or "", ratio=rec.get("ratio"),
            verified=rec.get("verified"), note=note, problem=problem,
            key=phase in ("total", "sync")))
    return sec


def section_hacc_io(r: Runner) -> Section:
    sec = Section("HACC-IO (seed 000 §3.3.3): checkpoint/restart of a shared file, until durable")
    # The default size, then a large checkpoint (2 MiB-aligned variables): with the kernel's
    # memory mapping small checkpoints pay a page fault per 4 KiB, large ones do not.
    runs = [(r.sizes["hacc_io"], ""),
            (["-n", "4194304", "-r", "3", "-M", "storage,independent"], "4 Mi particles/rank")]
    for args, label in runs:
        recs, err = r.run("tio-bench-hacc-io", args)
        if err:
            sec.errors.append(err)
        for rec in recs:
            phase, method = rec.get("phase", "?"), rec.get("method", "?")
            notes = [label] if label else []
            if phase == "restart":
                notes.append("page cache dropped first" if rec.get("cache") == "dropped"
                             else "warm cache")
            sec.rows.append(Row(
                bench="hacc_io", test=phase, subject=method,
                result=f"{fmt_seconds(rec.get('seconds'))} ({fmt_gbps(rec)})",
                baseline=rec.get("baseline") or "", ratio=rec.get("ratio"),
                verified=rec.get("verified"), note=", ".join(notes)))
    return sec


# Later capabilities append their section functions here.
SECTIONS: List[Callable[[Runner], Section]] = [section_mstream, section_dht, section_hacc_io]


# --------------------------------------------------------------------------------------------
# Table
# --------------------------------------------------------------------------------------------

def print_table(sections: List[Section], show_all: bool, allow_memory: bool) -> int:
    header = ["benchmark", "test", "window/method", "result", "baseline", "ratio",
              "verified", "note"]
    lines: List[List[str]] = []
    section_starts: Dict[int, str] = {}
    failures = 0
    for sec in sections:
        section_starts[len(lines)] = sec.title
        for row in sec.rows:
            bad = row.verified is False or (row.problem and not allow_memory)
            failures += bad
            if not (row.key or show_all or row.verified is False):
                continue
            verified = {True: "yes", False: "NO", None: "-"}[row.verified]
            ratio = "-" if row.ratio is None else f"{row.ratio:.3g}x"
            note = row.note + (" <- FAILED" if bad else "")
            lines.append([row.bench, row.test, row.subject, row.result, row.baseline, ratio,
                          verified, note])
        for e in sec.errors:
            failures += 1
            lines.append([sec.title.split()[0], "FAILED", "", "", "", "", "NO",
                          e.splitlines()[0]])
    widths = [max([len(header[i])] + [len(l[i]) for l in lines]) for i in range(len(header))]
    widths[-1] = len(header[-1])   # the note is free-running text

    def fmt(cells: List[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

    total_width = len(fmt(["x" * w for w in widths]))
    print(fmt(header))
    print("-" * total_width)
    for i, cells in enumerate(lines):
        if i in section_starts and i > 0:
            print()
        if i in section_starts:
            print(f"# {section_starts[i]}")
        print(fmt(cells))
    print("-" * total_width)
    print("ratio = speed relative to the baseline measured in the same run "
          "(GB/s / baseline GB/s, or baseline time / time): 1x = as fast, <1x = slower.")
    for sec in sections:
        for e in sec.errors:
            print(f"error: {e}", file=sys.stderr)
    return failures


def detect_mpi(build_dir: str) -> str:
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt"), encoding="utf-8") as f:
            for line in f:
                if line.startswith(("MPI_C_COMPILER:", "MPIEXEC_EXECUTABLE:")) and "mpich" in line:
                    return "mpich"
    except OSError:
        pass
    return "openmpi"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", required=True, help="CMake build tree of tierio")
    ap.add_argument("--mpi", choices=sorted(LAUNCHERS),
                    help="MPI library the build uses (default: from CMakeCache.txt)")
    ap.add_argument("--mpiexec", help="launcher to use instead of mpiexec.<mpi>")
    ap.add_argument("--np", type=int, default=2, help="MPI ranks (default 2)")
    ap.add_argument("--size", choices=sorted(SIZES), default="small",
                    help="problem size (default small: seconds on 2 cores)")
    ap.add_argument("--dir", help="directory for the window / checkpoint files (default "
                    "$TIERIO_BENCH_DIR, else a fresh temporary directory in /tmp)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per benchmark")
    ap.add_argument("--all", action="store_true", help="show every result, not only the key ones")
    ap.add_argument("--allow-memory", action="store_true",
                    help="do not fail when storage windows were placed in memory (a plain "
                    "MPI without tierio)")
    ap.add_argument("--json-out", help="also write every JSON record to this file")
    ap.add_argument("-v", "--verbose", action="store_true", help="show commands and stderr")
    args = ap.parse_args()
    if args.np < 1:
        ap.error("--np must be at least 1")
    if not os.path.isdir(args.build_dir):
        ap.error(f"--build-dir {args.build_dir}: no such directory")
    if args.mpi is None:
        args.mpi = detect_mpi(args.build_dir)

    made_dir = None
    workdir = args.dir or os.environ.get("TIERIO_BENCH_DIR") or ""
    if not workdir:
        workdir = made_dir = tempfile.mkdtemp(prefix="tierio-showcase-", dir="/tmp")
    os.makedirs(workdir, exist_ok=True)

    runner = Runner(args, workdir)
    print(f"tierio showcase: {args.mpi} ({runner.launcher}), {args.np} ranks, size {args.size}, "
          f"files in {workdir}")
    try:
        sections = []
        for fn in SECTIONS:
            sections.append(fn(runner))
    finally:
        if made_dir:
            shutil.rmtree(made_dir, ignore_errors=True)
    if args.verbose:
        for h in runner.headers:
            print(h)
    print()
    failures = print_table(sections, args.all, args.allow_memory)
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as f:
            for rec in runner.records:
                f.write(json.dumps(rec) + "\n")
    nres = sum(len(s.rows) for s in sections)
    if failures:
        print(f"FAILED: {failures} problem(s) among {nres} results")
        return 1
    print(f"OK: {nres} results, all verified")
    return 0


if __name__ == "__main__":
    sys.exit(main())
