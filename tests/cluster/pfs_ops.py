#!/usr/bin/env python3
"""POSIX checks of a mounted tio-pfs (tools/cluster/tio-pfs.c): what MPI-IO libraries
and tierio's storage windows do to the emulated parallel file system.  Every file written
through the mount is compared byte for byte with its backing file.

Usage: pfs_ops.py MOUNT BACKING   (run by test_pfs.sh; prints one line per check)
"""
import errno
import fcntl
import mmap
import os
import random
import struct
import subprocess
import sys
import time

MNT, BACK = sys.argv[1], sys.argv[2]
failed = []


def check(name):
    def run(fn):
        try:
            fn()
            print(f"ok   {name}")
        except Exception as e:  # report every check, fail at the end
            failed.append(name)
            print(f"FAIL {name}: {type(e).__name__}: {e}")
        return fn
    return run


def m(p):
    return os.path.join(MNT, p)


def b(p):
    return os.path.join(BACK, p)


def read(p):
    with open(p, "rb") as f:
        return f.read()


def same(p, expect=None):
    """The file reads the same through the mount and in the backing directory."""
    through, backing = read(m(p)), read(b(p))
    assert through == backing, f"{p}: mount and backing differ ({len(through)} vs {len(backing)} B)"
    if expect is not None:
        assert through == expect, f"{p}: content is not what was written"


@check("dd write, byte for byte")
def _():
    subprocess.run(["dd", "if=/dev/urandom", f"of={m('dd.bin')}", "bs=1M", "count=3",
                    "status=none"], check=True)
    data = read(b("dd.bin"))
    assert len(data) == 3 << 20
    same("dd.bin", data)


@check("scattered writes at random offsets")
def _():
    rng = random.Random(7)
    model = bytearray()
    fd = os.open(m("scat.bin"), os.O_CREAT | os.O_RDWR, 0o644)
    for _ in range(300):
        off, n = rng.randrange(0, 8 << 20), rng.randrange(1, 200000)
        data = rng.randbytes(n)
        assert os.pwrite(fd, data, off) == n
        if len(model) < off + n:
            model.extend(bytes(off + n - len(model)))
        model[off:off + n] = data
    assert os.fstat(fd).st_size == len(model)
    # reads at odd offsets and sizes through the mount
    for _ in range(100):
        off, n = rng.randrange(0, len(model)), rng.randrange(1, 3 << 20)
        assert os.pread(fd, n, off) == bytes(model[off:off + n])
    os.close(fd)
    same("scat.bin", bytes(model))


@check("holes read as zeros")
def _():
    with open(m("hole.bin"), "wb") as f:
        f.seek(1 << 20)
        f.write(b"end")
    data = read(m("hole.bin"))
    assert data == bytes(1 << 20) + b"end"
    same("hole.bin")
    fd = os.open(m("hole.bin"), os.O_RDONLY)
    assert os.lseek(fd, 0, os.SEEK_DATA) >= 4096  # the hole is a hole in the backing file
    os.close(fd)


@check("truncate: shrink, grow, ftruncate, O_TRUNC")
def _():
    with open(m("trunc.bin"), "wb") as f:
        f.write(b"x" * 10000)
    os.truncate(m("trunc.bin"), 100)
    assert os.stat(m("trunc.bin")).st_size == 100
    os.truncate(m("trunc.bin"), 5000)
    assert read(m("trunc.bin")) == b"x" * 100 + bytes(4900)
    with open(m("trunc.bin"), "r+b") as f:
        os.ftruncate(f.fileno(), 7)
        assert os.fstat(f.fileno()).st_size == 7
    same("trunc.bin", b"x" * 7)
    with open(m("trunc.bin"), "wb") as f:  # O_TRUNC
        f.write(b"new")
    same("trunc.bin", b"new")


@check("rename, over an existing file too")
def _():
    with open(m("r1"), "wb") as f:
        f.write(b"one")
    with open(m("r2"), "wb") as f:
        f.write(b"two")
    os.rename(m("r1"), m("r3"))
    assert not os.path.exists(m("r1")) and not os.path.exists(b("r1"))
    same("r3", b"one")
    os.rename(m("r3"), m("r2"))
    same("r2", b"one")
    assert not os.path.exists(m("r3"))


