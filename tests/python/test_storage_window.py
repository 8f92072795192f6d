"""mpi4py on a storage window, through LD_PRELOAD=libtierio-pmpi.so.

Run under mpiexec: MPI.Win.Allocate with the storage hints in an MPI.Info, puts and an
accumulate from every rank, Win.Sync, then the file is read back and compared byte for
byte (numpy), again after Win.Free. Exit status 1 (on every rank) when anything differs.

    mpiexec -n N python test_storage_window.py --np N

--np guards against a launcher/library mismatch (every rank would be a singleton).
Files go under $TIERIO_TEST_TMPDIR and are removed.
"""
import os
import shutil
import sys
import tempfile

import mpi4py
import numpy as np

# mpi4py asks for MPI_THREAD_MULTIPLE by default; Open MPI's osc pt2pt (the one-sided
# component storage windows need there, MACHINE.md) then refuses to create windows.
mpi4py.rc.thread_level = "funneled"
from mpi4py import MPI  # noqa: E402

N = 1024  # float64 elements per window: 8192 bytes, a multiple of 16
BLOCK = 64  # elements each origin puts into each target

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
errors = 0


def fail(msg):
    global errors
    errors += 1
    print(f"[python rank {rank}] FAIL: {msg}", file=sys.stderr, flush=True)


def compare(got: bytes, want: bytes, what: str):
    if got == want:
        return
    g = np.frombuffer(got, dtype=np.uint8)
    w = np.frombuffer(want, dtype=np.uint8)
    if g.size != w.size:
        fail(f"{what}: {g.size} bytes, expected {w.size}")
        return
    diff = np.nonzero(g != w)[0]
    fail(f"{what}: {diff.size} of {w.size} bytes differ, first at byte {diff[0]} "
         f"(got 0x{g[diff[0]]:02x}, want 0x{w[diff[0]]:02x})")


def read_at(path, off, n, what):
    try:
        with open(path, "rb") as f:
            f.seek(off)
            return f.read(n)
    except OSError as e:
        fail(f"{what}: cannot read {path}: {e} (was the window on storage?)")
        return b""


def offset_of(r):
    return 16 + r * (N * 8 + 48)  # multiples of 16, not of the page size


def initial(r):
    return np.arange(N, dtype=np.float64) + 1e6 * (r + 1)


def block(origin, target):
    return np.arange(BLOCK, dtype=np.float64) * 0.5 + 1000.0 * origin + target


def expected(t):
    w = initial(t)
    for o in range(size):
        w[1 + o * BLOCK:1 + (o + 1) * BLOCK] = block(o, t)
    w[0] += sum(o + 1 for o in range(size))  # the accumulated counter
    return w


def main():
    want_np = None
    if "--np" in sys.argv:
        want_np = int(sys.argv[sys.argv.index("--np") + 1])
    if want_np is not None and size != want_np:
        print(f"[python] FAIL: {size} rank(s) in MPI_COMM_WORLD, expected {want_np}: does "
              f"mpi4py use the MPI library of the launcher? ({MPI.Get_library_version()[:60]!r})",
              file=sys.stderr, flush=True)
        return 1
    if 1 + size * BLOCK > N:
        raise SystemExit("too many ranks")

    tmp = None
    if rank == 0:
        base = os.environ.get("TIERIO_TEST_TMPDIR") or "/tmp"
        os.makedirs(base, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix="py_storage_window.", dir=base)
    tmp = comm.bcast(tmp, root=0)
    path = os.path.join(tmp, "window.dat")

    info = MPI.Info.Create()
    info.Set("alloc_type", "storage")
    info.Set("storage_alloc_filename", path)
    info.Set("storage_alloc_offset", str(offset_of(rank)))
    info.Set("storage_alloc_unlink", "false")
    win = MPI.Win.Allocate(N * 8, 8, info, comm)
    info.Free()
    mem = np.frombuffer(win.tomemory(), dtype=np.float64)
    if mem.size != N:
        fail(f"window memory has {mem.size} elements, expected {N}")

    used = win.Get_info()
    if used.Get("alloc_type") != "storage":
        fail(f"MPI_Win_get_info reports alloc_type={used.Get('alloc_type')!r}: the preload "
             f"did not make a storage window")
    used.Free()

    win.Lock(rank, MPI.LOCK_EXCLUSIVE)
    mem[:] = initial(rank)
    win.Unlock(rank)
    comm.Barrier()
    one = np.array([rank + 1.0])
    for k in range(size):
        t = (rank + k) % size
        data = block(rank, t)
        win.Lock(t, MPI.LOCK_SHARED)
        win.Put(data, t, target=(1 + rank * BLOCK, BLOCK, MPI.DOUBLE))
        win.Accumulate(one, t, target=(0, 1, MPI.DOUBLE), op=MPI.SUM)
        win.Unlock(t)
    comm.Barrier()

    want = expected(rank).tobytes()
    win.Lock(rank, MPI.LOCK_SHARED)
    compare(mem.tobytes(), want, "window memory after the puts")
    win.Sync()  # memory model, and on a storage window: written back to the file
    win.Unlock(rank)
    comm.Barrier()
    compare(read_at(path, offset_of(rank), N * 8, "after Win.Sync"), want, "file after Win.Sync")

    win.Free()
    comm.Barrier()
    compare(read_at(path, offset_of(rank), N * 8, "after Win.Free"), want, "file after Win.Free")
    if rank == 0 and os.path.exists(path):
        whole = os.path.getsize(path)
        if whole != offset_of(size - 1) + N * 8:
            fail(f"file is {whole} bytes, expected {offset_of(size - 1) + N * 8}")

    total = comm.allreduce(errors, op=MPI.SUM)
    if rank == 0:
        shutil.rmtree(tmp, ignore_errors=True)
        if total:
            print(f"[python] FAILED: {total} check(s)", file=sys.stderr, flush=True)
        else:
            print(f"[python] passed ({size} ranks, {MPI.Get_library_version().splitlines()[0]})",
                  flush=True)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
