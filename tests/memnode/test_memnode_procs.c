/* The node memory budget with several processes (fork, no launcher): static shares,
 * dynamic mode exceeding while there is room and giving back half of the excess when
 * another process needs room, the futex wake-up, killed processes, /dev/shm left clean,
 * reference counting, threads, forked children, bad environments.
 *
 *   test_memnode_procs CASE      (one case per CTest test; see main for the names)
 *
 * Every process of a case joins the group of a key of its own (UMMAP_NODE_KEY), so that
 * tests running at the same time never meet. Processes are driven over pipes. */
#include "mntest.h"

#include <sched.h>

#include "ummap/memnode_env.h"

static tio_memnode_t *join_ok(void)
{
    tio_memnode_t *m = NULL;
    int rc = tio_memnode_join(&m);
    if (rc) {
        fprintf(stderr, "[%s] tio_memnode_join: %s\n", tt_current_case, strerror(rc));
        exit(1);
    }
    CHECK(m != NULL);
    return m;
}

/* Leave and check the object is gone (we were the last member). */
static void leave_last(tio_memnode_t *m)
{
    char name[128];
    snprintf(name, sizeof name, "%s", tio_memnode_name(m));
    CHECK(mn_shm_exists(name));
    tio_memnode_leave(m);
    CHECK(!mn_shm_exists(name));
}

/* ---- static mode ---- */

static void kid_static(int in, int out)
{
    tio_memnode_t *m = join_ok();
    mn_send(out, (uint64_t)tio_memnode_members(m));
    mn_send(out, tio_memnode_charge(m, 3 * MiB));
    mn_send(out, tio_memnode_share(m));
    CHECK_EQ(mn_recv(in), 1); /* parent checked the node total */
    tio_memnode_leave(m);
    mn_send(out, 1);
}

static void case_static_shares(void)
{
    mn_env(mn_key("static"), "8Mi", "static", "4");
    tio_memnode_t *m = join_ok();
    CHECK_EQ(tio_memnode_limit(m), 8 * MiB);
    CHECK_EQ(tio_memnode_share(m), 2 * MiB);
    CHECK_EQ(tio_memnode_dynamic(m), 0);
    CHECK(!strcmp(tio_memnode_key_source(m), "UMMAP_NODE_KEY"));
    CHECK(!strcmp(tio_memnode_procs_source(m), "UMMAP_NODE_PROCS"));
    CHECK_EQ(tio_memnode_charge(m, 1 * MiB), 0);
    CHECK_EQ(tio_memnode_charge(m, 3 * MiB / 2), MiB / 2); /* 2.5 MiB for a 2 MiB share */
    tio_memnode_release(m, MiB / 2);
    CHECK_EQ(tio_memnode_charged(m), 2 * MiB);
    CHECK_EQ(tio_memnode_charge(m, 0), 0);

    struct mn_kid k = mn_spawn(kid_static);
    CHECK_EQ(mn_recv(k.from), 2);       /* both are members */
    CHECK_EQ(mn_recv(k.from), 1 * MiB); /* its own share bounds it: 3 MiB - 2 MiB */
    CHECK_EQ(mn_recv(k.from), 2 * MiB); /* share fixed by UMMAP_NODE_PROCS */
    CHECK_EQ(tio_memnode_node_total(m), 5 * MiB); /* one shared account */
    mn_send(k.to, 1);
    CHECK_EQ(mn_recv(k.from), 1);
    CHECK_EQ(tio_memnode_members(m), 1);
    CHECK_EQ(tio_memnode_node_total(m), 2 * MiB);
    mn_reap_ok(&k);
    leave_last(m);
}

static void kid_join_leave(int in, int out)
{
    CHECK_EQ(mn_recv(in), 1);
    tio_memnode_t *m = join_ok();
    mn_send(out, tio_memnode_share(m));
    CHECK_EQ(mn_recv(in), 2);
    tio_memnode_leave(m);
    mn_send(out, 2);
}

