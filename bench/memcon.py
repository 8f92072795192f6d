#!/usr/bin/env python3
"""Memory-conscious collective I/O (seed 004 §4) against two-phase collective I/O, on the
emulated cluster, under one memory variance and with plentiful memory.

    bench/memcon.py --build-dir build/openmpi [--size small|medium] [--only ior,motivation,collperf,flashio]

Configurations (each benchmark runs once per configuration, on a fresh emulated cluster
of CLUSTER_LAYOUT nodes x ranks with the PFS throttled as AGG_PFS, both from showcase.py):

  romio             ROMIO's two-phase collective I/O (Open MPI: OMPI_MCA_io=romio321;
                    MPICH: its ROMIO), cb_buffer_size = the buffer, collective buffering
                    forced on for reads and writes (romio_cb_read/write = enable)
  ompio             Open MPI's OMPIO with the fcoll component vulcan (its two-phase
                    component), io_ompio_bytes_per_agg = the buffer (Open MPI only)
  tierio_default    libtierio-pmpi preloaded, TIERIO_AGG=1, strategy default,
                    tierio_agg_buffer_size = the buffer
  memory_conscious  the same with strategy memory_conscious (--mc-strategy names another
                    strategy to stand in for it; the table then says so)

Both tierio configurations aggregate reads too (TIERIO_AGG_READ=aggregate), as the two
MPI-IO ones do with collective buffering forced on: every configuration is two-phase I/O.

Memory: "variance" gives every node its own memory limit drawn from a normal distribution
(tio-cluster --node-mem-limit normal:MEAN,SD,SEED; the same seed for every configuration,
so all see the same limits), "plentiful" sets none. tio-cluster --mem-report gives each
node's peak memory (max_usage: anonymous memory and page cache), its limit, how often it
hit the limit (failcnt) and the processes the kernel killed (oom_kills).

Benchmarks: ior (bench/agg_ior.c, collective write + read, checked: a buffer-size sweep
and a message-size sweep; the base point also with plentiful memory), motivation (§1,
Figure 2: two-phase write throughput as the buffer shrinks, 16 MiB per process),
collperf (bench/agg_collperf.c), flashio (bench/agg_flashio.c, Open MPI only).

For each: every configuration's bandwidth (median of the repetitions, min-max where the
program reports them), the ratio of memory_conscious to the best two-phase configuration
(romio, ompio, tierio_default: the fastest that ran and verified), and per node the peak
memory against the limit. A failed data check, a crash, an out-of-memory kill or a tierio
configuration whose calls did not go through tierio ("routed" 0) is printed as such.
Exit status 1 when a data check failed or memory_conscious failed; 2 for a usage error.
Standard library only.
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
from typing import Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import showcase  # noqa: E402  (CLUSTER_LAYOUT, AGG_PFS, OPENMPI_ENV)
import showcase_cluster  # noqa: E402

TWO_PHASE = ("romio", "ompio", "tierio_default")
MC = "memory_conscious"
CONFIGS = {"openmpi": ("romio", "ompio", "tierio_default", MC),
           "mpich": ("romio", "tierio_default", MC)}
OMPIO_FCOLL = "vulcan"
LABELS = {"romio": "ROMIO two-phase", "ompio": f"OMPIO (fcoll {OMPIO_FCOLL})",
          "tierio_default": "tierio default", MC: "tierio memory_conscious"}
BENCHES = ("ior", "motivation", "collperf", "flashio")

# Per --size: IOR's base point (message per process and call, buffer), its sweeps, the
# motivation curve's buffers, coll_perf's N, FLASH-IO's blocks; repetitions of each.
# "small" runs the whole driver in about 3 minutes on 2 cores (Open MPI, 4 x 2 ranks).
SIZES: Dict[str, dict] = {
    "small": {"message": "4Mi", "buffer": "1Mi", "buffers": ["4Mi", "1Mi"],
              "messages": ["1Mi", "4Mi"], "ior_iters": 3,
              "motivation_message": "16Mi", "motivation_buffers": ["16Mi", "1Mi"],
              "motivation_iters": 2,
              "collperf": ["-n", "192", "-r", "3"],
              "flashio": ["-b", "8", "-x", "16", "-y", "16", "-z", "16", "-r", "2"]},
    "medium": {"message": "16Mi", "buffer": "4Mi", "buffers": ["16Mi", "4Mi", "1Mi"],
               "messages": ["4Mi", "16Mi", "32Mi"], "ior_iters": 3,
               "motivation_message": "16Mi",
               "motivation_buffers": ["32Mi", "16Mi", "8Mi", "4Mi", "2Mi", "1Mi"],
               "motivation_iters": 3,
               "collperf": ["-n", "320", "-r", "3"],
               "flashio": ["-b", "40", "-x", "16", "-y", "16", "-z", "16", "-r", "3"]},
}
# The memory variance: mean, standard deviation, seed of tio-cluster's normal: draw. With
# 4 nodes seed 3 gives 183, 142, 103 and 91 MiB (docs/cluster.md has the generator).
MEM_VARIANCE = ("128Mi", "48Mi", 3)
# The PFS: tio-pfs (tio-cluster --pfs-fuse) when it was built, paced at showcase.AGG_PFS
# with this cost per request; else blkio, whose limits memory-limited nodes escape
# (docs/cluster.md), and the report says so.
PFS_LATENCY = "1ms"

MiB = 1 << 20


# --------------------------------------------------------------------------------------------
# Pure parts (tests/python/test_memcon.py)
# --------------------------------------------------------------------------------------------

def parse_size(s: str) -> int:
    """'4Mi' -> 4194304, '4M' -> 4000000, '512' -> 512 (the project's units)."""
    units = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9,
             "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}
    s = s.strip()
    i = len(s)
    while i > 0 and not s[i - 1].isdigit():
        i -= 1
    if i == 0 or s[i:] not in units:
        raise ValueError(f"not a size: {s!r} (units K, M, G, Ki, Mi, Gi)")
    return int(s[:i]) * units[s[i:]]


def fmt_mib(n: Optional[float]) -> str:
    return "-" if n is None else f"{n / MiB:.0f}"


def parse_records(text: str) -> List[dict]:
    """The JSON lines of a benchmark's stdout (other lines are ignored)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return out


NO_LIMIT = 1 << 62   # cgroup v1 "no limit" is 9223372036854771712


def parse_mem_report(text: str) -> List[dict]:
    """tio-cluster --mem-report lines: node, limit (None when unlimited), max_usage,
    failcnt, oom_kills."""
    nodes = []
    for rec in parse_records(text):
        if "node" not in rec:
            continue
        limit = rec.get("limit")
        nodes.append({"node": str(rec["node"]),
                      "limit": None if limit is None or limit >= NO_LIMIT else int(limit),
                      "max_usage": rec.get("max_usage"), "failcnt": rec.get("failcnt"),
                      "oom_kills": rec.get("oom_kills")})
    return nodes


def bw_stats(rec: dict) -> Tuple[Optional[float], Optional[float], Optional[float]]:
    """GB/s of a record: (median, slowest, fastest); the range is None when the program
    reports only the median (agg_ior)."""
    b, s = rec.get("bytes"), rec.get("seconds")
    if not b or not s:
        return None, None, None
    smax, smin = rec.get("seconds_max"), rec.get("seconds_min")
    lo = b / smax / 1e9 if smax else None
    hi = b / smin / 1e9 if smin else None
    return b / s / 1e9, lo, hi


@dataclass
class JobResult:
    """One benchmark run of one configuration."""
    config: str
    records: List[dict] = field(default_factory=list)
    error: str = ""            # launcher / program failure, timeout ("" = ran through)
    nodes: List[dict] = field(default_factory=list)   # the --mem-report
    seconds: float = 0.0
    command: str = ""

    def record(self, phase: str) -> Optional[dict]:
        for r in self.records:
            if r.get("phase") == phase:
                return r
        return None


def oom_nodes(res: JobResult) -> List[str]:
    return [n["node"] for n in res.nodes if (n.get("oom_kills") or 0) > 0]


def outcome(res: JobResult, phase: str) -> Tuple[str, bool]:
    """What happened to this configuration in this phase: (status, usable). Usable means it
    ran, and its data verified; a tierio configuration whose calls went to the MPI library
    (routed <= 0) stays usable but says so."""
    oom = oom_nodes(res)
    rec = res.record(phase)
    if rec is None:
        why = res.error.splitlines()[0] if res.error else "no result"
        if oom:
            why = f"OOM-killed on {', '.join(oom)}: " + why
        return "FAILED: " + why, False
    if rec.get("verified") is False:
        return "DATA CHECK FAILED", False
    notes = []
    if oom:
        notes.append(f"OOM kill on {', '.join(oom)}")
    if res.error:
        notes.append("exited with an error: " + res.error.splitlines()[0])
    routed = rec.get("routed")
    if res.config in ("tierio_default", MC) and routed is not None and routed <= 0:
        notes.append("not routed: the MPI library did the I/O")
    if res.config not in ("tierio_default", MC) and routed is not None and routed > 0:
        notes.append("routed through tierio?!")
    return ("ok" if not notes else "; ".join(notes)), not (oom or res.error)


def best_two_phase(results: Dict[str, JobResult], phase: str
                   ) -> Tuple[Optional[str], Optional[float]]:
    """The fastest two-phase configuration (median GB/s) that ran and verified."""
    best, best_bw = None, None
    for name in TWO_PHASE:
        res = results.get(name)
        if res is None or not outcome(res, phase)[1]:
            continue
        bw = bw_stats(res.record(phase) or {})[0]
        if bw is not None and (best_bw is None or bw > best_bw):
            best, best_bw = name, bw
    return best, best_bw


def mc_ratio(results: Dict[str, JobResult], phase: str
             ) -> Tuple[Optional[float], Optional[str], str]:
    """memory_conscious / best two-phase: (ratio or None, best's name, why None)."""
    mc = results.get(MC)
    if mc is None:
        return None, None, "memory_conscious did not run"
    status, ok = outcome(mc, phase)
    if not ok:
        return None, None, "memory_conscious " + status
    best, best_bw = best_two_phase(results, phase)
    if best is None:
        return None, None, "no two-phase configuration ran and verified"
    mc_bw = bw_stats(mc.record(phase) or {})[0]
    if mc_bw is None or not best_bw:
        return None, best, "no bandwidth"
    return mc_bw / best_bw, best, ""


def fmt_bw(rec: Optional[dict]) -> str:
    if rec is None:
        return "-"
    med, lo, hi = bw_stats(rec)
    if med is None:
        return "-"
    s = f"{med * 1000:.0f} MB/s"
    if lo is not None and hi is not None:
        s += f" ({lo * 1000:.0f}-{hi * 1000:.0f})"
    return s


def fmt_nodes(nodes: List[dict]) -> str:
    """'node0 41/183 MiB, node3 91/91 MiB (hit 12x) OOM 1' — peak / limit per node."""
    parts = []
    for n in nodes:
        lim = "no limit" if n.get("limit") is None else fmt_mib(n["limit"])
        p = f"{n['node']} {fmt_mib(n.get('max_usage'))}/{lim}"
        if n.get("failcnt"):
            p += f" (hit {n['failcnt']}x)"
        if n.get("oom_kills"):
            p += f" OOM {n['oom_kills']}"
        parts.append(p)
    return ", ".join(parts) if parts else "(no memory report)"


def format_table(title: str, results: Dict[str, JobResult], phases: Sequence[str],
                 configs: Sequence[str], mc_label: str = LABELS[MC]) -> str:
    """One benchmark point: a line per configuration, the ratio line, the memory lines."""
    labels = dict(LABELS, **{MC: mc_label})
    head = ["configuration"] + [f"{p} MB/s (min-max)" for p in phases] + ["routed", "status"]
    rows = []
    for name in configs:
        res = results.get(name)
        if res is None:
            continue
        cells = [labels[name]] + [fmt_bw(res.record(p)) for p in phases]
        routed = [str(r.get("routed")) for r in (res.record(p) for p in phases) if r]
        cells.append("/".join(routed) if routed else "-")
        statuses = []
        for p in phases:
            st = outcome(res, p)[0]
            if st != "ok" and st not in statuses:
                statuses.append(st)
        cells.append("; ".join(statuses) or "ok")
        rows.append(cells)
    widths = [max(len(r[i]) for r in [head] + rows) for i in range(len(head) - 1)]
    lines = [f"== {title}"]
    for r in [head] + rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])
    for p in phases:
        ratio, best, why = mc_ratio(results, p)
        if ratio is None:
            lines.append(f"   {p}: memory_conscious / best two-phase: - ({why})")
        else:
            lines.append(f"   {p}: memory_conscious / best two-phase ({labels[best]}) = "
                         f"{ratio:.2f}x")
    lines.append("   peak memory per node, MiB used/limit:")
    for name in configs:
        res = results.get(name)
        if res is not None:
            lines.append(f"     {labels[name]}: {fmt_nodes(res.nodes)}")
    return "\n".join(lines)


