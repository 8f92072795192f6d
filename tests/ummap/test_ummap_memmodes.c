/* Memory modes with several processes sharing one UMMAP_MEM_LIMIT (seed 000 §6.2,
 * docs/ummap_memory.md): 4 worker processes of one node-memory group (UMMAP_NODE_KEY,
 * UMMAP_NODE_PROCS=4), each with its own mapping of 16 segments, driven step by step by
 * this process through pipes (no sleeps: every wait polls a condition with a deadline).
 *
 * static:  the limit of 16 segments is split in shares of 4; each worker writes 12
 *          segments and keeps exactly 4 resident, never more.
 * dynamic: worker A writes 14 segments (over its share while the node has room: no
 *          eviction); B writes 3, which overfills the node while B is under its share,
 *          so A is asked to give back half its excess, ceil((14 - 4) / 2) = 5 segments,
 *          and ends at 9; B then writes 9 more and stops at 7 (the node is full and B is
 *          over its share: it evicts its own). A is killed with SIGKILL; C writes 12 and
 *          gets the dead process's room: it ends at 16 - 7 = 9, B is not asked for
 *          anything.
 * Every worker's data is checked byte for byte in its mapping and, after umsync, in its
 * file. The group's shared object exists while workers run and is gone from /dev/shm
 * after they exit, also when one of them was killed (the test runs in a private mount
 * namespace with its own /dev/shm when it can (root); otherwise only entries naming this
 * test's key count).
 *
 *   test_ummap_memmodes static|dynamic */
#include "umtest.h"
#include "../common/private_mount.h"

#include <sched.h>

#define NW 4
#define NSEG 16
#define LIMIT_SEGS 16

static size_t SEG;
static const char *dir;
static int private_shm;

enum { OP_JOIN, OP_TOUCH, OP_STATS, OP_CHECK, OP_QUIT };
struct cmd {
    int op, arg;
};
struct reply {
    int rc;
    size_t resident;
    uint64_t evictions;
    char msg[200];
};

static unsigned char pattern(int w, size_t i) { return (unsigned char)(i * 7 + (size_t)w * 59 + (i >> 12) + 1); }

/* ---- a worker process ---- */

static int worker_main(int w, int in, int out)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/worker%d.dat", dir, w);
    unsigned char *map = NULL;
    size_t touched = 0;
    for (;;) {
        struct cmd c;
        if (read(in, &c, sizeof c) != (ssize_t)sizeof c)
            return 3; /* the parent went away */
        struct reply r = {0, 0, 0, ""};
        if (c.op == OP_JOIN) {
            int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            void *p = NULL;
            r.rc = fd < 0 ? errno
                          : ummap(NSEG * SEG, SEG, PROT_READ | PROT_WRITE, fd, 0,
                                  UMMAP_NO_FLUSH, 1, UMMAP_PTYPE_FIFO, &p);
            if (fd >= 0)
                close(fd);
            map = p;
        } else if (c.op == OP_TOUCH) {
            for (int k = 0; k < c.arg && touched < NSEG; k++, touched++)
                for (size_t i = touched * SEG; i < (touched + 1) * SEG; i++)
                    map[i] = pattern(w, i);
        } else if (c.op == OP_CHECK || c.op == OP_QUIT) {
            for (size_t i = 0; i < touched * SEG && !r.rc; i++)
                if (map[i] != pattern(w, i)) {
                    snprintf(r.msg, sizeof r.msg, "worker %d: mapping byte %zu is 0x%02x, "
                             "expected 0x%02x", w, i, map[i], pattern(w, i));
                    r.rc = EIO;
                }
            if (!r.rc)
                r.rc = c.op == OP_CHECK ? umsync(map, 0) : umunmap(map, 1);
            unsigned char *back = malloc(NSEG * SEG);
            if (!r.rc && tt_pread_file(path, back, touched * SEG, 0) != (ssize_t)(touched * SEG)) {
                snprintf(r.msg, sizeof r.msg, "worker %d: %s is short", w, path);
                r.rc = EIO;
            }
            for (size_t i = 0; i < touched * SEG && !r.rc; i++)
                if (back[i] != pattern(w, i)) {
                    snprintf(r.msg, sizeof r.msg, "worker %d: file byte %zu is 0x%02x, "
                             "expected 0x%02x", w, i, back[i], pattern(w, i));
                    r.rc = EIO;
                }
            free(back);
        }
        if (map && c.op != OP_QUIT) {
            tio_ummap_stats_t st;
            int rc = tio_ummap_stats(map, &st);
            if (!r.rc)
                r.rc = rc;
            r.resident = st.resident;
            r.evictions = st.evictions;
        }
        if (r.rc && !r.msg[0])
            snprintf(r.msg, sizeof r.msg, "worker %d: %s", w, strerror(r.rc));
        if (write(out, &r, sizeof r) != (ssize_t)sizeof r)
            return 3;
        if (c.op == OP_QUIT)
            return r.rc ? 1 : 0;
    }
}