/* No process count given: the limit is split among the processes joined, and members
 * over their new share are woken when a process joins. */
static void case_static_joined(void)
{
    mn_env(mn_key("joined"), "8Mi", NULL, NULL);
    tio_memnode_t *m = join_ok();
    CHECK(!strcmp(tio_memnode_procs_source(m), "processes joined"));
    CHECK_EQ(tio_memnode_share(m), 8 * MiB);
    CHECK_EQ(tio_memnode_charge(m, 6 * MiB), 0);

    struct mn_kid k = mn_spawn(kid_join_leave);
    struct mn_waiter w;
    mn_waiter_start(&w, m, 30000);
    mn_send(k.to, 1); /* join now */
    CHECK_EQ(mn_recv(k.from), 4 * MiB);
    CHECK_EQ(mn_waiter_end(&w), 2 * MiB); /* 6 MiB charged, 4 MiB share */
    CHECK_EQ(tio_memnode_share(m), 4 * MiB);
    tio_memnode_release(m, 2 * MiB);
    mn_send(k.to, 2); /* leave now */
    CHECK_EQ(mn_recv(k.from), 2);
    CHECK_EQ(tio_memnode_share(m), 8 * MiB);
    mn_reap_ok(&k);
    leave_last(m);
}

/* ---- dynamic mode ---- */

static void kid_dynamic(int in, int out)
{
    tio_memnode_t *m = join_ok();
    CHECK_EQ(tio_memnode_dynamic(m), 1);
    /* Each step: a size to charge from the parent, the result back. */
    for (uint64_t n; (n = mn_recv(in)) != 0;)
        mn_send(out, tio_memnode_charge(m, (size_t)n));
    tio_memnode_leave(m);
    mn_send(out, 1);
}

static void case_dynamic(void)
{
    mn_env(mn_key("dynamic"), "8Mi", "dynamic", "2");
    tio_memnode_t *m = join_ok();
    CHECK_EQ(tio_memnode_share(m), 4 * MiB);
    CHECK_EQ(tio_memnode_dynamic(m), 1);
    /* Over its share while the node has room: nothing to evict. */
    CHECK_EQ(tio_memnode_charge(m, 7 * MiB), 0);
    struct mn_kid k = mn_spawn(kid_dynamic);
    mn_send(k.to, 1 * MiB); /* node at 8 MiB: still fits */
    CHECK_EQ(mn_recv(k.from), 0);
    /* Node full and we are over our share: we make room ourselves, exactly the overflow. */
    CHECK_EQ(tio_memnode_charge(m, MiB / 2), MiB / 2);
    tio_memnode_release(m, MiB / 2);
    CHECK_EQ(tio_memnode_charged(m), 7 * MiB);

    /* The child, under its share, needs room: we are asked for half our excess (3 MiB
     * over a 4 MiB share -> 1.5 MiB), through the futex, and the child evicts nothing. */
    struct mn_waiter w;
    mn_waiter_start(&w, m, 30000);
    mn_send(k.to, 1 * MiB);
    CHECK_EQ(mn_recv(k.from), 0);
    CHECK_EQ(mn_waiter_end(&w), 3 * MiB / 2);
    tio_memnode_release(m, 3 * MiB / 2);
    CHECK_EQ(tio_memnode_node_total(m), 7 * MiB + MiB / 2); /* 5.5 + 2 */

    /* Again (node at 8.5 MiB): half of the 1.5 MiB excess left. No waiter this time: our
     * next charge serves the request (it is larger than our own overflow). */
    mn_send(k.to, 1 * MiB);
    CHECK_EQ(mn_recv(k.from), 0);
    size_t asked = 3 * MiB / 4;
    CHECK_EQ(tio_memnode_charge(m, 4096), asked);
    tio_memnode_release(m, asked);

    /* A request shrinks by what is released before it is served. Node: 4.75 + 4096 +
     * 3 MiB; the child's 1 MiB more overflows; our excess is 0.75 MiB + 4096. */
    mn_send(k.to, 1 * MiB);
    CHECK_EQ(mn_recv(k.from), 0);
    size_t want = (3 * MiB / 4 + 4096 + 1) / 2;
    tio_memnode_release(m, 4096);
    CHECK_EQ(tio_memnode_reclaim_wait(m, 10000), want - 4096);
    /* Served: nothing more is pending, and waiting times out with 0. */
    CHECK_EQ(tio_memnode_reclaim_wait(m, 10), 0);

    mn_send(k.to, 0);
    CHECK_EQ(mn_recv(k.from), 1);
    mn_reap_ok(&k);
    leave_last(m);
}