def format_curve(title: str, curve: Dict[int, Dict[str, JobResult]], configs: Sequence[str],
                 phase: str = "write", mc_label: str = LABELS[MC]) -> str:
    """The motivation curve: write bandwidth per buffer size (rows) and configuration
    (columns), and each configuration's drop from the largest buffer to the smallest."""
    labels = dict(LABELS, **{MC: mc_label})
    bufs = sorted(curve, reverse=True)
    head = ["buffer"] + [labels[c] for c in configs]
    rows = []
    for b in bufs:
        row = [f"{b / MiB:g} MiB"]
        for c in configs:
            res = curve[b].get(c)
            if res is None:
                row.append("-")
                continue
            st, ok = outcome(res, phase)
            row.append(fmt_bw(res.record(phase)) if ok else st[:40])
        rows.append(row)
    drop = ["drop"]
    for c in configs:
        first = curve[bufs[0]].get(c)
        last = curve[bufs[-1]].get(c)
        a = bw_stats(first.record(phase) or {})[0] if first and outcome(first, phase)[1] else None
        z = bw_stats(last.record(phase) or {})[0] if last and outcome(last, phase)[1] else None
        drop.append("-" if not a or z is None else f"{(1 - z / a) * 100:.0f} %")
    rows.append(drop)
    widths = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
    lines = [f"== {title}"]
    for r in [head] + rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------

