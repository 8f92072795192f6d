/* Misspelled settings (util/settings_unknown.c): a name that looks like a tierio setting
 * and is none is warned about once per process, with the nearest real name; real
 * settings, reported get_info keys, the project's test variables and other programs'
 * names are not. The warnings are read back from stderr. */
#include "check.h"
#include "util/log.h"
#include "util/settings.h"

#include <signal.h>
#include <sys/wait.h>

/* Everything written to stderr while fn runs. */
static char *stderr_of(void (*fn)(void))
{
    static char out[8192];
    char path[] = "/tmp/tio-unknown-XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    CHECK(fd >= 0 && saved >= 0);
    unlink(path);
    fflush(stderr);
    dup2(fd, 2);
    fn();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t n = pread(fd, out, sizeof out - 1, 0);
    close(fd);
    out[n > 0 ? n : 0] = 0;
    return out;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void env_twice(void)
{
    tio_settings_check_env();
    tio_settings_check_env();
}

static void keys(void)
{
    CHECK_EQ(tio_settings_check_name("storage_alloc_filname", 0), 1);
    CHECK_EQ(tio_settings_check_name("storage_alloc_filname", 0), 1); /* warned once */
    CHECK_EQ(tio_settings_check_name("swin_factr", 0), 1);
    CHECK_EQ(tio_settings_check_name("tierio_zzzzzzzzzzzz", 0), 1);
    CHECK_EQ(tio_settings_check_name("storage_alloc_filename", 0), 0); /* a setting */
    CHECK_EQ(tio_settings_check_name("swin_filename", 0), 0);          /* its alias */
    CHECK_EQ(tio_settings_check_name("tierio_agg_sync_scope", 0), 0);  /* reported */
    CHECK_EQ(tio_settings_check_name("tierio_window_impl", 0), 0);     /* reported */
    CHECK_EQ(tio_settings_check_name("cb_nodes", 0), 0);               /* not ours */
    CHECK_EQ(tio_settings_check_name("TIERIO_AGG", 0), 0); /* a variable, not a key */
}

/* A process whose first tierio call is a log message, with a misspelled variable set: the
 * logger reads TIERIO_LOG through the settings, which look at the environment and warn,
 * through the logger. That must print the warning, not wait for itself. */
static void log_first(void)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        alarm(10); /* a deadlock ends here, as a signal */
        setenv("TIERIO_LOGG", "debug", 1);
        int err = open("/dev/null", O_WRONLY);
        dup2(err, 2); /* the warnings are not this test's subject */
        TIO_WARN("the first message of this process");
        _exit(0);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (WIFSIGNALED(status))
        FAIL_NOW("a log message as the first call with a misspelled variable set: killed by "
                 "signal %d (SIGALRM %d: the logger waited for itself)", WTERMSIG(status),
                 SIGALRM);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
    log_first();
    setenv("TIERIO_AGG_STRATEGYY", "tapioca", 1);  /* misspelled */
    setenv("UMMAP_MEM_LIMT", "1Gi", 1);             /* misspelled */
    setenv("TIERIO_TEST_SOMETHING", "1", 1);        /* the tests' own: ignored */
    setenv("TIERIO_AGG_STRATEGY", "default", 1);    /* a real one */
    setenv("UMMAPPER", "1", 1);                     /* not ours */
    unsetenv("TIERIO_LOG");                         /* warnings are shown by default */

    const char *e = stderr_of(env_twice);
    CHECK_EQ(count(e, "environment variable \"TIERIO_AGG_STRATEGYY\" is not one of tierio's "
                      "settings: ignored; did you mean \"TIERIO_AGG_STRATEGY\"?"), 1);
    CHECK_EQ(count(e, "\"UMMAP_MEM_LIMT\" is not one of tierio's settings: ignored; did you "
                      "mean \"UMMAP_MEM_LIMIT\"?"), 1);
    CHECK_EQ(count(e, "TIERIO_TEST_SOMETHING"), 0);
    CHECK_EQ(count(e, "\"TIERIO_AGG_STRATEGY\" is not"), 0);
    CHECK_EQ(count(e, "UMMAPPER"), 0);
    CHECK_EQ(count(e, "is not one of tierio's settings"), 2);

    const char *k = stderr_of(keys);
    CHECK_EQ(count(k, "info key \"storage_alloc_filname\" is not one of tierio's settings: "
                      "ignored; did you mean \"storage_alloc_filename\"?"), 1);
    CHECK_EQ(count(k, "info key \"swin_factr\" is not one of tierio's settings: ignored; did "
                      "you mean \"swin_factor\"?"), 1);
    /* nothing near: no suggestion */
    CHECK_EQ(count(k, "info key \"tierio_zzzzzzzzzzzz\" is not one of tierio's settings: "
                      "ignored (docs"), 1);
    CHECK_EQ(count(k, "is not one of tierio's settings"), 3);
    printf("test_settings_unknown: all checks passed\n");
    return 0;
}
