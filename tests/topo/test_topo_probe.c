/* Unit test of the probe files (src/topo/probe.c), without MPI: names, exclusive creation
 * (a second creation, a planted file or a planted symbolic link all give EXISTS and are not
 * touched), reading with the content, lookups that do not follow symbolic links, missing
 * directories, listings that pick exactly this token's per-rank probes, removal, and the
 * operation counts. */
#include "../unit/check.h"

#include "topo/probe.h"

static int count_matching(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    int n = 0;
    CHECK(d != NULL);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

int main(void)
{
    struct tio_err err;
    struct topo_ops ops = {0};
    char tok[TOPO_TOKEN_LEN + 1], tok2[TOPO_TOKEN_LEN + 1], path[4096], p2[4096], name[128];
    const char *dir = tt_tmpdir("topo-probe");

    CASE("token");
    uint32_t raw[4], raw2[4];
    tio_err_clear(&err);
    CHECK_EQ(topo_token_random(raw, &err), TIO_OK);
    CHECK_EQ(topo_token_random(raw2, &err), TIO_OK);
    CHECK(memcmp(raw, raw2, sizeof raw) != 0);
    topo_token_hex(raw, tok);
    topo_token_hex(raw2, tok2);
    CHECK_EQ(strlen(tok), TOPO_TOKEN_LEN);
    CHECK(strspn(tok, "0123456789abcdef") == TOPO_TOKEN_LEN);
    CHECK(strcmp(tok, tok2) != 0);
    uint32_t fixed[4] = {0x01234567u, 0x89abcdefu, 0u, 0xffffffffu};
    topo_token_hex(fixed, name);
    CHECK(strcmp(name, "0123456789abcdef00000000ffffffff") == 0);

    CASE("path");
    topo_probe_path(path, sizeof path, "/a/b", "00ff", -1);
    CHECK(strcmp(path, "/a/b/.tierio-nbhd-00ff") == 0);
    topo_probe_path(path, sizeof path, "/a/b/", "00ff", 12);
    CHECK(strcmp(path, "/a/b/.tierio-nbhd-00ff.12") == 0);
    CHECK(strlen("/.tierio-nbhd-") + TOPO_TOKEN_LEN + strlen(".2147483647") + 1 <=
          TOPO_PROBE_SUFFIX_MAX);

    CASE("entry names");
    snprintf(name, sizeof name, ".tierio-nbhd-%s.7", tok);
    CHECK_EQ(topo_probe_entry_rank(name, tok, 8), 7);
    CHECK_EQ(topo_probe_entry_rank(name, tok, 7), -1); /* out of range */
    snprintf(name, sizeof name, ".tierio-nbhd-%s.0", tok);
    CHECK_EQ(topo_probe_entry_rank(name, tok, 1), 0);
    const char *bad[] = {".07", ".-1", ".+1", ".1x", ".", "", ".1 ", ".99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(name, sizeof name, ".tierio-nbhd-%s%s", tok, bad[i]);
        CHECK_EQ(topo_probe_entry_rank(name, tok, 1000), -1);
    }
    snprintf(name, sizeof name, ".tierio-nbhd-%s.3", tok2);
    CHECK_EQ(topo_probe_entry_rank(name, tok, 8), -1); /* another discovery's probe */
    CHECK_EQ(topo_probe_entry_rank("3", tok, 8), -1);

    CASE("create, exclusive");
    topo_probe_path(path, sizeof path, dir, tok, -1);
    tio_err_clear(&err);
    CHECK_EQ(topo_probe_create(dir, path, "hello 1\n", &ops, &err), TOPO_PROBE_DONE);
    CHECK_EQ(topo_probe_create(dir, path, "other\n", &ops, &err), TOPO_PROBE_EXISTS);
    CHECK_EQ(err.cls, TIO_OK);
    struct stat st;
    CHECK_OK(stat(path, &st));
    CHECK_EQ(st.st_mode & 0777, 0600);
    char buf[64];
    CHECK_EQ(topo_probe_read(dir, path, buf, sizeof buf, &ops, &err), TOPO_PROBE_DONE);
    CHECK(strcmp(buf, "hello 1\n") == 0); /* the second creation did not touch it */
    CHECK_EQ(topo_probe_read(dir, path, buf, 4, &ops, &err), TOPO_PROBE_DONE);
    CHECK(strcmp(buf, "hel") == 0);
    CHECK_EQ(topo_probe_remove(dir, path, &ops, &err), TIO_OK);
    CHECK_EQ(topo_probe_read(dir, path, NULL, 0, &ops, &err), TOPO_PROBE_NODIR);
    CHECK_EQ(err.cls, TIO_OK);

    CASE("planted symbolic link");
    snprintf(p2, sizeof p2, "%s/target", dir);
    CHECK_OK(symlink(p2, path));
    CHECK_EQ(topo_probe_create(dir, path, "x", &ops, &err), TOPO_PROBE_EXISTS);
    CHECK(access(p2, F_OK) < 0); /* the link was not followed */
    tt_write_file(p2, "planted", 7);
    CHECK_EQ(topo_probe_read(dir, path, buf, sizeof buf, &ops, &err), TOPO_PROBE_ERROR);
    CHECK_EQ(err.cls, TIO_E_NOENT); /* ELOOP */
    CHECK_HAS(err.msg, "cannot open a probe file: Too many levels of symbolic links");
    CHECK_HAS(err.msg, dir);
    CHECK_OK(unlink(path));
    CHECK_OK(unlink(p2));

    CASE("missing directory");
    tio_err_clear(&err);
    snprintf(p2, sizeof p2, "%s/nope", dir);
    topo_probe_path(path, sizeof path, p2, tok, 3);
    CHECK_EQ(topo_probe_create(p2, path, NULL, &ops, &err), TOPO_PROBE_NODIR);
    CHECK_EQ(topo_probe_read(p2, path, NULL, 0, &ops, &err), TOPO_PROBE_NODIR);
    unsigned char seen[8] = {0};
    CHECK_EQ(topo_probe_list(p2, tok, 8, seen, &ops, &err), TIO_E_NOENT);
    CHECK_HAS(err.msg, p2);

    CASE("a regular file as the directory");
    tio_err_clear(&err);
    snprintf(p2, sizeof p2, "%s/file", dir);
    tt_write_file(p2, "f", 1);
    topo_probe_path(path, sizeof path, p2, tok, 0);
    CHECK_EQ(topo_probe_create(p2, path, NULL, &ops, &err), TOPO_PROBE_ERROR);
    CHECK_HAS(err.msg, "Not a directory");
    CHECK_OK(unlink(p2));

    CASE("listing");
    tio_err_clear(&err);
    int ranks[] = {0, 2, 5};
    for (int i = 0; i < 3; i++) {
        topo_probe_path(path, sizeof path, dir, tok, ranks[i]);
        CHECK_EQ(topo_probe_create(dir, path, NULL, &ops, &err), TOPO_PROBE_DONE);
    }
    topo_probe_path(path, sizeof path, dir, tok2, 1); /* another discovery */
    CHECK_EQ(topo_probe_create(dir, path, NULL, &ops, &err), TOPO_PROBE_DONE);
    topo_probe_path(path, sizeof path, dir, tok, 9); /* rank out of range */
    CHECK_EQ(topo_probe_create(dir, path, NULL, &ops, &err), TOPO_PROBE_DONE);
    memset(seen, 0, sizeof seen);
    CHECK_EQ(topo_probe_list(dir, tok, 8, seen, &ops, &err), TIO_OK);
    unsigned char want[8] = {1, 0, 1, 0, 0, 1, 0, 0};
    CHECK(memcmp(seen, want, sizeof want) == 0);
    for (int i = 0; i < 3; i++) {
        topo_probe_path(path, sizeof path, dir, tok, ranks[i]);
        CHECK_EQ(topo_probe_remove(dir, path, &ops, &err), TIO_OK);
    }
    topo_probe_path(path, sizeof path, dir, tok2, 1);
    CHECK_EQ(topo_probe_remove(dir, path, &ops, &err), TIO_OK);
    topo_probe_path(path, sizeof path, dir, tok, 9);
    CHECK_EQ(topo_probe_remove(dir, path, &ops, &err), TIO_OK);
    CHECK_EQ(topo_probe_remove(dir, path, &ops, &err), TIO_E_NOENT); /* already gone */
    CHECK_EQ(count_matching(dir, ".tierio-nbhd-"), 0);

    CASE("counts");
    /* creates: 2 + 1 (link) + 1 (missing) + 1 (file) + 5 (listing) = 10; lookups: 3 + 1 +
     * 1 = 5; listings: 2; removals: 1 + 5 = 6 (the failed removal does not count). */
    CHECK_EQ(ops.creates, 10);
    CHECK_EQ(ops.lookups, 5);
    CHECK_EQ(ops.listings, 2);
    CHECK_EQ(ops.removals, 6);
    printf("test_topo_probe: passed\n");
    return 0;
}