static void kid_waiter(int in, int out)
{
    tio_memnode_t *m = join_ok();
    mn_send(out, tio_memnode_charge(m, (size_t)mn_recv(in)));
    /* Blocked in the futex until the third process needs room. */
    struct mn_waiter w;
    mn_waiter_start(&w, m, 30000);
    mn_send(out, 1); /* blocked now */
    size_t got = mn_waiter_end(&w);
    tio_memnode_release(m, got);
    mn_send(out, got);
    CHECK_EQ(mn_recv(in), 2);
    tio_memnode_leave(m);
}

/* Three processes: two over their share are each asked for half of their own excess. */
static void case_dynamic_three(void)
{
    mn_env(mn_key("three"), "9Mi", "dynamic", "3"); /* 3 MiB shares */
    struct mn_kid a = mn_spawn(kid_waiter), b = mn_spawn(kid_waiter);
    mn_send(a.to, 5 * MiB);
    CHECK_EQ(mn_recv(a.from), 0);
    mn_send(b.to, 7 * MiB / 2);
    CHECK_EQ(mn_recv(b.from), 0);
    CHECK_EQ(mn_recv(a.from), 1);
    CHECK_EQ(mn_recv(b.from), 1);
    tio_memnode_t *m = join_ok();
    CHECK_EQ(tio_memnode_members(m), 3);
    CHECK_EQ(tio_memnode_node_total(m), 17 * MiB / 2);
    CHECK_EQ(tio_memnode_charge(m, 1 * MiB), 0); /* 9.5 MiB: we are under our share */
    CHECK_EQ(mn_recv(a.from), 1 * MiB);          /* (5 - 3) / 2 */
    CHECK_EQ(mn_recv(b.from), MiB / 4);          /* (3.5 - 3) / 2 */
    CHECK_EQ(tio_memnode_node_total(m), 17 * MiB / 2 + MiB - MiB - MiB / 4);
    mn_send(a.to, 2);
    mn_send(b.to, 2);
    mn_reap_ok(&a);
    mn_reap_ok(&b);
    leave_last(m);
}

/* ---- killed processes ---- */

static void kid_charge_and_wait(int in, int out)
{
    tio_memnode_t *m = join_ok();
    mn_send(out, tio_memnode_charge(m, (size_t)mn_recv(in)));
    mn_recv(in); /* killed here */
    tio_memnode_leave(m);
}

static void case_killed(void)
{
    mn_env(mn_key("killed"), "8Mi", "dynamic", "2");
    tio_memnode_t *m = join_ok();
    char name[128];
    snprintf(name, sizeof name, "%s", tio_memnode_name(m));
    struct mn_kid k = mn_spawn(kid_charge_and_wait);
    mn_send(k.to, 6 * MiB);
    CHECK_EQ(mn_recv(k.from), 0);
    mn_kill(&k);
    /* Not noticed yet: the dead process's 6 MiB still count... */
    CHECK_EQ(tio_memnode_members(m), 2);
    CHECK_EQ(tio_memnode_node_total(m), 6 * MiB);
    /* ...until the node is full: then they are dropped instead of anyone evicting. */
    CHECK_EQ(tio_memnode_charge(m, 3 * MiB), 0);
    CHECK_EQ(tio_memnode_node_total(m), 3 * MiB);
    CHECK_EQ(tio_memnode_members(m), 1);
    leave_last(m); /* and the object does not outlive us */
    CHECK(!mn_shm_exists(name));
}

