/* The fault mechanism: one userfaultfd per process, registered on every mapping in missing
 * mode (and write-protect mode when the mapping is writable), served by handler threads.
 *
 * Why userfaultfd and not mprotect + SIGSEGV: the kernel's own accesses (read(2) into a
 * mapping, write(2) from it, an MPI library or another process copying into it) raise
 * userfaultfd events like the application's loads and stores do, but fail with EFAULT on a
 * PROT_NONE page instead of raising SIGSEGV. Where full userfaultfd is not allowed
 * (unprivileged, vm.unprivileged_userfaultfd=0) the engine falls back to
 * UFFD_USER_MODE_ONLY: application accesses still work, kernel accesses to segments that
 * are not in memory fail with EFAULT (docs/ummap.md). */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ummap/engine.h"
#include "ummap/keys.h"
#include "util/log.h"

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
/* UFFDIO_MOVE (Linux 6.8): newer than the headers of Debian 12; the ABI is stable. */
#ifndef UFFD_FEATURE_MOVE
#define UFFD_FEATURE_MOVE (1ULL << 16)
struct uffdio_move {
    __u64 dst, src, len, mode;
    __s64 move;
};
#define UFFDIO_MOVE_MODE_DONTWAKE ((__u64)1 << 0)
#define UFFDIO_MOVE_MODE_ALLOW_SRC_HOLES ((__u64)1 << 1)
#define UFFDIO_MOVE _IOWR(UFFDIO, 0x05, struct uffdio_move)
#endif

#define HANDLERS_MAX TIO_UM_HANDLERS_MAX

static struct {
    int fd, stopfd, user_only, wp, move;
    int nthreads;
    pthread_t thread[HANDLERS_MAX];
    pthread_mutex_t scratch_lock;
    char *scratch;             /* where evicted pages go */
    size_t scratch_len;
} U = {-1, -1, 0, 0, 0, 0, {0}, PTHREAD_MUTEX_INITIALIZER, NULL, 0};

int tio_uffd_user_mode_only(void) { return U.user_only; }

struct fault_arg {
    char *addr;
    int write, wp;
    struct tio_um_stage *stage;
};

static int fault_cb(struct tio_umap *m, void *arg) {
    struct fault_arg *a = arg;
    tio_um_fault(m, a->addr, a->write, a->wp, a->stage);
    return 0;
}

static void *handler_main(void *unused) {
    (void)unused;
    struct tio_um_stage stage = {NULL, 0};
    struct pollfd p[2] = {{U.fd, POLLIN, 0}, {U.stopfd, POLLIN, 0}};
    for (;;) {
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR) continue;
            TIO_WARN("ummap: poll on userfaultfd failed: %s", strerror(errno));
            break;
        }
        if (p[1].revents) break;
        struct uffd_msg msg;
        ssize_t r = read(U.fd, &msg, sizeof msg);
        if (r != (ssize_t)sizeof msg) {
            if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue; /* another took it */
            TIO_WARN("ummap: read from userfaultfd: %s", r < 0 ? strerror(errno) : "short");
            break;
        }
        if (msg.event != UFFD_EVENT_PAGEFAULT) continue;
        unsigned long fl = (unsigned long)msg.arg.pagefault.flags;
        struct fault_arg a = {(char *)(uintptr_t)msg.arg.pagefault.address,
                              !!(fl & (UFFD_PAGEFAULT_FLAG_WRITE | UFFD_PAGEFAULT_FLAG_WP)),
                              !!(fl & UFFD_PAGEFAULT_FLAG_WP), &stage};
        if (tio_um_with(a.addr, fault_cb, &a) != 0) {
            /* Not in a mapping of ours any more (unmapped while a thread faulted on it):
             * wake the thread, which then faults on an unmapped address like with munmap. */
            long page = sysconf(_SC_PAGESIZE);
            tio_uffd_wake((void *)((uintptr_t)a.addr & ~(uintptr_t)(page - 1)), (size_t)page);
        }
    }
    free(stage.buf);
    return NULL;
}

