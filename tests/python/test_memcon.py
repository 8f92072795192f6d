"""bench/memcon.py's pure parts: parsing the benchmarks' records and tio-cluster's memory
report, the status of a configuration (data check failed, crashed, OOM-killed, not
routed), choosing the best two-phase baseline, the ratio, and the tables. No MPI, no
cluster, no timing: the records are written here.

    python test_memcon.py

Exit status 1 when anything is wrong.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import memcon  # noqa: E402

from checks import check, failures  # noqa: E402  (tests/python/checks.py)


def rec(phase, seconds, verified=True, routed=-1, smin=None, smax=None, nbytes=100_000_000):
    r = {"bench": "agg_ior", "phase": phase, "bytes": nbytes, "seconds": seconds,
         "verified": verified, "routed": routed}
    if smin is not None:
        r.update(seconds_min=smin, seconds_max=smax)
    return r


def job(config, write_s, read_s=None, **kw):
    routed = 1 if config in ("tierio_default", memcon.MC) else -1
    recs = [rec("write", write_s, routed=routed, **kw)]
    if read_s is not None:
        recs.append(rec("read", read_s, routed=routed, **kw))
    return memcon.JobResult(config=config, records=recs)


# parse_size: the project's units
check(memcon.parse_size("4Mi") == 4 << 20, "4Mi")
check(memcon.parse_size("4M") == 4_000_000, "4M")
check(memcon.parse_size("512") == 512, "512")
for bad in ("", "Mi", "4Q", "x4"):
    try:
        memcon.parse_size(bad)
        check(False, f"parse_size({bad!r}) accepted")
    except ValueError:
        pass

# parse_records: JSON lines only, other lines and broken lines ignored
out = ('# header\n{"bench":"agg_ior","phase":"write","seconds":1}\nnoise\n{broken\n'
       '{"bench":"agg_ior","phase":"read","seconds":2}\n')
recs = memcon.parse_records(out)
check([r["phase"] for r in recs] == ["write", "read"], f"parse_records: {recs}")

# parse_mem_report: no limit becomes None
report = ('{"node": "node0", "limit": 9223372036854771712, "max_usage": 45555712, '
          '"failcnt": 0, "oom_kills": 0}\n'
          '{"node": "node1", "limit": 67108864, "max_usage": 67108864, "failcnt": 103, '
          '"oom_kills": 1}\n')
nodes = memcon.parse_mem_report(report)
check(len(nodes) == 2 and nodes[0]["limit"] is None and nodes[1]["limit"] == 64 << 20,
      f"parse_mem_report: {nodes}")
text = memcon.fmt_nodes(nodes)
check("node0 43/no limit" in text and "node1 64/64 (hit 103x) OOM 1" in text,
      f"fmt_nodes: {text}")
check(memcon.fmt_nodes([]) == "(no memory report)", "fmt_nodes of nothing")

# bw_stats: median and range in GB/s; no range without seconds_min/max
med, lo, hi = memcon.bw_stats(rec("write", 1.0, smin=0.5, smax=2.0))
check((med, lo, hi) == (0.1, 0.05, 0.2), f"bw_stats: {(med, lo, hi)}")
check(memcon.bw_stats(rec("write", 1.0))[1:] == (None, None), "bw_stats without range")
check(memcon.bw_stats({"phase": "write"}) == (None, None, None), "bw_stats of nothing")
check(memcon.fmt_bw(rec("write", 1.0, smin=0.5, smax=2.0)) == "100 MB/s (50-200)",
      memcon.fmt_bw(rec("write", 1.0, smin=0.5, smax=2.0)))

# outcome: every kind of failure is named, none hidden
ok_job = job("romio", 1.0, 1.0)
check(memcon.outcome(ok_job, "write") == ("ok", True), "outcome ok")
bad = job("romio", 1.0, verified=False)
check(memcon.outcome(bad, "write") == ("DATA CHECK FAILED", False), "data check")
crash = memcon.JobResult(config="ompio", error="exit status 137: killed",
                         nodes=[{"node": "node3", "oom_kills": 1}])
st, ok = memcon.outcome(crash, "write")
check(not ok and "OOM-killed on node3" in st and "exit status 137" in st, f"crash: {st}")
missing = memcon.JobResult(config="romio", records=[rec("write", 1.0)])
check(memcon.outcome(missing, "read") == ("FAILED: no result", False), "phase missing")
unrouted = job("tierio_default", 1.0)
unrouted.records[0]["routed"] = 0
st, ok = memcon.outcome(unrouted, "write")
check(ok and "not routed" in st, f"not routed: {st}")
partial_oom = job("romio", 1.0)
partial_oom.nodes = [{"node": "node2", "oom_kills": 2}]
st, ok = memcon.outcome(partial_oom, "write")
check(not ok and "OOM kill on node2" in st, f"result despite an OOM kill: {st}")

# best_two_phase: the fastest that ran and verified; memory_conscious never counts
results = {"romio": job("romio", 2.0, 1.0), "ompio": job("ompio", 1.0, 4.0),
           "tierio_default": job("tierio_default", 1.5, 2.0),
           memcon.MC: job(memcon.MC, 0.5, 1.0)}
check(memcon.best_two_phase(results, "write") == ("ompio", 0.1), "best write")
check(memcon.best_two_phase(results, "read")[0] == "romio", "best read")
ratio, best, why = memcon.mc_ratio(results, "write")
check(best == "ompio" and abs(ratio - 2.0) < 1e-9 and why == "", f"ratio {ratio} {best}")
results["ompio"] = memcon.JobResult(config="ompio", error="exit status 1: OOM")
check(memcon.best_two_phase(results, "write")[0] == "tierio_default",
      "a crashed baseline is not the best")
results["tierio_default"] = job("tierio_default", 0.1, verified=False)
check(memcon.best_two_phase(results, "write")[0] == "romio",
      "a baseline whose data did not verify is not the best")
ratio, best, why = memcon.mc_ratio({"romio": crash, memcon.MC: job(memcon.MC, 1.0)}, "write")
check(ratio is None and "no two-phase" in why, f"no baseline: {why}")
ratio, best, why = memcon.mc_ratio({"romio": ok_job, memcon.MC: bad}, "write")
check(ratio is None and "DATA CHECK FAILED" in why, f"memory_conscious failed: {why}")

# the table: every configuration, its status, the ratio line and the memory lines
results = {"romio": job("romio", 2.0, 1.0, smin=1.5, smax=2.5),
           "ompio": crash, "tierio_default": job("tierio_default", 1.5, 2.0),
           memcon.MC: job(memcon.MC, 1.0, 1.0)}
results[memcon.MC].nodes = nodes[:1]
table = memcon.format_table("IOR test", results, ("write", "read"), memcon.CONFIGS["openmpi"],
                            "memory_conscious (stand-in: default)")
for want in ("== IOR test", "ROMIO two-phase", "50 MB/s (40-67)", "OOM-killed on node3",
             "write: memory_conscious / best two-phase (tierio default) = 1.50x",
             "read: memory_conscious / best two-phase (ROMIO two-phase) = 1.00x",
             "memory_conscious (stand-in: default): node0 43/no limit",
             "OMPIO (fcoll vulcan): node3 -/no limit OOM 1",
             "ROMIO two-phase: (no memory report)"):
    check(want in table, f"table lacks {want!r}:\n{table}")
# memory_conscious OOM-killed somewhere: no ratio, and the table says why
results[memcon.MC].nodes = nodes
table = memcon.format_table("IOR test", results, ("write",), memcon.CONFIGS["openmpi"])
check("write: memory_conscious / best two-phase: - (memory_conscious OOM kill on node1)"
      in table, f"OOM of memory_conscious:\n{table}")

# the motivation curve: a row per buffer, largest first, and each configuration's drop
curve = {16 << 20: {"romio": job("romio", 1.0), memcon.MC: job(memcon.MC, 1.0)},
         1 << 20: {"romio": job("romio", 2.0), memcon.MC: crash}}
text = memcon.format_curve("curve", curve, ("romio", memcon.MC))
lines = text.splitlines()
check(lines[2].startswith("16 MiB") and lines[3].startswith("1 MiB"), f"curve order:\n{text}")
check("50 %" in lines[4] and "FAILED" in lines[3], f"curve drop / failure:\n{text}")

# the driver's configurations: each sets its own knobs, nothing of another's
d = memcon.Driver("/nonexistent", "openmpi", "/tmp", mc_strategy="default",
                  mc_params={"per_node": "2"})
env = d.config_env("romio", 1 << 20)
check(env.get("OMPI_MCA_io") == "romio321" and
      env.get("IOR_HINT__MPI__cb_buffer_size") == str(1 << 20), f"romio env {env}")
env = d.config_env("ompio", 1 << 20)
check(env.get("OMPI_MCA_io_ompio_bytes_per_agg") == str(1 << 20) and
      env.get("OMPI_MCA_fcoll") == "vulcan", f"ompio env {env}")
env = d.config_env(memcon.MC, 1 << 20)
check(env.get("TIERIO_AGG_STRATEGY") == "default" and "TIERIO_AGG_MC_PER_NODE" not in env,
      f"stand-in env {env}")
check(d.mc_label == "memory_conscious (stand-in: default)", d.mc_label)
d = memcon.Driver("/nonexistent", "mpich", "/tmp", mc_params={"per_node": "2"})
env = d.config_env(memcon.MC, 1 << 20)
check(env.get("TIERIO_AGG_STRATEGY") == memcon.MC and env.get("TIERIO_AGG_MC_PER_NODE") == "2",
      f"memory_conscious env {env}")
check("OMPI_MCA_io" not in d.config_env("romio", 1 << 20), "MPICH's ROMIO needs no MCA")
check("ompio" not in d.configs(), "MPICH has no OMPIO")
check(d.mem_spec("variance").startswith("normal:") and d.mem_spec("plentiful") is None,
      "memory specs")

if failures():
    print(f"test_memcon: {failures()} failure(s)", file=sys.stderr)
    sys.exit(1)
print("test_memcon: ok")