class Driver:
    """Runs one benchmark of one configuration on a fresh emulated cluster."""

    def __init__(self, build_dir: str, mpi: str, workdir: str, timeout: float = 300,
                 verbose: bool = False, mc_strategy: str = MC,
                 mc_params: Optional[Dict[str, str]] = None,
                 mem_variance: Tuple[str, str, int] = MEM_VARIANCE):
        self.build_dir, self.mpi, self.workdir = build_dir, mpi, workdir
        self.timeout, self.verbose = timeout, verbose
        self.mc_strategy, self.mc_params = mc_strategy, dict(mc_params or {})
        self.mem_variance = mem_variance
        self.nodes, self.ppn = showcase.CLUSTER_LAYOUT[mpi]
        self.tool = showcase_cluster.find_tool()
        daemon = os.path.join(build_dir, "tools", "cluster", "tio-pfs")
        self.pfs_daemon = os.path.abspath(daemon) if os.access(daemon, os.X_OK) else None
        self.records: List[dict] = []     # every record, tagged, for --json-out
        self.skip = ""                    # why the cluster cannot run here, once known

    @property
    def mc_label(self) -> str:
        if self.mc_strategy == MC:
            return LABELS[MC]
        return f"memory_conscious (stand-in: {self.mc_strategy})"

    def configs(self) -> Tuple[str, ...]:
        return CONFIGS[self.mpi]

    def pfs_label(self) -> str:
        rates = (f"{showcase.AGG_PFS['pfs_write_bps'] / 1e6:.0f}/"
                 f"{showcase.AGG_PFS['pfs_read_bps'] / 1e6:.0f} MB/s write/read")
        if self.pfs_daemon:
            return f"PFS tio-pfs {rates}, {PFS_LATENCY} per request"
        return (f"PFS blkio {rates} (tio-pfs not built: memory-limited nodes' write-back "
                "and cached reads escape these limits)")

    def mem_spec(self, memory: str) -> Optional[str]:
        if memory == "plentiful":
            return None
        mean, sd, seed = self.mem_variance
        return f"normal:{mean},{sd},{seed}"

    def find(self, exe: str) -> Optional[str]:
        for d in ("bench", "src", "."):
            p = os.path.join(self.build_dir, d, exe)
            if os.path.isfile(p):
                return os.path.abspath(p)
        return None

    def config_env(self, config: str, buffer: int) -> Dict[str, str]:
        """The environment of the ranks for one configuration and buffer size."""
        env: Dict[str, str] = {}
        if config == "romio":
            if self.mpi == "openmpi":
                env["OMPI_MCA_io"] = "romio321"
            env.update({"IOR_HINT__MPI__cb_buffer_size": str(buffer),
                        "IOR_HINT__MPI__romio_cb_write": "enable",
                        "IOR_HINT__MPI__romio_cb_read": "enable"})
        elif config == "ompio":
            env.update({"OMPI_MCA_io": "ompio", "OMPI_MCA_fcoll": OMPIO_FCOLL,
                        "OMPI_MCA_io_ompio_bytes_per_agg": str(buffer)})
        else:
            pmpi = self.find("libtierio-pmpi.so")
            if pmpi:
                env["LD_PRELOAD"] = pmpi
            env.update({"TIERIO_AGG": "1", "TIERIO_AGG_READ": "aggregate",
                        "TIERIO_AGG_BUFFER_SIZE": str(buffer),
                        "TIERIO_AGG_STRATEGY": "default" if config == "tierio_default"
                        else self.mc_strategy})
            if config == MC and self.mc_strategy == MC:
                for k, v in self.mc_params.items():
                    env["TIERIO_AGG_MC_" + k.upper()] = v
        return env

    def base_env(self) -> Dict[str, str]:
        """The caller's environment without what a configuration sets (so that none leaks
        from one configuration into another), plus Open MPI's settings of showcase.py."""
        env = {k: v for k, v in os.environ.items()
               if not (k.startswith(("TIERIO_AGG", "IOR_HINT__", "OMPI_MCA_io",
                                     "OMPI_MCA_fcoll")) or k == "LD_PRELOAD")}
        if self.mpi == "openmpi":
            env.update(showcase.OPENMPI_ENV)
        env.setdefault("TIERIO_LOG", "warn")
        return env

    def run(self, bench: str, exe: str, args: List[str], config: str, buffer: int,
            memory: str, point: Optional[dict] = None) -> JobResult:
        res = JobResult(config=config)
        if self.skip:
            res.error = self.skip
            return res
        if self.tool is None:
            self.skip = res.error = "skipped: tools/cluster/tio-cluster not found"
            return res
        path = self.find(exe)
        if path is None:
            res.error = f"{exe} not found under {self.build_dir} (built with bench/?)"
            return res
        pfs = tempfile.mkdtemp(prefix="pfs-memcon-", dir=self.workdir)
        report = os.path.join(self.workdir, f"memreport-{os.getpid()}.jsonl")
        cmd = showcase_cluster.command(self.tool, self.mpi, [path] + args, self.nodes,
                                       self.ppn, pfs=pfs, env=self.config_env(config, buffer),
                                       **showcase.AGG_PFS)
        extra = ["--mem-report", report]
        if self.pfs_daemon:
            extra += ["--pfs-fuse", self.pfs_daemon, "--pfs-latency", PFS_LATENCY]
        spec = self.mem_spec(memory)
        if spec:
            extra += ["--node-mem-limit", spec]
        cut = cmd.index("--")
        cmd = cmd[:cut] + extra + cmd[cut:]
        res.command = " ".join(cmd)
        if self.verbose:
            print("+ " + res.command, file=sys.stderr)
        t0 = time.monotonic()
        out, err, rc = "", "", None
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    env=self.base_env(), text=True, start_new_session=True)
            try:
                out, err = proc.communicate(timeout=self.timeout)
                rc = proc.returncode
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)   # the launcher and its ranks only
                out, err = proc.communicate()
                res.error = f"timed out after {self.timeout:g} s"
            except BaseException:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                raise
        finally:
            shutil.rmtree(pfs, ignore_errors=True)
        res.seconds = time.monotonic() - t0
        res.records = parse_records(out)
        try:
            with open(report, encoding="utf-8") as f:
                res.nodes = parse_mem_report(f.read())
            os.remove(report)
        except OSError:
            pass
        reason = showcase_cluster.skip_reason(rc, err)
        if reason:
            self.skip = res.error = f"skipped: the emulated cluster cannot run here ({reason})"
        elif rc not in (0, None):
            tail = [l for l in err.strip().splitlines() if not l.startswith("#")][-3:]
            res.error = f"exit status {rc}: " + " | ".join(tail)
        elif not res.error and not res.records:
            res.error = "printed no results"
        if self.verbose:
            sys.stderr.write(err)
            print(f"  ({res.seconds:.1f} s)", file=sys.stderr)
        tag = {"memcon": bench, "config": config, "memory": memory,
               "mem_spec": spec, "buffer": buffer, **(point or {})}
        for r in res.records:
            self.records.append({**tag, **r})
        self.records.append({**tag, "memcon_job": True, "error": res.error,
                             "nodes": res.nodes, "seconds": res.seconds})
        return res

    def run_all(self, bench: str, exe: str, args: List[str], buffer: int, memory: str,
                point: Optional[dict] = None) -> Dict[str, JobResult]:
        return {c: self.run(bench, exe, args, c, buffer, memory, point) for c in self.configs()}

    # The benchmarks ---------------------------------------------------------------------

    def ior(self, message: int, buffer: int, iters: int, memory: str) -> Dict[str, JobResult]:
        """agg_ior: one collective call per phase and process of `message` bytes, written
        with fsync, read back by the processes a node further on, checked."""
        args = ["-b", str(message), "-t", str(message), "-s", "1", "-i", str(iters),
                "-e", "-R", "-C"]
        return self.run_all("ior", "tio-bench-agg-ior", args, buffer, memory,
                            {"message": message})

    def collperf(self, args: List[str], buffer: int, memory: str) -> Dict[str, JobResult]:
        return self.run_all("collperf", "tio-bench-agg-collperf", args + ["-e", "-c"],
                            buffer, memory)

    def flashio(self, args: List[str], buffer: int, memory: str) -> Dict[str, JobResult]:
        return self.run_all("flashio", "tio-bench-agg-flashio", args + ["-p", "-e", "-c"],
                            buffer, memory)