int tio_uffd_start(void) {
    int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    int user_only = 0;
    if (fd < 0 && (errno == EPERM || errno == EACCES)) {
        fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
        user_only = 1;
    }
    if (fd < 0) {
        int e = errno;
        TIO_WARN("ummap: userfaultfd is not available: %s", strerror(e));
        return e == ENOSYS ? ENOSYS : e;
    }
    /* Which features does this kernel have? A throw-away descriptor tells (the API
     * handshake can be made only once per descriptor). */
    uint64_t have = 0;
    int probe = (int)syscall(SYS_userfaultfd, O_CLOEXEC | (user_only ? UFFD_USER_MODE_ONLY : 0));
    if (probe >= 0) {
        struct uffdio_api q = {.api = UFFD_API, .features = 0};
        if (ioctl(probe, UFFDIO_API, &q) == 0) have = q.features;
        close(probe);
    }
    struct uffdio_api api = {.api = UFFD_API,
                             .features = UFFD_FEATURE_PAGEFAULT_FLAG_WP | (have & UFFD_FEATURE_MOVE)};
    int wp = 1;
    if (ioctl(fd, UFFDIO_API, &api) != 0) {
        /* Without write-protect support: retry plain (then writable mappings are refused). */
        close(fd);
        fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | (user_only ? UFFD_USER_MODE_ONLY : 0));
        api = (struct uffdio_api){.api = UFFD_API, .features = 0};
        if (fd < 0 || ioctl(fd, UFFDIO_API, &api) != 0) {
            int e = errno;
            if (fd >= 0) close(fd);
            return e;
        }
        wp = 0;
    }
    int stopfd = eventfd(0, EFD_CLOEXEC);
    if (stopfd < 0) {
        int e = errno;
        close(fd);
        return e;
    }
    U.fd = fd;
    U.stopfd = stopfd;
    U.user_only = user_only;
    U.wp = wp;
    U.move = wp && (api.features & UFFD_FEATURE_MOVE);
    if (!U.move)
        TIO_INFO("ummap: no UFFDIO_MOVE (Linux < 6.8): eviction cannot see pages pinned by "
                 "the kernel (O_DIRECT, process_vm_writev into a mapping over its limit)");
    if (user_only)
        TIO_WARN("ummap: userfaultfd in user-mode-only: kernel accesses that would fault "
                 "(read(2) into a segment not in memory or not yet written) fail with EFAULT");
    struct tio_err err = {0};
    int n = tio_um_env_handlers(&err); /* 2 unless set (ummap/keys.c) */
    if (n < 0) {
        tio_log(TIO_LOG_ERROR, "ummap: %s", err.msg);
        return EINVAL;
    }
    for (U.nthreads = 0; U.nthreads < n; U.nthreads++) {
        int rc = pthread_create(&U.thread[U.nthreads], NULL, handler_main, NULL);
        if (rc) {
            tio_uffd_stop();
            return rc;
        }
    }
    return 0;
}

void tio_uffd_stop(void) {
    if (U.fd < 0) return;
    uint64_t one = 1;
    if (U.nthreads && write(U.stopfd, &one, sizeof one) != (ssize_t)sizeof one)
        TIO_WARN("ummap: cannot stop the fault handlers: %s", strerror(errno));
    for (int i = 0; i < U.nthreads; i++) pthread_join(U.thread[i], NULL);
    U.nthreads = 0;
    if (U.scratch) munmap(U.scratch, U.scratch_len);
    U.scratch = NULL;
    U.scratch_len = 0;
    close(U.stopfd);
    close(U.fd);
    U.fd = U.stopfd = -1;
}

int tio_uffd_register(struct tio_umap *m) {
    int writable = !!(m->prot & PROT_WRITE);
    if (writable && !U.wp) return ENOSYS;
    struct uffdio_register r = {
        .range = {(uintptr_t)m->base, m->span},
        .mode = UFFDIO_REGISTER_MODE_MISSING | (writable ? UFFDIO_REGISTER_MODE_WP : 0),
    };
    if (ioctl(U.fd, UFFDIO_REGISTER, &r) != 0) return errno;
    return 0;
}

void tio_uffd_unregister(struct tio_umap *m) {
    struct uffdio_range r = {(uintptr_t)m->base, m->span};
    if (ioctl(U.fd, UFFDIO_UNREGISTER, &r) != 0)
        TIO_WARN("ummap: UFFDIO_UNREGISTER: %s", strerror(errno));
}

int tio_uffd_wp(void *addr, size_t len, int wp) {
    struct uffdio_writeprotect w = {
        .range = {(uintptr_t)addr, len},
        .mode = wp ? UFFDIO_WRITEPROTECT_MODE_WP : 0,
    };
    while (ioctl(U.fd, UFFDIO_WRITEPROTECT, &w) != 0)
        if (errno != EAGAIN && errno != EINTR) return errno;
    return 0;
}

int tio_uffd_wake(void *addr, size_t len) {
    struct uffdio_range r = {(uintptr_t)addr, len};
    return ioctl(U.fd, UFFDIO_WAKE, &r) == 0 ? 0 : errno;
}