@check("unlink, also of an open file")
def _():
    with open(m("u.bin"), "wb") as f:
        f.write(b"gone")
    fd = os.open(m("u.bin"), os.O_RDWR)
    os.unlink(m("u.bin"))
    assert not os.path.exists(m("u.bin")) and not os.path.exists(b("u.bin"))
    assert os.pread(fd, 4, 0) == b"gone"
    os.pwrite(fd, b"still", 0)
    assert os.fstat(fd).st_size == 5
    os.close(fd)


@check("offset past 5 GiB (sparse)")
def _():
    off = 5 * (1 << 30) + 123
    fd = os.open(m("big.bin"), os.O_CREAT | os.O_RDWR, 0o644)
    assert os.pwrite(fd, b"tail", off) == 4
    assert os.fstat(fd).st_size == off + 4
    assert os.pread(fd, 4, off) == b"tail"
    assert os.pread(fd, 10, off - 6) == bytes(6) + b"tail"
    os.close(fd)
    st = os.stat(b("big.bin"))
    assert st.st_size == off + 4 and st.st_blocks * 512 < 1 << 20, "backing not sparse"
    with open(b("big.bin"), "rb") as f:
        f.seek(off)
        assert f.read() == b"tail"
    os.unlink(m("big.bin"))


def writer(path, rank, nranks, blocks, bs):
    """Child: block i of rank r at offset (i * nranks + r) * bs, filled with r and i."""
    fd = os.open(path, os.O_WRONLY)
    for i in range(blocks):
        data = struct.pack("<II", rank, i) * (bs // 8)
        os.pwrite(fd, data, (i * nranks + rank) * bs)
    os.close(fd)
    os._exit(0)


@check("two concurrent writer processes, one file")
def _():
    bs, blocks = 65536, 160
    os.close(os.open(m("shared.bin"), os.O_CREAT | os.O_WRONLY, 0o644))
    os.truncate(m("shared.bin"), 2 * blocks * bs)  # within the file: parallel writes
    pids = []
    for r in range(2):
        pid = os.fork()
        if pid == 0:
            writer(m("shared.bin"), r, 2, blocks, bs)
        pids.append(pid)
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        assert status == 0, f"writer exited {status}"
    expect = b"".join(struct.pack("<II", r, i) * (bs // 8)
                      for i in range(blocks) for r in range(2))
    same("shared.bin", expect)


@check("fcntl locks exclude between two processes")
def _():
    path = m("lock.bin")
    with open(path, "wb") as f:
        f.write(bytes(4096))
    go_r, go_w = os.pipe()
    done_r, done_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # holder: lock bytes 0-99, say so, wait, release
        fd = os.open(path, os.O_RDWR)
        fcntl.lockf(fd, fcntl.LOCK_EX, 100, 0)
        os.write(go_w, b"1")
        os.read(done_r, 1)
        fcntl.lockf(fd, fcntl.LOCK_UN, 100, 0)
        os.write(go_w, b"2")
        os.read(done_r, 1)
        os._exit(0)
    assert os.read(go_r, 1) == b"1"
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 10, 50)
        raise AssertionError("F_SETLK got a lock another process holds")
    except OSError as e:
        assert e.errno in (errno.EAGAIN, errno.EACCES), e
    # F_GETLK names the holder
    flock = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, 10, 50, 0)
    got = struct.unpack("hhqqi", fcntl.fcntl(fd, fcntl.F_GETLK, flock))
    assert got[0] == fcntl.F_WRLCK and got[4] == pid, f"F_GETLK: {got}"
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 10, 200)  # outside: no conflict
    fcntl.lockf(fd, fcntl.LOCK_UN, 10, 200)
    os.write(done_w, b"1")
    assert os.read(go_r, 1) == b"2"
    fcntl.lockf(fd, fcntl.LOCK_EX, 100, 0)  # F_SETLKW, now free
    os.write(done_w, b"1")
    os.waitpid(pid, 0)
    os.close(fd)


@check("fsync and fdatasync")
def _():
    fd = os.open(m("sync.bin"), os.O_CREAT | os.O_RDWR, 0o644)
    os.write(fd, b"durable")
    os.fsync(fd)
    os.fdatasync(fd)
    os.close(fd)
    same("sync.bin", b"durable")