/* Static mode counting members: a killed member's share comes back at the next
 * housekeeping (a timed-out reclaim_wait), and a leave of the last live member removes
 * the object although the dead one never left. */
static void case_killed_static(void)
{
    mn_env(mn_key("killedst"), "8Mi", "static", NULL);
    tio_memnode_t *m = join_ok();
    struct mn_kid k = mn_spawn(kid_charge_and_wait);
    mn_send(k.to, 5 * MiB);
    CHECK_EQ(mn_recv(k.from), 1 * MiB); /* 2 members: 4 MiB shares */
    CHECK_EQ(tio_memnode_share(m), 4 * MiB);
    mn_kill(&k);
    CHECK_EQ(tio_memnode_share(m), 4 * MiB); /* not noticed yet */
    CHECK_EQ(tio_memnode_reclaim_wait(m, 20), 0);
    CHECK_EQ(tio_memnode_share(m), 8 * MiB);
    CHECK_EQ(tio_memnode_members(m), 1);

    /* A join notices too. */
    struct mn_kid k2 = mn_spawn(kid_charge_and_wait);
    mn_send(k2.to, 1 * MiB);
    CHECK_EQ(mn_recv(k2.from), 0);
    mn_kill(&k2);
    struct mn_kid k3 = mn_spawn(kid_charge_and_wait);
    mn_send(k3.to, 1 * MiB);
    CHECK_EQ(mn_recv(k3.from), 0);
    CHECK_EQ(tio_memnode_members(m), 2); /* us and k3: k2's slot was taken back */
    mn_kill(&k3);
    leave_last(m); /* k3 died without leaving: the leave notices and removes the object */
}

/* Every member killed: the object stays (nobody runs to remove it); the next join of the
 * same group starts afresh, and a join of any other group of ours removes it. */
static void case_killed_all(void)
{
    const char *k1 = mn_key("all1"), *k2 = mn_key("all2"), *k3 = mn_key("all3");
    char n1[128], n2[128];
    tio_memnode_object_name(n1, sizeof n1, (unsigned)geteuid(), k1);
    tio_memnode_object_name(n2, sizeof n2, (unsigned)geteuid(), k2);

    mn_env(k1, "4Mi", "static", "2");
    struct mn_kid a = mn_spawn(kid_charge_and_wait);
    mn_send(a.to, 3 * MiB);
    CHECK_EQ(mn_recv(a.from), 1 * MiB);
    mn_kill(&a);
    CHECK(mn_shm_exists(n1));
    /* Different explicit settings would be refused by a live group: accepted here because
     * the group is reinitialised, without the dead member's bytes. */
    mn_env(k1, "8Mi", "dynamic", "1");
    tio_memnode_t *m = join_ok();
    CHECK(!strcmp(tio_memnode_name(m), n1));
    CHECK_EQ(tio_memnode_limit(m), 8 * MiB);
    CHECK_EQ(tio_memnode_dynamic(m), 1);
    CHECK_EQ(tio_memnode_members(m), 1);
    CHECK_EQ(tio_memnode_node_total(m), 0);
    leave_last(m);

    mn_env(k2, "4Mi", "static", "2");
    struct mn_kid b = mn_spawn(kid_charge_and_wait);
    mn_send(b.to, 1 * MiB);
    CHECK_EQ(mn_recv(b.from), 0);
    mn_kill(&b);
    CHECK(mn_shm_exists(n2));
    mn_env(k3, "4Mi", "static", "2");
    m = join_ok();
    CHECK(!mn_shm_exists(n2)); /* stale: removed by the join of another group */
    leave_last(m);
}

/* A child forked by a member is not a member: the parent's slot is freed when the parent
 * dies although the child (which inherited the descriptor) lives on. */