/* ---- the driver ---- */

struct worker {
    pid_t pid;
    int to, from;
    int alive;
};
static struct worker wk[NW];

static void start_worker(int w)
{
    int a[2], b[2];
    CHECK_OK(pipe(a));
    CHECK_OK(pipe(b));
    pid_t pid = tt_fork(90);
    if (pid == 0) {
        close(a[1]);
        close(b[0]);
        for (int k = 0; k < w; k++) { /* not the other workers' pipes */
            close(wk[k].to);
            close(wk[k].from);
        }
        _exit(worker_main(w, a[0], b[1]));
    }
    close(a[0]);
    close(b[1]);
    wk[w] = (struct worker){pid, a[1], b[0], 1};
}

static struct reply ask(int w, int op, int arg)
{
    struct cmd c = {op, arg};
    struct reply r;
    CHECK(write(wk[w].to, &c, sizeof c) == (ssize_t)sizeof c);
    if (read(wk[w].from, &r, sizeof r) != (ssize_t)sizeof r) {
        char why[128];
        tt_wait(wk[w].pid, why, sizeof why);
        fprintf(stderr, "[%s] worker %d died: %s\n", tt_current_case, w, why);
        exit(1);
    }
    if (r.rc) {
        fprintf(stderr, "[%s] worker %d, step %d: %s\n", tt_current_case, w, op, r.msg);
        exit(1);
    }
    return r;
}

/* The worker's resident bytes must reach want (the give-back runs in its I/O thread). */
static void expect_resident(int w, size_t want_segs, const char *why)
{
    struct timespec dl = um_deadline(10000);
    struct reply r;
    do
        r = ask(w, OP_STATS, 0);
    while (r.resident != want_segs * SEG && !um_expired(&dl));
    if (r.resident != want_segs * SEG) {
        fprintf(stderr, "[%s] worker %d has %zu bytes (%.2f segments) resident, expected %zu "
                "segments: %s\n", tt_current_case, w, r.resident, (double)r.resident / SEG,
                want_segs, why);
        exit(1);
    }
}

static void quit(int w)
{
    ask(w, OP_QUIT, 0);
    char why[128];
    if (!tt_wait(wk[w].pid, why, sizeof why)) {
        fprintf(stderr, "[%s] worker %d: %s\n", tt_current_case, w, why);
        exit(1);
    }
    close(wk[w].to);
    close(wk[w].from);
    wk[w].alive = 0;
}

static void kill_worker(int w)
{
    CHECK_OK(kill(wk[w].pid, SIGKILL));
    int st;
    CHECK_OK(waitpid(wk[w].pid, &st, 0));
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    close(wk[w].to);
    close(wk[w].from);
    wk[w].alive = 0;
}

static int shm_objects(void)
{
    const char *key = getenv("UMMAP_NODE_KEY");
    DIR *d = opendir("/dev/shm");
    int n = 0;
    CHECK(d != NULL);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        else if (private_shm || (strstr(e->d_name, "tierio-memnode-") && strstr(e->d_name, key)))
            n++;
    closedir(d);
    return n;
}

