"""The showcase's view of the emulated cluster (tools/cluster/tio-cluster): where the tool
is, the command line of one job on a fresh cluster, and what its exit status means.

`tio-cluster run` brings a cluster up, runs one MPI job on it and tears it down, also when
it is killed (its reaper, in a session of its own, tears down after a SIGKILL of the run),
so the showcase can treat it like any launcher: kill its process group on a timeout.
Standard library only.
"""

import os
import re
from typing import Dict, List, Optional

# tio-cluster's exit status when this machine cannot emulate a cluster (not root, no
# namespaces, no cgroup controller, MPI not installed); CTest's SKIP_RETURN_CODE.
SKIP_RC = 77

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find_tool() -> Optional[str]:
    """tio-cluster of this checkout (bench/ and tools/ are siblings), or None."""
    p = os.path.join(REPO, "tools", "cluster", "tio-cluster")
    return p if os.path.isfile(p) and os.access(p, os.X_OK) else None


def command(tool: str, mpi: str, prog: List[str], nodes: int, ppn: int,
            pfs: Optional[str] = None, pfs_write_bps: Optional[int] = None,
            pfs_read_bps: Optional[int] = None,
            env: Optional[Dict[str, str]] = None) -> List[str]:
    """`tio-cluster run` of prog on `nodes` nodes with `ppn` processes each. pfs: the shared
    directory (default: a fresh one the tool makes and removes); the throttles apply to its
    disk. env: variables given to the ranks (besides the ones the tool forwards itself:
    TIERIO_*, OMPI_MCA_*, MPIR_CVAR_*, ...; see `tio-cluster help`)."""
    cmd = [tool, "run", "--nodes", str(nodes), "--np", str(nodes * ppn), "--ppn", str(ppn),
           "--mpi", mpi]
    if pfs:
        cmd += ["--pfs", pfs]
    if pfs_write_bps:
        cmd += ["--pfs-write-bps", str(pfs_write_bps)]
    if pfs_read_bps:
        cmd += ["--pfs-read-bps", str(pfs_read_bps)]
    for k, v in sorted((env or {}).items()):
        cmd += ["--env", f"{k}={v}"]
    return cmd + ["--"] + prog


def skip_reason(rc: Optional[int], stderr: Optional[str]) -> Optional[str]:
    """The reason tio-cluster gave for not emulating a cluster (exit status 77 and a line
    "tio-cluster: SKIP: reason"), or None when the job ran (or failed by itself)."""
    if rc != SKIP_RC or not stderr:
        return None
    m = re.search(r"tio-cluster: SKIP: (.*)", stderr)
    return m.group(1).strip() if m else None