static void grandchild(int in, int out)
{
    (void)in;
    prctl(PR_SET_PDEATHSIG, 0); /* outlive the member that forked us */
    mn_send(out, (uint64_t)getpid());
    pause(); /* killed by the test */
}

static void kid_forks(int in, int out)
{
    tio_memnode_t *m = join_ok();
    CHECK_EQ(tio_memnode_charge(m, 5 * MiB), 0);
    struct mn_kid g = mn_spawn(grandchild);
    mn_send(out, mn_recv(g.from)); /* the grandchild's pid */
    mn_recv(in);                   /* killed here */
}

static void inert_child(int in, int out)
{
    (void)in;
    /* The inherited object is inert here: it charges nothing to the parent's slot. */
    tio_memnode_t *m = (tio_memnode_t *)(uintptr_t)mn_recv(in);
    CHECK_EQ(tio_memnode_charge(m, 3 * MiB), 0);
    CHECK_EQ(tio_memnode_charged(m), 0);
    tio_memnode_leave(m);
    /* It may join the group itself. */
    tio_memnode_t *own = join_ok();
    mn_send(out, tio_memnode_members(own));
    tio_memnode_leave(own);
    mn_send(out, 1);
}

static pid_t fork_gpid;
static void kill_grandchild(void)
{
    if (fork_gpid > 0)
        kill(fork_gpid, SIGKILL); /* also when a check failed: it holds our stdout */
}

static void case_fork(void)
{
    mn_env(mn_key("fork"), "8Mi", "dynamic", "2");
    struct mn_kid k = mn_spawn(kid_forks);
    pid_t gpid = (pid_t)mn_recv(k.from);
    fork_gpid = gpid;
    atexit(kill_grandchild);
    mn_kill(&k);
    CHECK_OK(kill(gpid, 0)); /* the grandchild, forked by a member, lives on */
    tio_memnode_t *m = join_ok();
    /* The member's slot was found dead (taken over or reaped by our join): the copy of
     * its descriptor in the grandchild does not keep it alive. */
    CHECK_EQ(tio_memnode_members(m), 1);
    CHECK_EQ(tio_memnode_node_total(m), 0);
    CHECK_EQ(tio_memnode_reap(m), 0);
    CHECK_OK(kill(gpid, SIGKILL));

    /* Our own child, forked while we are a member. */
    CHECK_EQ(tio_memnode_charge(m, 1 * MiB), 0);
    struct mn_kid c = mn_spawn(inert_child);
    mn_send(c.to, (uint64_t)(uintptr_t)m);
    CHECK_EQ(mn_recv(c.from), 2);
    CHECK_EQ(mn_recv(c.from), 1);
    mn_reap_ok(&c);
    CHECK_EQ(tio_memnode_charged(m), 1 * MiB);
    CHECK_EQ(tio_memnode_node_total(m), 1 * MiB);
    leave_last(m);
}

/* ---- one process ---- */

static void case_refcount(void)
{
    mn_env(mn_key("ref"), "8Mi", "static", "1");
    tio_memnode_t *a = join_ok(), *b = join_ok();
    CHECK(a == b);
    CHECK_EQ(tio_memnode_charge(a, 1 * MiB), 0);
    tio_memnode_leave(a);
    CHECK(mn_shm_exists(tio_memnode_name(b)));
    CHECK_EQ(tio_memnode_charged(b), 1 * MiB);
    leave_last(b);
    tio_memnode_t *c = join_ok(); /* a new membership after the last leave */
    CHECK_EQ(tio_memnode_charged(c), 0);
    leave_last(c);
    tio_memnode_leave(NULL);
}