def count_failures(results: Dict[str, JobResult], phases: Sequence[str]) -> int:
    """Data check failures of any configuration, and memory_conscious not usable."""
    bad = 0
    for name, res in results.items():
        for p in phases:
            st, ok = outcome(res, p)
            if st == "DATA CHECK FAILED" or (name == MC and not ok):
                bad += 1
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", required=True, help="CMake build tree of tierio")
    ap.add_argument("--mpi", choices=sorted(CONFIGS), help="default: from CMakeCache.txt")
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    ap.add_argument("--only", metavar="BENCH,...", help="some of: " + ", ".join(BENCHES))
    ap.add_argument("--mem", metavar="MEAN,SD,SEED",
                    default=",".join(str(x) for x in MEM_VARIANCE),
                    help="the memory variance: tio-cluster --node-mem-limit normal:MEAN,SD,"
                    "SEED (default %(default)s)")
    ap.add_argument("--no-plentiful", action="store_true",
                    help="skip the runs with plentiful memory")
    ap.add_argument("--mc-strategy", default=MC,
                    help="the strategy run as memory_conscious (another one stands in for "
                    "it, and the tables say so)")
    ap.add_argument("--mc", action="append", default=[], metavar="KEY=VALUE",
                    help="a memory_conscious parameter, as TIERIO_AGG_MC_<KEY> (e.g. "
                    "per_node=2, min_memory=8Mi); repeatable")
    ap.add_argument("--dir", help="work directory (default: a temporary one in /tmp)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per job")
    ap.add_argument("--json-out", help="write every record (tagged with its configuration) "
                    "to this file")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    mpi = a.mpi or showcase.detect_mpi(a.build_dir)
    chosen = BENCHES
    if a.only:
        chosen = tuple(b.strip() for b in a.only.split(",") if b.strip())
        bad = [b for b in chosen if b not in BENCHES]
        if bad or not chosen:
            ap.error(f"--only: unknown {', '.join(bad) or '(none)'}; one of {', '.join(BENCHES)}")
    try:
        mean, sd, seed = a.mem.split(",")
        variance = (mean, sd, int(seed))
        parse_size(mean), parse_size(sd)
        params = dict(kv.split("=", 1) for kv in a.mc)
    except ValueError as e:
        ap.error(f"--mem {a.mem} / --mc: {e}")
    sz = SIZES[a.size]
    made = None
    workdir = a.dir or ""
    if not workdir:
        workdir = made = tempfile.mkdtemp(prefix="tierio-memcon-", dir="/tmp")
    os.makedirs(workdir, exist_ok=True)
    d = Driver(a.build_dir, mpi, workdir, a.timeout, a.verbose, a.mc_strategy, params,
               variance)
    cfgs = d.configs()
    print(f"memcon: {mpi}, {d.nodes} nodes x {d.ppn} ranks, {d.pfs_label()}, variance "
          f"{d.mem_spec('variance')}, size {a.size}, {d.mc_label}")
    failures = 0
    t_start = time.monotonic()
    try:
        for bench in chosen:
            if bench == "ior":
                msg, buf = parse_size(sz["message"]), parse_size(sz["buffer"])
                points = [(msg, parse_size(b)) for b in sz["buffers"]]
                points += [(parse_size(m), buf) for m in sz["messages"]
                           if (parse_size(m), buf) not in points]
                for m, b in points:
                    res = d.ior(m, b, sz["ior_iters"], "variance")
                    print(format_table(f"IOR collective, {m / MiB:g} MiB per process, buffer "
                                       f"{b / MiB:g} MiB, memory {d.mem_spec('variance')}",
                                       res, ("write", "read"), cfgs, d.mc_label))
                    failures += count_failures(res, ("write", "read"))
                if not a.no_plentiful:
                    res = d.ior(msg, buf, sz["ior_iters"], "plentiful")
                    print(format_table(f"IOR collective, {msg / MiB:g} MiB per process, "
                                       f"buffer {buf / MiB:g} MiB, plentiful memory", res,
                                       ("write", "read"), cfgs, d.mc_label))
                    failures += count_failures(res, ("write", "read"))
            elif bench == "motivation":
                msg = parse_size(sz["motivation_message"])
                curve = {}
                for b in sz["motivation_buffers"]:
                    curve[parse_size(b)] = d.ior(msg, parse_size(b), sz["motivation_iters"],
                                                 "variance")
                    failures += count_failures(curve[parse_size(b)], ("write",))
                print(format_curve(f"§1 motivation: collective write, {msg / MiB:g} MiB per "
                                   f"process, as the buffer shrinks, memory "
                                   f"{d.mem_spec('variance')}", curve, cfgs,
                                   mc_label=d.mc_label))
            elif bench in ("collperf", "flashio"):
                if bench == "flashio" and mpi != "openmpi":
                    print("== FLASH-IO: not run (PnetCDF is built on Open MPI only)")
                    continue
                run = d.collperf if bench == "collperf" else d.flashio
                phases = (("write", "read") if bench == "collperf"
                          else ("checkpoint", "checkpoint_read", "all_files"))
                buf = parse_size(sz["buffer"])
                memories = ["variance"] + ([] if a.no_plentiful or bench == "flashio"
                                           else ["plentiful"])
                for memory in memories:
                    res = run(sz[bench], buf, memory)
                    what = ("coll_perf 3D block array" if bench == "collperf"
                            else "FLASH-IO checkpoint + plotfiles (PnetCDF)")
                    mem = d.mem_spec(memory) or "plentiful memory"
                    print(format_table(f"{what} {' '.join(sz[bench])}, buffer "
                                       f"{buf / MiB:g} MiB, {mem}", res, phases, cfgs,
                                       d.mc_label))
                    failures += count_failures(res, phases)
            print()
            if d.skip:
                print(f"error: {d.skip}", file=sys.stderr)
                return 1
    finally:
        if made:
            shutil.rmtree(made, ignore_errors=True)
    if a.json_out:
        with open(a.json_out, "w", encoding="utf-8") as f:
            for r in d.records:
                f.write(json.dumps(r) + "\n")
    print(f"memcon: {time.monotonic() - t_start:.0f} s; "
          + (f"{failures} failure(s) (data checks, memory_conscious)" if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
