#!/usr/bin/env python3
"""Run tierio's benchmarks and print ONE table of what ran, its result, its ratio to the
baseline measured in the same run, and whether the data was verified.

    bench/showcase.py --build-dir build --mpi openmpi --np 2 --size small

Exit status: 0 when every benchmark ran and every result was verified (and every storage
window really was on storage), 1 otherwise, 2 for a usage error.

The multi-node sections (topo_ckpt, agg) run their benchmarks on an emulated cluster
(tools/cluster/tio-cluster, CLUSTER_LAYOUT nodes x ranks, the showcase's MPI): that
needs root; without it they report "skipped: ..." as errors, and the exit status is 1.
--np applies to the single-node sections only. --only runs some sections.

Adding a capability: write a function `section_<name>(runner) -> Section` that runs its
benchmark(s) with `runner.run(...)` (or `runner.run_cluster(...)` on the emulated cluster)
and turns the JSON records into rows, and append it to SECTIONS at the bottom. Standard
library only (bench/showcase_cluster.py is part of it), except --plot: bench/plot.py needs
matplotlib (scripts/bootstrap installs it in .venv, the Python scripts/showcase runs).
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

import results
import showcase_cluster

# Benchmark arguments per --size. "small" runs in seconds on 2 cores.
SIZES: Dict[str, Dict[str, List[str]]] = {
    "small": {
        "mstream": ["-m", "64", "-r", "7"],
        "dht": ["-n", "8192", "-r", "3"],
        "hacc_io": ["-n", "131072", "-r", "3"],
        "ummap_mstream": ["-m", "64", "-r", "7"],
        "ummap_ior": ["-b", "32Mi", "-r", "3"],
        "ummap_ooc": ["-m", "64Mi", "-D", "posix,direct"],
        "ummap_prk": ["-n", "512", "-N", "1024", "-i", "100"],
        "ummap_memmode": ["-n", "8", "-m", "256Mi"],
        "ummap_fault": ["-n", "4096", "-r", "3", "-o", "rnd"],
        "ummap_bulksync": ["-m", "64Mi", "-r", "5"],
        # On the emulated cluster (CLUSTER_LAYOUT); topo_ckpt: 19 MB of particles per rank.
        "topo_ckpt": ["-n", "500000", "-r", "3"],
        "topo_exchange": ["-R", "5"],
        "topo_discovery": ["-r", "5"],
        # Its default 10 steps of 1 s: with fewer the wait for the last drain at close
        # weighs more, and the hidden fraction is no longer the one its target is about.
        "ckpt_drain": ["-r", "1", "-t"],
        "agg_1d": ["-r", "9"],
        "agg_workflow": ["-r", "3"],
        "agg_hacc": ["-n", "27594", "-r", "5"],
        "agg_probe": ["--size", "16Mi"],
        "agg_s3d": ["-r", "3"],
    },
    "medium": {
        "mstream": ["-m", "64", "-r", "5"],
        "dht": ["-n", "65536", "-r", "3"],
        "hacc_io": ["-n", "1000000", "-r", "3"],
        "ummap_mstream": ["-m", "256", "-r", "5"],
        "ummap_ior": ["-b", "256Mi", "-r", "3"],
        "ummap_ooc": ["-m", "256Mi", "-D", "posix,direct"],
        "ummap_prk": ["-n", "1024", "-N", "2048", "-i", "100"],
        "ummap_memmode": ["-n", "8", "-m", "512Mi"],
        "ummap_fault": ["-n", "16384", "-r", "3"],
        "ummap_bulksync": ["-m", "256Mi", "-r", "5", "-p", "1,4"],
        "topo_ckpt": ["-n", "1000000", "-r", "3"],
        "topo_exchange": ["-R", "10"],
        "topo_discovery": ["-r", "30"],
        "ckpt_drain": ["-r", "1", "-t"],
        "agg_1d": ["-r", "7"],
        "agg_workflow": ["-r", "5"],
        "agg_hacc": ["-r", "3"],
        "agg_probe": [],
        "agg_s3d": ["-r", "5"],
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

# The multi-node benchmarks run on an emulated cluster of this many nodes and ranks per node
# (tools/cluster/tio-cluster), with the shared directory ("parallel file system") throttled
# as in their documentation: docs/ckpt.md (topology, checkpoints) and docs/agg.md. MPICH
# busy-polls: 8 ranks on 2 cores make every collective cost tens of ms (docs/agg.md), so it
# gets 2 nodes of 2 ranks (still several ranks per node and several nodes).
CLUSTER_LAYOUT = {"openmpi": (4, 2), "mpich": (2, 2)}
TOPO_PFS = {"pfs_write_bps": 200_000_000}
AGG_PFS = {"pfs_write_bps": 100_000_000, "pfs_read_bps": 200_000_000}


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
    # The target: met when the ratio, or `goal_value` when the target is about
    # another quantity (`goal`, a fraction), is >= target. The note says it in words (added
    # here, once for every row), bench/plot.py draws it.
    target: Optional[float] = None
    goal: str = ""
    goal_value: Optional[float] = None

    def __post_init__(self) -> None:
        if self.target is not None:
            said = _target_note(self.goal_value if self.goal else self.ratio, self.target,
                                percent=bool(self.goal))
            self.note = ", ".join(x for x in (self.note, said) if x)


@dataclass
class Section:
    title: str
    rows: List[Row] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)   # a benchmark that did not run through
    seconds: Optional[float] = None                    # wall time of the whole section


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
        self.last_rc: Optional[int] = None   # exit status of the last command
        self.cluster_skip = ""           # why the emulated cluster cannot run here, once known
        self.cluster_nodes, self.cluster_ppn = CLUSTER_LAYOUT[args.mpi]

    def find(self, exe: str) -> Optional[str]:
        for d in ("bench", "tools", "bin", "."):
            p = os.path.join(self.args.build_dir, d, exe)
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return p
        return shutil.which(exe)

    def run(self, exe: str, args: List[str], mpi: bool = True) -> Tuple[List[dict], Optional[str]]:
        """Run exe with args (plus -d workdir), under the MPI launcher unless mpi is False
        (single-node programs that start their own processes). Returns (records, error or
        None)."""
        path = self.find(exe)
        if path is None:
            return [], f"{exe} not found under {self.args.build_dir} (built with the bench/ targets?)"
        launch = [self.launcher, "-n", str(self.args.np)] if mpi else []
        records, err, _ = self._launch(launch + [path] + args + ["-d", self.workdir], exe)
        return records, err

    def run_cluster(self, exe: str, args: List[str], nodes: Optional[int] = None,
                    ppn: Optional[int] = None,
                    pfs_write_bps: Optional[int] = None, pfs_read_bps: Optional[int] = None,
                    env: Optional[Dict[str, str]] = None, pfs: Optional[str] = None,
                    parse: bool = True) -> Tuple[List[dict], Optional[str]]:
        """Run exe with args on a fresh emulated cluster of `nodes` nodes, `ppn` ranks each
        (default: CLUSTER_LAYOUT of this showcase's MPI; tools/cluster/tio-cluster run). The
        ranks find the shared directory in $TIERIO_PFS and node-local storage in
        $TIERIO_NODE_LOCAL, which the cluster benchmarks use by default: no -d. pfs: the
        shared directory to use (to keep files from one cluster job to the next), else a
        fresh one in the work directory, removed afterwards. parse=False: a preparatory job
        whose output is not results. Returns (records, error or None); a machine that cannot
        emulate a cluster is an error too ("skipped: ..."): the benchmark did not run."""
        if self.cluster_skip:
            return [], f"{exe}: {self.cluster_skip}"
        tool = showcase_cluster.find_tool()
        if tool is None:
            self.cluster_skip = (f"skipped: {showcase_cluster.REPO}/tools/cluster/tio-cluster "
                                 "not found (the emulated cluster runs the multi-node benchmarks)")
            return [], f"{exe}: {self.cluster_skip}"
        path = self.find(exe)
        if path is None:
            return [], f"{exe} not found under {self.args.build_dir} (built with the bench/ targets?)"
        made = None
        if pfs is None:
            pfs = made = tempfile.mkdtemp(prefix="pfs-", dir=self.workdir)
        cmd = showcase_cluster.command(tool, self.args.mpi, [path] + args,
                                       nodes or self.cluster_nodes, ppn or self.cluster_ppn,
                                       pfs=pfs,
                                       pfs_write_bps=pfs_write_bps, pfs_read_bps=pfs_read_bps,
                                       env=env)
        try:
            records, err, stderr = self._launch(cmd, exe, parse=parse)
        finally:
            if made:
                shutil.rmtree(made, ignore_errors=True)
        reason = showcase_cluster.skip_reason(self.last_rc, stderr)
        if err and reason:
            self.cluster_skip = ("skipped: the emulated cluster needs root, namespaces and "
                                 f"cgroups v1 (tio-cluster: {reason})")
            return records, f"{exe}: {self.cluster_skip}"
        return records, err

    def _launch(self, cmd: List[str], exe: str,
                parse: bool = True) -> Tuple[List[dict], Optional[str], Optional[str]]:
        """Run cmd in a session of its own, killed as a whole on timeout. Returns (records,
        error or None, stderr or None on timeout); self.last_rc is its exit status."""
        self.last_rc = None
        if self.args.verbose:
            print("+ " + " ".join(cmd), file=sys.stderr)
        t0 = time.monotonic()
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    env=self.env, text=True, start_new_session=True)
        except OSError as e:
            return [], f"cannot start {cmd[0]}: {e}", None
        try:
            out, err = proc.communicate(timeout=self.args.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)   # the launcher and its ranks, nothing else
            out, err = proc.communicate()
            records = self._parse(out, exe) if parse else []
            return records, f"{exe} timed out after {self.args.timeout} s", None
        except BaseException:   # ^C: leave no launcher behind
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        self.last_rc = proc.returncode
        records = self._parse(out, exe) if parse else []
        for line in err.splitlines():
            if line.startswith("#"):
                self.headers.append(line)
        if self.args.verbose:
            sys.stderr.write(err)
            print(f"  ({time.monotonic() - t0:.1f} s)", file=sys.stderr)
        if proc.returncode != 0:
            tail = "\n".join("    " + l for l in err.strip().splitlines()[-8:])
            return records, f"{exe} exited with status {proc.returncode}:\n{tail}", err
        if parse and not records:
            return records, f"{exe} printed no results", err
        return records, None, err

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
        target = None
        if kernel == "triad" and window != "memory":
            target = 0.95
        if kernel in ("sync", "resync"):   # first write-back of the new file, and a later one
            target = 0.8
            what = "first write-back" if kernel == "sync" else "write-back of rewritten pages"
            note = ", ".join(x for x in (note, what) if x)
        sec.rows.append(Row(
            bench="mstream", test=kernel, subject=window, result=fmt_gbps(rec),
            baseline=rec.get("baseline") or "", ratio=rec.get("ratio"),
            verified=rec.get("verified"), note=note, problem=problem, target=target,
            key=kernel in ("triad", "triad_after_sync", "sync", "resync", "write+fsync",
                           "rewrite+fsync", "put", "get")))
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
        target = 0.85 if phase == "total" and window == "storage" else None
        sec.rows.append(Row(
            bench="dht", test=phase, subject=window, result=result,
            baseline=rec.get("baseline") or "", ratio=rec.get("ratio"),
            verified=rec.get("verified"), note=note, problem=problem, target=target,
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
            # the target holds for storage windows on either engine: the kernel's mapping
            # (default) and the user-level one (ummap, storage_alloc_sync_scope=file)
            target = None
            if phase == "checkpoint" and method in ("storage_window", "storage_window_ummap"):
                target = 1
            if phase == "restart":
                notes.append("page cache dropped first" if rec.get("cache") == "dropped"
                             else "warm cache")
            sec.rows.append(Row(
                bench="hacc_io", test=phase, subject=method,
                result=f"{fmt_seconds(rec.get('seconds'))} ({fmt_gbps(rec)})",
                baseline=rec.get("baseline") or "", ratio=rec.get("ratio"),
                verified=rec.get("verified"), note=", ".join(notes), target=target))
    return sec


def _target_note(ratio: Optional[float], target: float, percent: bool = False) -> str:
    """The issue's target for a ratio (or, with percent, for a fraction), and whether this
    run met it (timings are not asserted: a missed target is reported, not a failure)."""
    goal = f"target >= {target * 100:g} %" if percent else f"target >= {target:g}x"
    if ratio is None:
        return goal
    return goal + ("" if ratio >= target else " (missed)")


def _ummap_mstream(r: Runner, sec: Section) -> None:
    recs, err = r.run("tio-bench-mstream", r.sizes["ummap_mstream"] +
                      ["-w", "memory,storage", "-e", "ummap"])
    if err:
        sec.errors.append("mstream -e ummap: " + err)
    for rec in recs:
        kernel, window = rec.get("kernel", "?"), rec.get("window", "?")
        if window == "memory" or kernel not in ("triad", "sync", "resync"):
            continue
        note, problem = placement_check(rec, window)
        target = 0.8 if kernel == "triad" else None
        sec.rows.append(Row(
            bench="mstream", test=kernel, subject="ummap window", result=fmt_gbps(rec),
            baseline=rec.get("baseline") or "", ratio=rec.get("ratio"),
            verified=rec.get("verified"), note=note, problem=problem, target=target))


def _ummap_ior(r: Runner, sec: Section) -> None:
    recs, err = r.run("tio-bench-ummap-ior", r.sizes["ummap_ior"])
    if err:
        sec.errors.append(err)
    for rec in recs:
        phase, method = rec.get("phase", "?"), rec.get("method", "?")
        every = rec.get("sync_every") or 0
        test = f"{rec.get('pattern', '?')} {phase}" + (f", sync/{every}" if every else "")
        sec.rows.append(Row(
            bench="ummap_ior", test=test, subject=method, result=fmt_gbps(rec),
            baseline=rec.get("baseline") or "", ratio=rec.get("ratio"),
            verified=rec.get("verified"), key=method == "ummap",
            note=f"{rec.get('transfer', 0) // 1024} KiB transfers, "
                 f"{rec.get('block', 0) >> 20} MiB/rank"))


def _ummap_ooc(r: Runner, sec: Section) -> None:
    recs, err = r.run("tio-bench-ummap-ooc", r.sizes["ummap_ooc"], mpi=False)
    if err:
        sec.errors.append(err)
    for rec in recs:
        method = rec.get("method", "?")
        if rec.get("skipped"):
            sec.rows.append(Row(bench="ummap_ooc", test="rmw 2x limit", subject=method,
                                result="skipped", note=rec["skipped"]))
            continue
        if rec.get("error"):
            sec.errors.append(f"tio-bench-ummap-ooc: {method}: {rec['error']}")
            continue
        note = f"limit {rec.get('limit', 0) >> 20} MiB ({rec.get('confinement', '?')})"
        subject, target = method, None
        if method == "ummap":
            target = 6
            subject = f"ummap ({rec.get('driver', '?')})"
        sec.rows.append(Row(
            bench="ummap_ooc", test="rmw 2x limit", subject=subject,
            result=fmt_seconds(rec.get("seconds")), baseline=rec.get("baseline") or "",
            ratio=rec.get("ratio"), verified=rec.get("verified"), note=note, target=target,
            key=method in ("ummap", "mmap")))


def _ummap_prk(r: Runner, sec: Section) -> None:
    recs, err = r.run("tio-bench-ummap-prk", r.sizes["ummap_prk"])
    if err:
        sec.errors.append(err)
    for rec in recs:
        method = rec.get("method", "?")
        note = f"{rec.get('iterations')} iterations, sync every {rec.get('sync_every')}"
        if rec.get("ratio_memory") is not None:
            note += f"; {rec['ratio_memory']:.3g}x of memory's speed"
        sec.rows.append(Row(
            bench="ummap_prk", test=rec.get("kernel", "?"), subject=method,
            result=fmt_seconds(rec.get("seconds")), baseline=rec.get("baseline") or "",
            ratio=rec.get("ratio"), verified=rec.get("verified"), note=note,
            key=method in ("ummap", "mmap")))


def _ummap_memmode(r: Runner, sec: Section) -> None:
    recs, err = r.run("tio-bench-ummap-memmode", r.sizes["ummap_memmode"], mpi=False)
    if err:
        sec.errors.append(err)
    for rec in recs:
        if "process" in rec:   # the per-process timeline: --json-out keeps it
            if rec.get("verified") is False:
                sec.rows.append(Row(bench="ummap_memmode", test=f"process {rec['process']}",
                                    subject=rec.get("mode", "?"), result="-", verified=False))
            continue
        mode = rec.get("mode", "?")
        note = (f"{rec.get('procs')} procs, limit {rec.get('limit', 0) >> 20} MiB, "
                f"sizes {rec.get('total_size', 0) >> 20} MiB")
        target = 1.5 if mode == "dynamic" else None
        sec.rows.append(Row(
            bench="ummap_memmode", test="makespan", subject=mode,
            result=fmt_seconds(rec.get("seconds")), baseline=rec.get("baseline") or "",
            ratio=rec.get("ratio"), verified=rec.get("verified"), note=note, target=target))


def _ummap_fault(r: Runner, sec: Section) -> None:
    recs, err = r.run("tio-bench-ummap-fault", r.sizes["ummap_fault"], mpi=False)
    if err:
        sec.errors.append(err)
    for rec in recs:
        method, access = rec.get("method", "?"), rec.get("access", "?")
        mean, med = rec.get("mean_us"), rec.get("median_us")
        result = "-" if mean is None else f"{mean:.3g} us"
        sec.rows.append(Row(
            bench="ummap_fault", test=f"{access} ({rec.get('order', '?')})", subject=method,
            result=result, baseline=rec.get("baseline") or "", ratio=rec.get("ratio"),
            verified=rec.get("verified"),
            note="mean per first touch" + ("" if med is None else f", median {med:.3g} us"),
            key=method == "ummap" and access in ("read", "write", "write_after_read")))


def _ummap_bulksync(r: Runner, sec: Section) -> None:
    recs, err = r.run("tio-bench-ummap-bulksync", r.sizes["ummap_bulksync"], mpi=False)
    if err:
        sec.errors.append(err)
    for rec in recs:
        if rec.get("method") == "write+fsync":
            subject, key = "write+fsync", False
        else:
            subject = f"umsync {rec.get('mode', '?')} ({rec.get('driver', '?')})"
            key = rec.get("driver") in ("posix", "direct")
        test = "sync" + (f" 1/{rec['stride']} segs" if rec.get("stride", 1) != 1 else "")
        if rec.get("skipped"):
            sec.rows.append(Row(bench="ummap_bulksync", test=test, subject=subject,
                                result="skipped", note=rec["skipped"], key=False))
            continue
        note = f"{rec.get('bytes', 0) / 2**20:.0f} MiB dirty"
        target = 0.8 if rec.get("mode") == "bulk" else None
        sec.rows.append(Row(
            bench="ummap_bulksync", test=test, subject=subject, result=fmt_gbps(rec),
            baseline=rec.get("baseline") or "", ratio=rec.get("ratio"),
            verified=rec.get("verified"), note=note, key=key, target=target))


def section_ummap(r: Runner) -> Section:
    sec = Section("ummap engine (seed 000 ch. 6): user-level mapping vs kernel mmap, "
                  "pread/pwrite and memory")
    for part in (_ummap_mstream, _ummap_bulksync, _ummap_fault, _ummap_ior, _ummap_prk,
                 _ummap_ooc, _ummap_memmode):
        part(r, sec)
    return sec


def _vs(rec: dict, subject: str) -> dict:
    """baseline and ratio of a Row; none for the baseline's own row (1x by definition)."""
    b = rec.get("baseline") or ""
    if b == subject:
        return {"baseline": "", "ratio": None}
    return {"baseline": b, "ratio": rec.get("ratio")}


def fmt_mbps(v: Optional[float]) -> str:
    if v is None:
        return "-"
    return f"{v / 1000:.3g} GB/s" if v >= 1000 else f"{v:.3g} MB/s"


def _topo_ckpt(r: Runner, sec: Section) -> None:
    recs, err = r.run_cluster("tio-bench-topo-ckpt", r.sizes["topo_ckpt"], **TOPO_PFS)
    if err:
        sec.errors.append(err)
    for rec in recs:
        phase, method = rec.get("phase", "?"), rec.get("method", "?")
        note = (f"{rec.get('neighbourhoods', '?')} neighbourhoods, "
                f"{rec.get('bytes', 0) / 1e6:.0f} MB")
        target = 3 if method == "topology_aware" and phase == "checkpoint" else None
        sec.rows.append(Row(
            bench="topo_ckpt", test=phase, subject=method,
            result=f"{fmt_seconds(rec.get('seconds'))} ({fmt_mbps(rec.get('mb_per_s'))})",
            verified=rec.get("verified"), note=note, target=target, **_vs(rec, method)))


def _topo_exchange(r: Runner, sec: Section) -> None:
    recs, err = r.run_cluster("tio-bench-topo-exchange", r.sizes["topo_exchange"], **TOPO_PFS)
    if err:
        sec.errors.append(err)
    for rec in recs:
        method = rec.get("method", "?")
        if method == "per_block":   # local vs PFS blocks, both from the topology-aware run
            sec.rows.append(Row(
                bench="topo_exchange", test="per block", subject="node-local",
                result=fmt_seconds(rec.get("local_seconds")),
                baseline=f"PFS {fmt_seconds(rec.get('global_seconds'))}",
                ratio=rec.get("ratio"), verified=rec.get("verified"),
                note=f"{rec.get('local_blocks')} local, {rec.get('global_blocks')} PFS blocks"))
            continue
        sec.rows.append(Row(
            bench="topo_exchange", test="round", subject=method,
            result=fmt_seconds(rec.get("seconds_per_round")),
            verified=rec.get("verified"), **_vs(rec, method),
            note=f"{rec.get('block_bytes', 0) >> 20} MiB blocks, "
                 f"{rec.get('local_fraction', 0) * 100:.0f} % through node-local",
            key=method != "global"))


def _ckpt_drain(r: Runner, sec: Section) -> None:
    recs, err = r.run_cluster("tio-bench-ckpt-drain", r.sizes["ckpt_drain"], **TOPO_PFS)
    if err:
        sec.errors.append(err)
    for rec in recs:
        mode = rec.get("mode", "?")
        result = fmt_seconds(rec.get("seconds"))
        if mode != "none":
            result += f" (+{fmt_seconds(rec.get('overhead_seconds'))})"
        note = (f"{rec.get('steps')} steps, {rec.get('bytes_per_checkpoint', 0) / 1e6:.0f} MB "
                "per checkpoint" + (", MPI_THREAD_MULTIPLE" if rec.get("thread_multiple") else ""))
        if mode == "none":
            note = "compute only: " + note
        goal = {}
        if mode == "multilevel_async":
            # drain_hidden_fraction: the share of the global write the application does not
            # see (the local checkpoint's own cost, local_only's overhead, aside): the
            # issue's target. hidden_fraction: the whole overhead against global_sync's.
            drain, hidden = rec.get("drain_hidden_fraction"), rec.get("hidden_fraction")
            before = rec.get("hidden_fraction_before_close")
            goal = {"target": 0.8, "goal": "share of the global write the drain hides",
                    "goal_value": drain}
            if drain is not None and hidden is not None:
                note = (f"drain hides {drain * 100:.0f} % of the global write"
                        + f"; overhead {hidden * 100:.0f} % below global_sync's"
                        + ("" if before is None else f" ({before * 100:.0f} % before close)")
                        + "; " + note)
            else:
                note = "no hidden fraction reported; " + note
        sec.rows.append(Row(
            bench="ckpt_drain", test="app time (+overhead)", subject=mode, result=result,
            **(_vs(rec, mode) if mode != "none" else {}), verified=rec.get("verified"),
            note=note, **goal,
            key=mode in ("global_sync", "multilevel_async")))


def _topo_discovery(r: Runner, sec: Section) -> None:
    recs, err = r.run_cluster("tio-bench-topo-discovery", r.sizes["topo_discovery"])
    if err:
        sec.errors.append(err)
    for rec in recs:
        method, d = rec.get("method", "?"), rec.get("dir", "")
        where = "node-local" if d.startswith("/tmp/tierio-node-local") else "PFS"
        # MPI_COMM_TYPE_SHARED is the floor (no file touched), not a discovery: its groups
        # are the nodes whatever the directory. MPICH's own algorithms are compared, not
        # checked: tierio answers for its own.
        checked = method.startswith("tierio-")
        verified = None
        if checked:
            verified = bool(rec.get("same_groups")) and bool(rec.get("key_order"))
        note = f"{rec.get('groups', '?')} groups"
        if rec.get("fileops") is not None:
            note += f", {rec['fileops']} file ops"
        if not checked and method != "mpi-split-shared":
            note += f", same groups {rec.get('same_groups')}, key order {rec.get('key_order')}"
        sec.rows.append(Row(
            bench="topo_discovery", test=f"split by {where} dir", subject=method,
            result=f"{rec.get('time_ms', 0):.3g} ms", verified=verified, note=note,
            **_vs(rec, method),
            key=method == "tierio-hybrid"))


def section_topo_ckpt(r: Runner) -> Section:
    sec = Section(f"Storage topology + checkpointing (seed 003 §4, §6), emulated cluster "
                  f"{r.cluster_nodes} nodes x {r.cluster_ppn} ranks, PFS writes throttled to "
                  f"{TOPO_PFS['pfs_write_bps'] / 1e6:.0f} MB/s")
    for part in (_topo_ckpt, _topo_exchange, _ckpt_drain, _topo_discovery):
        part(r, sec)
    return sec


def _mpiio_baseline(rec: dict) -> str:
    b = rec.get("baseline") or ""
    return f"{b} ({rec['mpiio']})" if b == "mpiio" and rec.get("mpiio") else b


def _agg_row(bench: str, test: str, rec: dict, note: str = "", key: bool = False,
             target: Optional[float] = None) -> Row:
    return Row(bench=bench, test=test, subject=rec.get("method", "?"),
               result=f"{fmt_seconds(rec.get('seconds'))} ({fmt_gbps(rec)})",
               baseline=_mpiio_baseline(rec), ratio=rec.get("ratio"),
               verified=rec.get("verified"), note=note, key=key, target=target)


def _agg_1d(r: Runner, sec: Section) -> None:
    recs, err = r.run_cluster("tio-bench-agg-1d", r.sizes["agg_1d"], **AGG_PFS)
    if err:
        sec.errors.append(err)
    for rec in recs:
        dist, phase, method = rec.get("dist", "?"), rec.get("phase", "?"), rec.get("method", "?")
        note = f"{rec.get('bytes', 0) / 1e6:.2g} MB in all"
        # The target, on the first write (which includes the declaration) and on a later
        # write of the declared layout (the way seed 002's Algorithm 2 is used)
        target = None
        if method == "tierio" and phase in ("write", "rewrite") and dist in ("uniform",
                                                                            "normal"):
            target = 2
        sec.rows.append(_agg_row("agg_1d", f"{dist} {phase}", rec, note, target=target,
                                 key=method == "tierio" and phase in ("write", "rewrite")))


def _agg_workflow(r: Runner, sec: Section) -> None:
    recs, err = r.run_cluster("tio-bench-agg-workflow", r.sizes["agg_workflow"], **AGG_PFS)
    if err:
        sec.errors.append(err)
    for rec in recs:
        phase, method = rec.get("phase", "?"), rec.get("method", "?")
        note = f"{rec.get('bytes', 0) / 1e6:.0f} MB"
        red = rec.get("reduction") or ""   # "61.0%", or "-24.2%" when it took longer
        if red:
            note += (f", {red[1:]} more I/O time" if red.startswith("-")
                     else f", {red} less I/O time")
        target = None
        if method == "tierio_nodelocal" and phase == "total":
            # the target is 20 % less I/O time: 1 - method / mpiio = 1 - 1 / ratio >= 0.2,
            # a ratio of 1 / (1 - 0.2) = 1.25x
            target = 1 / (1 - 0.2)
        sec.rows.append(_agg_row("agg_workflow", phase, rec, note, target=target,
                                 key=phase == "total" and method != "mpiio"))


def _agg_hacc(r: Runner, sec: Section) -> None:
    recs, err = r.run_cluster("tio-bench-agg-hacc", r.sizes["agg_hacc"], **AGG_PFS)
    if err:
        sec.errors.append(err)
    for rec in recs:
        layout, phase = rec.get("layout", "?"), rec.get("phase", "?")
        method = rec.get("method", "?")
        note = (f"{rec.get('particles_per_rank', '?')} particles/rank "
                f"({rec.get('bytes', 0) / 1e6:.2g} MB in all)")
        sec.rows.append(_agg_row("agg_hacc", f"{layout} {phase}", rec, note,
                                 key=method == "tierio"))


def _agg_s3d(r: Runner, sec: Section) -> None:
    # Tapioca needs the tiers' figures: `tierio probe` measures them on a cluster of the same
    # shape, writing the site file into the shared directory the S3D job then uses.
    pfs = tempfile.mkdtemp(prefix="pfs-s3d-", dir=r.workdir)
    try:
        site = os.path.join(pfs, "site.conf")
        _, err = r.run_cluster("tierio", ["probe", "-o", site] + r.sizes["agg_probe"],
                               pfs=pfs, parse=False, **AGG_PFS)
        if err:
            sec.errors.append("agg_s3d: tierio probe (for the site file): " + err)
            return
        recs, err = r.run_cluster("tio-bench-agg-s3d", r.sizes["agg_s3d"], pfs=pfs,
                                  env={"TIERIO_SITE": site}, **AGG_PFS)
    finally:
        shutil.rmtree(pfs, ignore_errors=True)
    if err:
        sec.errors.append(err)
    for rec in recs:
        phase, method = rec.get("phase", "?"), rec.get("method", "?")
        note = f"{rec.get('bytes', 0) / 1e6:.0f} MB"
        if rec.get("aggregator_tiers"):
            note += f", aggregators on {rec['aggregator_tiers']}"
        if phase == "declare":
            note = "declaration only; " + note
        sec.rows.append(_agg_row("agg_s3d", phase, rec, note,
                                 key=phase == "write+sync" and method != "mpiio"))


def section_agg(r: Runner) -> Section:
    sec = Section(f"Aggregation (seed 002 §4) vs MPI-IO collective, emulated cluster "
                  f"{r.cluster_nodes} nodes x {r.cluster_ppn} ranks, PFS throttled to "
                  f"{AGG_PFS['pfs_write_bps'] / 1e6:.0f} MB/s write, "
                  f"{AGG_PFS['pfs_read_bps'] / 1e6:.0f} MB/s read")
    for part in (_agg_1d, _agg_workflow, _agg_hacc, _agg_s3d):
        part(r, sec)
    return sec


def _memcon_rows(sec: Section, memcon, label: str, test: str, results: dict,
                 phases: Tuple[str, ...], target: float, note: str) -> None:
    """memory_conscious against the best two-phase configuration, per phase (one key row,
    with the target), and every configuration's own row (a failed one always shown)."""
    for phase in phases:
        ratio, best, why = memcon.mc_ratio(results, phase)
        mc = results.get(memcon.MC)
        rec = mc.record(phase) if mc else None
        status, ok = memcon.outcome(mc, phase) if mc else ("did not run", False)
        sec.rows.append(Row(
            bench=f"memcon_{test.split()[0]}", test=f"{test} {phase}", subject=label,
            result=memcon.fmt_bw(rec), baseline=memcon.LABELS.get(best, "") if best else "",
            ratio=ratio, verified=rec.get("verified") if rec else None,
            note=", ".join(x for x in (note, "" if status == "ok" else status,
                                       why if ok else "") if x),
            target=target, problem=not ok))
        for name, res in results.items():
            if name == memcon.MC:
                continue
            status, ok = memcon.outcome(res, phase)
            r2 = res.record(phase)
            sec.rows.append(Row(
                bench=f"memcon_{test.split()[0]}", test=f"{test} {phase}",
                subject=memcon.LABELS[name], result=memcon.fmt_bw(r2),
                verified=False if status == "DATA CHECK FAILED" else
                (r2.get("verified") if r2 else None),
                note="" if status == "ok" else status, key=not ok))


def section_memcon(r: Runner) -> Section:
    """Seed 004 §4 through bench/memcon.py: IOR write + read under one memory variance and
    with plentiful memory, and coll_perf under the variance (sizes: memcon.SIZES)."""
    import memcon   # here: memcon imports this module for its constants
    d = memcon.Driver(r.args.build_dir, r.args.mpi, r.workdir, r.args.timeout,
                      r.args.verbose)
    sec = Section(f"Memory-conscious collective I/O (seed 004 §4) vs two-phase, emulated "
                  f"cluster {d.nodes} nodes x {d.ppn} ranks, memory {d.mem_spec('variance')}, "
                  f"{d.pfs_label()}")
    if r.cluster_skip:
        sec.errors.append(f"memcon: {r.cluster_skip}")
        return sec
    sz = memcon.SIZES[r.args.size]
    msg, buf = memcon.parse_size(sz["message"]), memcon.parse_size(sz["buffer"])
    label = d.mc_label
    runs = [("ior", "variance", 1.25), ("ior", "plentiful", 0.95), ("collperf", "variance", 1.2)]
    for bench, memory, target in runs:
        if bench == "ior":
            res = d.ior(msg, buf, sz["ior_iters"], memory)
            note = f"{msg >> 20} MiB/process, buffer {buf >> 20} MiB"
            test = f"ior {memory}"
        else:
            res = d.collperf(sz["collperf"], buf, memory)
            note = f"{' '.join(sz['collperf'])}, buffer {buf >> 20} MiB"
            test = f"collperf {memory}"
        if d.skip:
            sec.errors.append(f"memcon: {d.skip}")
            break
        _memcon_rows(sec, memcon, label, test, res, ("write", "read"), target, note)
        if memory != "variance" or memcon.MC not in res:
            continue
        # The memory_conscious job's nodes: peak memory against the limit.
        for n in res[memcon.MC].nodes:
            lim = n.get("limit")
            oom = n.get("oom_kills") or 0
            sec.rows.append(Row(
                bench=f"memcon_{bench}", test=f"peak memory {n['node']}", subject=label,
                result=f"{memcon.fmt_mib(n.get('max_usage'))} of "
                       f"{'no limit' if lim is None else memcon.fmt_mib(lim) + ' MiB'}",
                note=(f"limit hit {n.get('failcnt')}x (page cache reclaimed)"
                      if n.get("failcnt") else "within its limit")
                     + (f", {oom} process(es) OOM-killed" if oom else ""),
                problem=oom > 0 or (lim is not None and (n.get("max_usage") or 0) > lim)))
    r.records.extend(d.records)
    return sec


# Later capabilities append their section functions here.
SECTIONS: List[Callable[[Runner], Section]] = [section_mstream, section_dht, section_hacc_io,
                                               section_ummap, section_topo_ckpt, section_agg,
                                               section_memcon]


# --------------------------------------------------------------------------------------------
# Table
# --------------------------------------------------------------------------------------------

def table_records(sections: List[Section], runner: "Runner", command: str) -> List[dict]:
    """The run and every row of the table as JSON records, for bench/results.py."""
    a = runner.args
    recs = [results.run_record(a.mpi, runner.launcher, a.np, a.size, command)]
    for sec in sections:
        for row in sec.rows:
            recs.append({"showcase": "row", "section": sec.title, **row.__dict__})
        for e in sec.errors:
            recs.append({"showcase": "row", "section": sec.title, "bench": sec.title.split()[0],
                         "test": "FAILED", "subject": "", "result": "", "verified": False,
                         "note": e.splitlines()[0]})
    return recs


def print_table(sections: List[Section], show_all: bool, allow_memory: bool) -> int:
    header = ["benchmark", "test", "window/method", "result", "baseline", "ratio",
              "verified", "note"]
    lines: List[List[str]] = []
    section_starts: Dict[int, str] = {}
    failures = 0
    for sec in sections:
        section_starts[len(lines)] = sec.title + (
            "" if sec.seconds is None else f"  [{sec.seconds:.0f} s]")
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


def write_records(path: str, records: List[dict]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for rec in records:
            f.write(json.dumps(rec) + "\n")


def draw_plots(plot, outdir: str, records: List[dict]) -> int:
    """The run's records into outdir/showcase.jsonl (plot.py can draw them again later)
    and its charts beside them. Returns the number of failures (0 or 1)."""
    os.makedirs(outdir, exist_ok=True)
    saved = os.path.join(outdir, "showcase.jsonl")
    # A chart of an earlier run (of other sections) would pass for this one's: remove the
    # PNGs of a directory an earlier --plot wrote (it left showcase.jsonl), no other.
    if os.path.exists(saved):
        for old in os.listdir(outdir):
            if old.endswith(".png"):
                os.remove(os.path.join(outdir, old))
    write_records(saved, records)
    print(f"wrote {saved}")
    try:
        for png in plot.write([saved], outdir):
            print(f"wrote {png}")
    except plot.InputError as e:
        print(f"error: --plot: {e}", file=sys.stderr)
        return 1
    return 0


def section_name(fn: Callable[[Runner], Section]) -> str:
    return fn.__name__[len("section_"):]


def section_names() -> List[str]:
    return [section_name(fn) for fn in SECTIONS]


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
    ap.add_argument("--np", type=int, default=2,
                    help="MPI ranks of the single-node sections (default 2; the cluster "
                    "sections run the layout of CLUSTER_LAYOUT)")
    ap.add_argument("--size", choices=sorted(SIZES), default="small",
                    help="problem size (default small: seconds on 2 cores)")
    ap.add_argument("--dir", help="directory for the window / checkpoint files (default "
                    "$TIERIO_BENCH_DIR, else a fresh temporary directory in /tmp)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per benchmark")
    ap.add_argument("--all", action="store_true", help="show every result, not only the key ones")
    ap.add_argument("--allow-memory", action="store_true",
                    help="do not fail when storage windows were placed in memory (a plain "
                    "MPI without tierio)")
    ap.add_argument("--only", metavar="SECTION,...",
                    help="run only these sections: " + ", ".join(section_names()))
    ap.add_argument("--json-out", help="also write every JSON record to this file (the "
                    "benchmarks' own, then the run and the table rows: bench/results.py)")
    ap.add_argument("--results-md", metavar="PATH",
                    help="also rewrite this Markdown file (bench/RESULTS.md) with the table, "
                    "the date, the machine and the MPI; its previous measurements are kept")
    ap.add_argument("--plot", nargs="?", const="", metavar="DIR",
                    help="also save the records to DIR/showcase.jsonl and draw PNG charts of "
                    "the ratios against their targets there (bench/plot.py; default DIR "
                    "<build-dir>/showcase-plots)")
    ap.add_argument("-v", "--verbose", action="store_true", help="show commands and stderr")
    args = ap.parse_args()
    plot = None
    if args.plot is not None:
        # Now, not after minutes of benchmarks: a Python without matplotlib cannot plot.
        try:
            import plot
        except ImportError as e:
            ap.error(f"--plot: {e} (run scripts/bootstrap and use .venv/bin/python, as "
                     "scripts/showcase does)")
        args.plot = args.plot or os.path.join(args.build_dir, "showcase-plots")
    if args.np < 1:
        ap.error("--np must be at least 1")
    if not os.path.isdir(args.build_dir):
        ap.error(f"--build-dir {args.build_dir}: no such directory")
    if args.mpi is None:
        args.mpi = detect_mpi(args.build_dir)
    chosen = SECTIONS
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in section_names()]
        if unknown or not names:
            ap.error(f"--only {args.only}: unknown section(s) "
                     f"{', '.join(unknown) or '(none given)'}; "
                     f"the sections are {', '.join(section_names())}")
        chosen = [fn for fn in SECTIONS if section_name(fn) in names]

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
        for fn in chosen:
            t0 = time.monotonic()
            sec = fn(runner)
            sec.seconds = time.monotonic() - t0
            sections.append(sec)
    finally:
        if made_dir:
            shutil.rmtree(made_dir, ignore_errors=True)
    if args.verbose:
        for h in runner.headers:
            print(h)
    print()
    failures = print_table(sections, args.all, args.allow_memory)
    if args.json_out or args.results_md or plot:
        runner.records += table_records(sections, runner, " ".join(sys.argv))
    if args.results_md:
        results.write(args.results_md, runner.records)
        print(f"wrote {args.results_md}")
    if args.json_out:
        write_records(args.json_out, runner.records)
    if plot:
        failures += draw_plots(plot, args.plot, runner.records)
    nres = sum(len(s.rows) for s in sections)
    if failures:
        print(f"FAILED: {failures} problem(s) among {nres} results")
        return 1
    print(f"OK: {nres} results, all verified")
    return 0


if __name__ == "__main__":
    sys.exit(main())