static void case_wake(void)
{
    mn_env(mn_key("wake"), "8Mi", "dynamic", "1");
    tio_memnode_t *m = join_ok();
    struct mn_waiter w;
    mn_waiter_start(&w, m, 30000);
    tio_memnode_wake(m);
    CHECK_EQ(mn_waiter_end(&w), 0);
    /* A wake that comes before the wait is not lost. */
    tio_memnode_wake(m);
    double t0 = mn_now();
    CHECK_EQ(tio_memnode_reclaim_wait(m, 30000), 0);
    CHECK(mn_now() - t0 < 15);
    /* And a timeout is a timeout. */
    CHECK_EQ(tio_memnode_reclaim_wait(m, 1), 0);
    leave_last(m);
}

#define NTHREADS 4
static tio_memnode_t *thread_seen[NTHREADS];

static void *thread_main(void *arg)
{
    int id = (int)(intptr_t)arg;
    tio_memnode_t *m = NULL;
    if (tio_memnode_join(&m))
        return (void *)1;
    thread_seen[id] = m;
    for (int i = 0; i < 20000; i++) {
        tio_memnode_charge(m, 4096 * (size_t)(1 + id));
        tio_memnode_release(m, 4096 * (size_t)(1 + id));
    }
    for (int i = 0; i < 100; i++)
        tio_memnode_charge(m, 4096);
    tio_memnode_leave(m);
    return NULL;
}

static void case_threads(void)
{
    mn_env(mn_key("threads"), "1Gi", "dynamic", "1");
    tio_memnode_t *m = join_ok(); /* keeps the membership while threads join and leave */
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        CHECK(pthread_create(&th[i], NULL, thread_main, (void *)(intptr_t)i) == 0);
    for (int i = 0; i < NTHREADS; i++) {
        void *r;
        CHECK(pthread_join(th[i], &r) == 0);
        CHECK(r == NULL);
        CHECK(thread_seen[i] == m);
    }
    CHECK_EQ(tio_memnode_charged(m), (size_t)NTHREADS * 100 * 4096);
    CHECK_EQ(tio_memnode_members(m), 1);
    leave_last(m);
}

/* ---- bad environments and disagreements ---- */

/* The join fails with EINVAL, returns no object, and says why, naming the variable. */
static void expect_einval(const char *what, const char *var, const char *value)
{
    tio_memnode_t *m = (tio_memnode_t *)&m;
    int saved = mn_stderr_begin();
    int rc = tio_memnode_join(&m);
    const char *msg = mn_stderr_end(saved);
    if (rc != EINVAL || m != NULL) {
        fprintf(stderr, "[%s] %s: join returned %d (%s), want EINVAL and no object\n",
                tt_current_case, what, rc, strerror(rc));
        exit(1);
    }
    CHECK_HAS(msg, var);
    CHECK_HAS(msg, value);
    CHECK_HAS(msg, "invalid");
    CHECK_HAS(msg, "expected");
}

static void case_bad_env(void)
{
    static const struct { const char *var, *value; } bad[] = {
        {"UMMAP_MEM_LIMIT", "abc"},   {"UMMAP_MEM_LIMIT", "-5"},
        {"UMMAP_MEM_LIMIT", "0"},     {"UMMAP_MEM_LIMIT", "12Q"},
        {"UMMAP_MEM_LIMIT", "1.5"},   {"UMMAP_MEM_LIMIT", "99999999999999999999"},
        {"UMMAP_MEM_LIMIT", "17179869184Ti"},
        {"UMMAP_MEM_FACTOR", "0"},    {"UMMAP_MEM_FACTOR", "1.5"},
        {"UMMAP_MEM_FACTOR", "x"},    {"UMMAP_MEM_FACTOR", "nan"},
        {"UMMAP_MEM_FACTOR", "-0.5"}, {"UMMAP_MEM_FACTOR", "0.5x"},
        {"UMMAP_MEMCONFIG", "fast"},  {"UMMAP_MEMCONFIG", "statics"},
        {"UMMAP_NODE_PROCS", "0"},    {"UMMAP_NODE_PROCS", "two"},
        {"UMMAP_NODE_PROCS", "-1"},   {"UMMAP_NODE_PROCS", "2000000"},
        {"OMPI_COMM_WORLD_LOCAL_SIZE", "zero"}, {"MPI_LOCALNRANKS", "0"},
    };
    const char *key = mn_key("bad");
    char name[128];
    tio_memnode_object_name(name, sizeof name, (unsigned)geteuid(), key);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char what[128];
        snprintf(what, sizeof what, "%s=\"%s\"", bad[i].var, bad[i].value);
        mn_env(key, "8Mi", NULL, NULL);
        if (!strcmp(bad[i].var, "UMMAP_MEM_LIMIT"))
            unsetenv("UMMAP_MEM_LIMIT");
        setenv(bad[i].var, bad[i].value, 1);
        expect_einval(what, bad[i].var, bad[i].value);
        CHECK(!mn_shm_exists(name));
    }
    /* Empty values count as unset. */
    mn_env(key, "8Mi", "", "");
    setenv("UMMAP_MEM_FACTOR", "", 1);
    tio_memnode_t *m = join_ok();
    CHECK_EQ(tio_memnode_dynamic(m), 0);
    leave_last(m);
}