@check("O_APPEND from two descriptors")
def _():
    with open(m("app.bin"), "wb") as f:
        f.write(b"a")
    f1 = os.open(m("app.bin"), os.O_WRONLY | os.O_APPEND)
    f2 = os.open(m("app.bin"), os.O_WRONLY | os.O_APPEND)
    os.write(f1, b"b")
    os.write(f2, b"c")
    os.write(f1, b"d")
    os.close(f1)
    os.close(f2)
    same("app.bin", b"abcd")


@check("mmap MAP_SHARED read and write")
def _():
    size = 1 << 20
    fd = os.open(m("map.bin"), os.O_CREAT | os.O_RDWR, 0o644)
    os.ftruncate(fd, size)
    os.pwrite(fd, b"before", 0)
    try:
        mm = mmap.mmap(fd, size, mmap.MAP_SHARED)
    except OSError as e:
        # Kernels without FUSE_DIRECT_IO_ALLOW_MMAP (< 6.6) refuse shared maps of
        # direct-I/O files with ENODEV: the documented limit.
        assert e.errno == errno.ENODEV, e
        print("     (shared mmap refused with ENODEV: kernel without DIRECT_IO_ALLOW_MMAP)")
        os.close(fd)
        return
    assert mm[0:6] == b"before"
    mm[4096:4096 + 5] = b"paged"
    mm[size - 3:] = b"end"
    mm.flush()
    assert os.pread(fd, 5, 4096) == b"paged"
    with open(b("map.bin"), "rb") as f:
        data = f.read()
    assert data[4096:4101] == b"paged" and data[-3:] == b"end"
    mm.close()
    os.close(fd)
    same("map.bin")


@check("mkdir, readdir of 300 names, rmdir")
def _():
    os.mkdir(m("d"))
    names = {f"file-{i:04d}-{'n' * 40}" for i in range(300)}
    for n in names:
        os.close(os.open(os.path.join(m("d"), n), os.O_CREAT | os.O_WRONLY, 0o600))
    assert set(os.listdir(m("d"))) == names
    assert set(os.listdir(b("d"))) == names
    try:
        os.rmdir(m("d"))
        raise AssertionError("rmdir of a non-empty directory worked")
    except OSError as e:
        assert e.errno == errno.ENOTEMPTY, e
    for n in names:
        os.unlink(os.path.join(m("d"), n))
    os.rmdir(m("d"))
    assert not os.path.exists(b("d"))


@check("chmod, utimens, sizes and mtimes current")
def _():
    with open(m("attr.bin"), "wb") as f:
        f.write(b"1234")
    os.chmod(m("attr.bin"), 0o640)
    assert os.stat(m("attr.bin")).st_mode & 0o777 == 0o640
    os.utime(m("attr.bin"), ns=(1_000_000_000, 2_000_000_123))
    st = os.stat(m("attr.bin"))
    assert st.st_mtime_ns == 2_000_000_123 and st.st_atime_ns == 1_000_000_000
    # Another "node" changes the file: the mount must show it at once.
    with open(b("attr.bin"), "ab") as f:
        f.write(b"5678")
    st = os.stat(m("attr.bin"))
    assert st.st_size == 8 and st.st_mtime_ns == os.stat(b("attr.bin")).st_mtime_ns
    with open(m("attr.bin"), "rb") as f:  # and an open file's size too
        with open(b("attr.bin"), "ab") as g:
            g.write(b"9")
        assert os.fstat(f.fileno()).st_size == 9
        assert f.read() == b"123456789"


@check("fallocate, statfs, symlink, hard link")
def _():
    fd = os.open(m("falloc.bin"), os.O_CREAT | os.O_RDWR, 0o644)
    os.posix_fallocate(fd, 0, 1 << 20)
    assert os.fstat(fd).st_size == 1 << 20
    os.close(fd)
    sv = os.statvfs(MNT)
    assert sv.f_bsize > 0 and sv.f_blocks > 0
    os.symlink("falloc.bin", m("sym"))
    assert os.readlink(m("sym")) == "falloc.bin"
    os.link(m("falloc.bin"), m("hard"))
    assert os.stat(m("hard")).st_nlink == 2
    for p in ("sym", "hard", "falloc.bin"):
        os.unlink(m(p))


if failed:
    print("pfs_ops: FAILED: " + ", ".join(failed))
    sys.exit(1)
print("pfs_ops: all checks passed")