static void run_static(void)
{
    CASE("static: shares of limit / 4");
    for (int w = 0; w < NW; w++)
        ask(w, OP_JOIN, 0);
    CHECK_EQ(shm_objects(), 1);
    for (int w = 0; w < NW; w++) {
        /* one segment at a time: the resident bytes never exceed the share */
        for (int k = 0; k < 12; k++) {
            struct reply r = ask(w, OP_TOUCH, 1);
            CHECK_LE(r.resident, (LIMIT_SEGS / NW) * SEG);
        }
        struct reply r = ask(w, OP_STATS, 0);
        CHECK_EQ(r.resident, (LIMIT_SEGS / NW) * SEG);
        CHECK_EQ(r.evictions, 12 - LIMIT_SEGS / NW);
    }
    for (int w = 0; w < NW; w++)
        ask(w, OP_CHECK, 0);
    CASE("static: one worker killed, the others finish");
    kill_worker(1);
    for (int w = 0; w < NW; w++)
        if (wk[w].alive) {
            ask(w, OP_TOUCH, 4);
            expect_resident(w, LIMIT_SEGS / NW, "the share does not change when one dies");
            ask(w, OP_CHECK, 0);
        }
    for (int w = 0; w < NW; w++)
        if (wk[w].alive)
            quit(w);
}

static void run_dynamic(void)
{
    CASE("dynamic: over the share while the node has room");
    for (int w = 0; w < NW; w++)
        ask(w, OP_JOIN, 0);
    CHECK_EQ(shm_objects(), 1);
    struct reply r = ask(0, OP_TOUCH, 14);
    CHECK_EQ(r.resident, 14 * SEG);
    CHECK_EQ(r.evictions, 0);

    CASE("dynamic: a process over its share gives back half its excess");
    for (int k = 0; k < 3; k++)
        ask(1, OP_TOUCH, 1);
    expect_resident(0, 9, "14 - ceil((14 - 4) / 2)");
    r = ask(1, OP_STATS, 0);
    CHECK_EQ(r.resident, 3 * SEG);
    CHECK_EQ(r.evictions, 0);
    for (int k = 0; k < 9; k++)
        ask(1, OP_TOUCH, 1);
    r = ask(1, OP_STATS, 0);
    CHECK_EQ(r.resident, 7 * SEG); /* 16 - 9: over its share on a full node, B evicts its own */
    CHECK_EQ(r.evictions, 5);
    r = ask(0, OP_STATS, 0);
    CHECK_EQ(r.resident, 9 * SEG); /* asked once only */
    ask(0, OP_CHECK, 0);
    ask(1, OP_CHECK, 0);

    CASE("dynamic: a killed process's bytes are reclaimed");
    kill_worker(0);
    for (int k = 0; k < 12; k++)
        ask(2, OP_TOUCH, 1);
    r = ask(2, OP_STATS, 0);
    CHECK_EQ(r.resident, 9 * SEG); /* 16 - B's 7; the dead A's 9 do not count */
    CHECK_EQ(r.evictions, 3);
    r = ask(1, OP_STATS, 0);
    CHECK_EQ(r.resident, 7 * SEG);
    ask(2, OP_CHECK, 0);
    ask(1, OP_CHECK, 0);
    for (int w = 0; w < NW; w++)
        if (wk[w].alive)
            quit(w);
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "static") && strcmp(argv[1], "dynamic"))) {
        fprintf(stderr, "usage: %s static|dynamic\n", argv[0]);
        return 2;
    }
    char why[256];
    if (tc_private_tmpfs("/dev/shm", "size=16m,mode=1777", why, sizeof why) == 0)
        private_shm = 1;
    else
        printf("note: no private /dev/shm (needs root): counting only the objects that "
               "name this test's node key\n");
    SEG = 16 * um_page();
    char lim[32];
    snprintf(lim, sizeof lim, "%zu", LIMIT_SEGS * SEG);
    setenv("UMMAP_MEM_LIMIT", lim, 1);
    setenv("UMMAP_MEMCONFIG", argv[1], 1);
    um_private_node(argv[1], NW);
    alarm(100);
    dir = tt_tmpdir("ummap-memmodes");
    int before = shm_objects();
    CHECK_EQ(before, private_shm ? 0 : before);
    for (int w = 0; w < NW; w++)
        start_worker(w);
    if (!strcmp(argv[1], "static"))
        run_static();
    else
        run_dynamic();
    CASE("nothing left in /dev/shm");
    CHECK_EQ(shm_objects(), 0);
    printf("test_ummap_memmodes %s: all checks passed\n", argv[1]);
    return 0;
}