static void kid_try_join(int in, int out)
{
    (void)in;
    tio_memnode_t *m = NULL;
    int saved = mn_stderr_begin();
    int rc = tio_memnode_join(&m);
    const char *msg = mn_stderr_end(saved);
    if (rc && getenv("MN_EXPECT")) { /* words the message must hold, '|'-separated */
        char words[256], *save = NULL;
        snprintf(words, sizeof words, "%s", getenv("MN_EXPECT"));
        for (char *w = strtok_r(words, "|", &save); w; w = strtok_r(NULL, "|", &save))
            CHECK_HAS(msg, w);
    }
    mn_send(out, (uint64_t)rc);
    if (!rc) {
        mn_send(out, tio_memnode_limit(m));
        mn_send(out, tio_memnode_members(m));
        tio_memnode_leave(m);
    }
}

static int try_join_with(const char *key, const char *limit, const char *mode,
                         const char *procs, uint64_t *limit_seen, const char *expect)
{
    mn_env(key, limit, mode, procs);
    if (expect)
        setenv("MN_EXPECT", expect, 1);
    else
        unsetenv("MN_EXPECT");
    struct mn_kid k = mn_spawn(kid_try_join);
    int rc = (int)mn_recv(k.from);
    if (!rc) {
        *limit_seen = mn_recv(k.from);
        CHECK_EQ(mn_recv(k.from), 2);
    }
    mn_reap_ok(&k);
    return rc;
}

static void case_mismatch(void)
{
    const char *key = mn_key("mismatch");
    mn_env(key, "8Mi", "static", "2");
    tio_memnode_t *m = join_ok();
    uint64_t seen = 0;
    CHECK_EQ(try_join_with(key, "4Mi", "static", "2", &seen,
                           "UMMAP_MEM_LIMIT|4194304|8388608|same value"), EINVAL);
    CHECK_EQ(try_join_with(key, "8Mi", "dynamic", "2", &seen,
                           "UMMAP_MEMCONFIG=dynamic|is static|same mode"), EINVAL);
    CHECK_EQ(try_join_with(key, "8Mi", "static", "3", &seen,
                           "UMMAP_NODE_PROCS=3|among 2 processes"), EINVAL);
    CHECK_EQ(tio_memnode_members(m), 1); /* the refused ones left nothing */
    /* Without explicit settings a process takes the group's. */
    CHECK_EQ(try_join_with(key, NULL, NULL, NULL, &seen, NULL), 0);
    CHECK_EQ(seen, 8 * MiB);
    CHECK_EQ(try_join_with(key, "8192Ki", "STATIC", "2", &seen, NULL), 0);
    CHECK_EQ(seen, 8 * MiB);
    CHECK_EQ(tio_memnode_members(m), 1);
    leave_last(m);
}

/* Something else under our name: garbage nobody holds is reinitialised; garbage a live
 * process holds as a member is refused (EPROTO) and left alone. */