int tio_uffd_copy(void *addr, const void *src, size_t len, int wp) {
    size_t done = 0;
    while (done < len) {
        struct uffdio_copy c = {
            .dst = (uintptr_t)addr + done, .src = (uintptr_t)src + done, .len = len - done,
            .mode = UFFDIO_COPY_MODE_DONTWAKE | (wp ? UFFDIO_COPY_MODE_WP : 0),
        };
        if (ioctl(U.fd, UFFDIO_COPY, &c) == 0) return 0;
        if (c.copy > 0) done += (size_t)c.copy;
        else if (errno == EEXIST) return 0; /* raced with another loader: already there */
        else if (errno != EAGAIN && errno != EINTR) return errno;
    }
    return 0;
}

int tio_uffd_zero(void *addr, size_t len) {
    size_t done = 0;
    while (done < len) {
        struct uffdio_zeropage z = {.range = {(uintptr_t)addr + done, len - done},
                                    .mode = UFFDIO_ZEROPAGE_MODE_DONTWAKE};
        if (ioctl(U.fd, UFFDIO_ZEROPAGE, &z) == 0) return 0;
        if (z.zeropage > 0) done += (size_t)z.zeropage;
        else if (errno == EEXIST) return 0;
        else if (errno != EAGAIN && errno != EINTR) return errno;
    }
    return 0;
}

/* An empty read-write range of at least len bytes, registered like a mapping, to move
 * pages into. */
static char *scratch(size_t len) {
    if (U.scratch_len >= len) return U.scratch;
    if (U.scratch) munmap(U.scratch, U.scratch_len);
    U.scratch = NULL;
    U.scratch_len = 0;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) return NULL;
    madvise(p, len, MADV_NOHUGEPAGE);
    struct uffdio_register r = {
        .range = {(uintptr_t)p, len},
        .mode = UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_WP,
    };
    if (ioctl(U.fd, UFFDIO_REGISTER, &r) != 0) {
        munmap(p, len);
        return NULL;
    }
    U.scratch = p;
    U.scratch_len = len;
    return p;
}

/* Move [src, src+len) to dst; returns 0 or errno, *done = bytes handled. */
static int move(char *dst, char *src, size_t len, size_t *done) {
    *done = 0;
    while (*done < len) {
        struct uffdio_move mv = {
            .dst = (uintptr_t)dst + *done, .src = (uintptr_t)src + *done, .len = len - *done,
            .mode = UFFDIO_MOVE_MODE_DONTWAKE | UFFDIO_MOVE_MODE_ALLOW_SRC_HOLES,
        };
        if (ioctl(U.fd, UFFDIO_MOVE, &mv) == 0) {
            *done = len;
            return 0;
        }
        int e = errno;
        if (mv.move > 0) *done += (size_t)mv.move;
        else if (e != EAGAIN) return e;
    }
    return 0;
}

int tio_uffd_can_move(void) { return U.move; }

char *tio_uffd_evict_begin(void *addr, size_t len, int *err) {
    /* Moving the pages out, rather than dropping them, fails (EBUSY) for a page the kernel
     * holds pinned for a transfer in progress (an O_DIRECT read into it, another process's
     * process_vm_writev): dropped, the transfer would land in a page that is no longer the
     * mapping's. It is atomic: a page is either moved or still mapped. */
    pthread_mutex_lock(&U.scratch_lock);
    char *s = scratch(len);
    size_t done = 0;
    int rc = s ? move(s, addr, len, &done) : ENOMEM;
    if (rc && done) {
        size_t back;
        if (move(addr, s, done, &back) != 0 || back != done)
            TIO_WARN("ummap: cannot put back pages of a segment that could not be evicted");
    }
    if (rc) {
        if (s) madvise(s, len, MADV_DONTNEED);
        pthread_mutex_unlock(&U.scratch_lock);
        *err = rc;
        return NULL;
    }
    *err = 0;
    return s;
}

void tio_uffd_evict_abort(void *addr, char *moved, size_t len) {
    size_t back;
    if (move(addr, moved, len, &back) != 0 || back != len)
        TIO_WARN("ummap: cannot put back the pages of a segment whose write-back failed");
    madvise(moved, len, MADV_DONTNEED);
    pthread_mutex_unlock(&U.scratch_lock);
}

void tio_uffd_evict_end(char *moved, size_t len) {
    madvise(moved, len, MADV_DONTNEED);
    pthread_mutex_unlock(&U.scratch_lock);
}