static void holder(int in, int out)
{
    char name[128];
    tio_memnode_object_name(name, sizeof name, (unsigned)geteuid(), getenv("UMMAP_NODE_KEY"));
    int fd = shm_open(name, O_RDWR | O_CREAT, 0600);
    CHECK_OK(fd);
    CHECK_OK(ftruncate(fd, 100));
    struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 1, .l_len = 1};
    CHECK_OK(fcntl(fd, F_OFD_SETLK, &fl));
    mn_send(out, 1);
    mn_recv(in);
    shm_unlink(name);
    mn_send(out, 2);
}

static void case_foreign(void)
{
    const char *key = mn_key("foreign");
    char name[128];
    tio_memnode_object_name(name, sizeof name, (unsigned)geteuid(), key);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    CHECK_OK(fd);
    CHECK_OK(write(fd, "garbage", 7));
    close(fd);
    mn_env(key, "8Mi", "static", "1");
    tio_memnode_t *m = join_ok();
    CHECK_EQ(tio_memnode_limit(m), 8 * MiB);
    leave_last(m);

    struct mn_kid k = mn_spawn(holder);
    CHECK_EQ(mn_recv(k.from), 1);
    m = (tio_memnode_t *)&m;
    CHECK_EQ(tio_memnode_join(&m), EPROTO);
    CHECK(m == NULL);
    CHECK(mn_shm_exists(name)); /* not ours to remove */
    mn_send(k.to, 1);
    CHECK_EQ(mn_recv(k.from), 2);
    mn_reap_ok(&k);
    CHECK(!mn_shm_exists(name));
}

/* /dev/shm too small for the object: an error at join (ENOSPC), not a SIGBUS later, and
 * nothing left. In a mount namespace of our own with a 16 KiB tmpfs on /dev/shm (root;
 * exit 77 = skipped otherwise). */
static void case_shm_full(void)
{
    if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        mount("memnode-test", "/dev/shm", "tmpfs", 0, "size=16k") < 0) {
        printf("test_memnode_procs shm_full: SKIP: cannot mount a tmpfs on /dev/shm in a "
               "mount namespace of our own (%s)\n", strerror(errno));
        exit(77);
    }
    mn_env(mn_key("full"), "8Mi", "static", "1");
    tio_memnode_t *m = (tio_memnode_t *)&m;
    int saved = mn_stderr_begin();
    int rc = tio_memnode_join(&m);
    const char *msg = mn_stderr_end(saved);
    CHECK_EQ(rc, ENOSPC);
    CHECK(m == NULL);
    CHECK_HAS(msg, "/dev/shm/tierio-memnode-");
    CHECK_HAS(msg, strerror(ENOSPC));
    CHECK_EQ(tc_count_entries("/dev/shm"), 0);
}

int main(int argc, char **argv)
{
    static const struct { const char *name; void (*fn)(void); } cases[] = {
        {"static_shares", case_static_shares}, {"static_joined", case_static_joined},
        {"dynamic", case_dynamic},             {"dynamic_three", case_dynamic_three},
        {"killed", case_killed},               {"killed_static", case_killed_static},
        {"killed_all", case_killed_all},       {"fork", case_fork},
        {"refcount", case_refcount},           {"wake", case_wake},
        {"threads", case_threads},             {"bad_env", case_bad_env},
        {"mismatch", case_mismatch},           {"foreign", case_foreign},
        {"shm_full", case_shm_full},
    };
    setenv("TIERIO_LOG", "error", 0);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (argc == 2 && !strcmp(argv[1], cases[i].name)) {
            CASE(cases[i].name);
            cases[i].fn();
            printf("test_memnode_procs %s: passed\n", cases[i].name);
            return 0;
        }
    }
    fprintf(stderr, "usage: test_memnode_procs CASE (");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        fprintf(stderr, "%s%s", i ? " " : "", cases[i].name);
    fprintf(stderr, ")\n");
    return 2;
}
