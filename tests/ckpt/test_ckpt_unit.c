/* Unit tests of the checkpoint layer below MPI: CRC-32C (known answers, hardware against
 * table form at every length and alignment, chaining), the manifest (round trip; every
 * single-byte corruption and every truncation rejected; malformed content), and the
 * store (names, version listing, pruning, removal order, checks and copies that catch a
 * changed file and leave nothing half-made). */
#include "../unit/check.h"

#include <inttypes.h>

#include "ckpt/crc32c.h"
#include "ckpt/manifest.h"
#include "ckpt/store.h"

static void test_crc_known(void)
{
    CASE("crc32c known answers (RFC 3720 B.4)");
    unsigned char buf[32];
    CHECK_EQ(tio_crc32c(0, "123456789", 9), 0xE3069283u);
    CHECK_EQ(tio_crc32c_sw(0, "123456789", 9), 0xE3069283u);
    memset(buf, 0, sizeof buf);
    CHECK_EQ(tio_crc32c(0, buf, 32), 0x8A9136AAu);
    memset(buf, 0xFF, sizeof buf);
    CHECK_EQ(tio_crc32c(0, buf, 32), 0x62A8AB43u);
    for (int i = 0; i < 32; i++)
        buf[i] = (unsigned char)i;
    CHECK_EQ(tio_crc32c(0, buf, 32), 0x46DD794Eu);
    for (int i = 0; i < 32; i++)
        buf[i] = (unsigned char)(31 - i);
    CHECK_EQ(tio_crc32c(0, buf, 32), 0x113FDB5Cu);
    CHECK_EQ(tio_crc32c(0, buf, 0), 0u);
}

static void test_crc_forms(void)
{
    CASE("crc32c: hardware and table forms agree; chaining");
    size_t n = 3 * 2048 * 3 + 4099; /* several 3-stream rounds plus a tail */
    unsigned char *b = malloc(n + 16);
    CHECK(b);
    tt_fill(b, n + 16, 7);
    printf("crc32c: hardware instruction %s\n", tio_crc32c_hw() ? "used" : "not available");
    for (size_t off = 0; off < 9; off++) {
        size_t lens[] = {0, 1, 7, 8, 9, 63, 2048, 6143, 6144, 6145, 12288, n};
        for (size_t k = 0; k < sizeof lens / sizeof *lens; k++) {
            uint32_t hw = tio_crc32c(0, b + off, lens[k]);
            uint32_t sw = tio_crc32c_sw(0, b + off, lens[k]);
            if (hw != sw)
                fprintf(stderr, "offset %zu length %zu: %08x != %08x\n", off, lens[k], hw, sw);
            CHECK_EQ(hw, sw);
        }
    }
    uint32_t whole = tio_crc32c(0, b, n);
    for (size_t cut = 0; cut <= n; cut += 977) {
        CHECK_EQ(tio_crc32c(tio_crc32c(0, b, cut), b + cut, n - cut), whole);
        CHECK_EQ(tio_crc32c_sw(tio_crc32c(0, b, cut), b + cut, n - cut), whole);
    }
    b[n / 2] ^= 1;
    CHECK(tio_crc32c(0, b, n) != whole);
    free(b);
}

/* A manifest of 3 ranks: rank 0 two files, rank 1 none, rank 2 one. */
static char *sample(size_t *len)
{
    char lines[1024];
    size_t n = 0;
    n += (size_t)tio_manifest_line(lines + n, sizeof lines - n, 0, 1000, 0xdeadbeef, "state");
    n += (size_t)tio_manifest_line(lines + n, sizeof lines - n, 0, 0, 0, "empty.bin");
    n += (size_t)tio_manifest_line(lines + n, sizeof lines - n, 2, 123456789012ull, 0x01020304,
                                   "state");
    char *t = NULL;
    struct tio_err e;
    tio_err_clear(&e);
    CHECK_EQ(tio_manifest_build("sim-1", 42, 3, lines, n, &t, len, &e), TIO_OK);
    return t;
}

static void test_manifest_roundtrip(void)
{
    CASE("manifest round trip");
    size_t len;
    char *t = sample(&len);
    struct tio_manifest m;
    struct tio_err e;
    tio_err_clear(&e);
    CHECK_EQ(tio_manifest_parse(t, len, &m, &e), TIO_OK);
    CHECK(!strcmp(m.set, "sim-1"));
    CHECK_EQ(m.version, 42);
    CHECK_EQ(m.nranks, 3);
    CHECK_EQ(m.nfiles, 3);
    CHECK_EQ(m.first[0], 0);
    CHECK_EQ(m.first[1], 2);
    CHECK_EQ(m.first[2], 2);
    CHECK_EQ(m.first[3], 3);
    const struct tio_manifest_file *f = tio_manifest_find(&m, 2, "state");
    CHECK(f && f->size == 123456789012ull && f->crc == 0x01020304u && f->rank == 2);
    f = tio_manifest_find(&m, 0, "empty.bin");
    CHECK(f && f->size == 0);
    CHECK(tio_manifest_find(&m, 1, "state") == NULL);
    CHECK(tio_manifest_find(&m, 3, "state") == NULL);
    CHECK(tio_manifest_find(&m, -1, "state") == NULL);
    tio_manifest_free(&m);
    free(t);
}

static void test_manifest_damage(void)
{
    CASE("manifest: every flipped byte and every truncation is rejected");
    size_t len;
    char *t = sample(&len);
    char *c = malloc(len);
    struct tio_manifest m;
    struct tio_err e;
    for (size_t i = 0; i < len; i++) {
        for (int bit = 0; bit < 8; bit++) {
            memcpy(c, t, len);
            c[i] ^= (char)(1 << bit);
            tio_err_clear(&e);
            if (tio_manifest_parse(c, len, &m, &e) == TIO_OK) {
                fprintf(stderr, "byte %zu bit %d flipped: accepted\n", i, bit);
                CHECK(0);
            }
            CHECK(m.files == NULL && m.first == NULL);
        }
    }
    for (size_t l = 0; l < len; l++) {
        tio_err_clear(&e);
        CHECK(tio_manifest_parse(t, l, &m, &e) != TIO_OK);
        CHECK(e.msg[0]);
    }
    free(c);
    free(t);
}

/* A text with a correct checksum line over any body. */
static char *with_sum(const char *body, size_t *len)
{
    size_t n = strlen(body);
    char *t = malloc(n + 32);
    memcpy(t, body, n);
    *len = n + (size_t)snprintf(t + n, 32, "end %08" PRIx32 "\n", tio_crc32c(0, body, n));
    return t;
}

static void test_manifest_malformed(void)
{
    CASE("manifest: malformed content with a valid checksum is rejected");
    static const char *const bad[] = {
        "tierio-checkpoint 2\nset a\nversion 1\nranks 1\nfiles 0\n",
        "tierio-checkpoint 1\nset a/b\nversion 1\nranks 1\nfiles 0\n",
        "tierio-checkpoint 1\nset a\nversion -1\nranks 1\nfiles 0\n",
        "tierio-checkpoint 1\nset a\nversion 01\nranks 1\nfiles 0\n",
        "tierio-checkpoint 1\nset a\nversion 1\nranks 0\nfiles 0\n",
        "tierio-checkpoint 1\nset a\nversion 1\nranks 1\nfiles 1\n",
        "tierio-checkpoint 1\nset a\nversion 1\nranks 1\nfiles 0\nf 0 1 00000000 x\n",
        "tierio-checkpoint 1\nset a\nversion 1\nranks 1\nfiles 1\nf 1 1 00000000 x\n",
        "tierio-checkpoint 1\nset a\nversion 1\nranks 2\nfiles 2\nf 1 1 00000000 x\n"
        "f 0 1 00000000 x\n",
        "tierio-checkpoint 1\nset a\nversion 1\nranks 1\nfiles 2\nf 0 1 00000000 x\n"
        "f 0 2 00000000 x\n",
        "tierio-checkpoint 1\nset a\nversion 1\nranks 1\nfiles 1\nf 0 1 0000000 x\n",
        "tierio-checkpoint 1\nset a\nversion 1\nranks 1\nfiles 1\nf 0 1 0000000G x\n",
        "tierio-checkpoint 1\nset a\nversion 1\nranks 1\nfiles 1\nf 0 1 00000000 ../x\n",
        "tierio-checkpoint 1\nset a\nversion 1\nranks 1\nfiles 1\nf 0 1 00000000 x y\n",
        "tierio-checkpoint 1\nset a\nversion 1\nranks 1\nfiles 1\nf 0 99999999999999999999 "
        "00000000 x\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        size_t len;
        char *t = with_sum(bad[i], &len);
        struct tio_manifest m;
        struct tio_err e;
        tio_err_clear(&e);
        if (tio_manifest_parse(t, len, &m, &e) == TIO_OK) {
            fprintf(stderr, "accepted: %s", bad[i]);
            CHECK(0);
        }
        free(t);
    }
    size_t len;
    char *t = with_sum("tierio-checkpoint 1\nset a\nversion 0\nranks 2\nfiles 1\n"
                       "f 1 0 00000000 x\n", &len);
    struct tio_manifest m;
    struct tio_err e;
    tio_err_clear(&e);
    CHECK_EQ(tio_manifest_parse(t, len, &m, &e), TIO_OK);
    CHECK_EQ(m.first[1], 0);
    CHECK_EQ(m.first[2], 1);
    tio_manifest_free(&m);
    free(t);
}

static void test_names(void)
{
    CASE("names");
    struct tio_err e;
    const char *good[] = {"a", "state.0", "A-b_c.d", "0123456789012345678901234567890123456789"
                          "012345678901234567890123"};
    const char *badn[] = {"", ".hidden", "a/b", "a b", "..", "x\n", "é",
                          "01234567890123456789012345678901234567890123456789012345678901234"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        tio_err_clear(&e);
        CHECK_EQ(tio_ckpt_check_name(good[i], "file", &e), TIO_OK);
    }
    for (size_t i = 0; i < sizeof badn / sizeof *badn; i++) {
        tio_err_clear(&e);
        CHECK_EQ(tio_ckpt_check_name(badn[i], "file", &e), TIO_E_ARG);
        CHECK_HAS(e.msg, "file");
    }
    tio_err_clear(&e);
    CHECK_EQ(tio_ckpt_check_name(NULL, "file", &e), TIO_E_ARG);
}

/* Make <set>/v<v> with a file, and a manifest when complete. */
static void make_version(const char *set, long long v, int complete)
{
    char vdir[4096], p[4200];
    struct tio_err e;
    tio_err_clear(&e);
    snprintf(vdir, sizeof vdir, "%s/v%lld", set, v);
    CHECK_EQ(tio_ckpt_mkdirs(vdir, &e), TIO_OK);
    snprintf(p, sizeof p, "%s/r0.state", vdir);
    tt_write_file(p, "data", 4);
    if (complete) {
        size_t len;
        char *t = sample(&len);
        CHECK_EQ(tio_manifest_write(vdir, t, len, &e), TIO_OK);
        free(t);
    }
}

static int exists_v(const char *set, long long v)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/v%lld", set, v);
    struct stat st;
    return stat(p, &st) == 0;
}

static void test_store_versions(void)
{
    CASE("store: newest version, prune, remove_from");
    const char *d = tt_tmpdir("ckpt-store");
    char set[4096];
    snprintf(set, sizeof set, "%s/deep/er/set", d);
    CHECK_EQ(tio_ckpt_newest_version(set, LLONG_MAX), -1); /* no directory: none */
    make_version(set, 1, 1);
    make_version(set, 2, 0);
    make_version(set, 3, 1);
    make_version(set, 10, 1);
    make_version(set, 11, 0);
    char junk[4200];
    snprintf(junk, sizeof junk, "%s/vx", set);
    CHECK_OK(mkdir(junk, 0755)); /* not a version: ignored, never removed */
    CHECK_EQ(tio_ckpt_newest_version(set, LLONG_MAX), 10);
    CHECK_EQ(tio_ckpt_newest_version(set, 10), 3);
    CHECK_EQ(tio_ckpt_newest_version(set, 3), 1);
    CHECK_EQ(tio_ckpt_newest_version(set, 1), -1);
    /* the manifest file written atomically: no temporary left */
    char vdir[4200];
    snprintf(vdir, sizeof vdir, "%s/v10", set);
    CHECK_EQ(tc_count_entries(vdir), 2);

    struct tio_err e;
    tio_err_clear(&e);
    /* keep 2 complete (10, 3); 1 goes; incomplete 2 goes (older than 10); 11 stays
     * (incomplete but newest: maybe in progress); 3 protected would stay anyway */
    CHECK_EQ(tio_ckpt_prune(set, 2, -1, &e), TIO_OK);
    CHECK(!exists_v(set, 1) && !exists_v(set, 2));
    CHECK(exists_v(set, 3) && exists_v(set, 10) && exists_v(set, 11));
    CHECK_EQ(tio_ckpt_prune(set, 1, 3, &e), TIO_OK); /* 3 is being drained: kept */
    CHECK(exists_v(set, 3) && exists_v(set, 10));
    CHECK_EQ(tio_ckpt_prune(set, 1, -1, &e), TIO_OK);
    CHECK(!exists_v(set, 3) && exists_v(set, 10) && exists_v(set, 11));
    CHECK(tt_file_size(junk) >= 0);
    make_version(set, 12, 1);
    CHECK_EQ(tio_ckpt_remove_from(set, 11, &e), TIO_OK);
    CHECK(exists_v(set, 10) && !exists_v(set, 11) && !exists_v(set, 12));
    CHECK_EQ(tio_ckpt_remove_version(set, 99, &e), TIO_OK); /* missing: fine */
    CHECK_EQ(tio_ckpt_remove_version(set, 10, &e), TIO_OK);
    CHECK_EQ(tc_count_entries(set), 1); /* only vx */
}

static void test_store_files(void)
{
    CASE("store: sums, matches, copies");
    const char *d = tt_tmpdir("ckpt-files");
    char a[4200], b[4200], sub[4200];
    size_t n = (9u << 20) + 5; /* more than two I/O chunks */
    unsigned char *buf = malloc(n);
    tt_fill(buf, n, 3);
    snprintf(a, sizeof a, "%s/a", d);
    snprintf(b, sizeof b, "%s/b", d);
    tt_write_file(a, buf, n);
    uint64_t size;
    uint32_t crc;
    struct tio_err e;
    tio_err_clear(&e);
    CHECK_EQ(tio_ckpt_file_sum(a, 1, &size, &crc, &e), TIO_OK);
    CHECK_EQ(size, n);
    CHECK_EQ(crc, tio_crc32c(0, buf, n));
    CHECK_EQ(tio_ckpt_file_matches(a, n, crc, &e), 1);

    tio_err_clear(&e);
    CHECK_EQ(tio_ckpt_file_matches(a, n, crc ^ 1, &e), 0);
    CHECK_HAS(e.msg, "does not match the manifest");
    tio_err_clear(&e);
    CHECK_EQ(tio_ckpt_file_matches(a, n - 1, crc, &e), 0);
    CHECK_HAS(e.msg, "bytes, the manifest says");
    tio_err_clear(&e);
    CHECK_EQ(tio_ckpt_file_matches(b, n, crc, &e), 0);
    CHECK_EQ(e.cls, TIO_E_NOENT);

    tio_err_clear(&e);
    CHECK_EQ(tio_ckpt_copy_file(a, b, n, crc, &e), TIO_OK);
    CHECK_EQ(tt_file_size(b), (off_t)n);
    unsigned char *got = malloc(n);
    CHECK(tt_pread_file(b, got, n, 0) == (ssize_t)n);
    CHECK_BYTES(got, buf, n);
    /* a source that changed since it was summed: error, and no half-made copy */
    unlink(b);
    buf[n - 1] ^= 0x40;
    tt_write_file(a, buf, n);
    tio_err_clear(&e);
    CHECK(tio_ckpt_copy_file(a, b, n, crc, &e) != TIO_OK);
    CHECK_HAS(e.msg, "changed since it was checkpointed");
    CHECK(tt_file_size(b) < 0);
    /* a destination that cannot be created */
    snprintf(sub, sizeof sub, "%s/nodir/b", d);
    tio_err_clear(&e);
    CHECK_EQ(tio_ckpt_copy_file(a, sub, n, tio_crc32c(0, buf, n), &e), TIO_E_NOENT);
    CHECK_HAS(e.msg, "nodir");
    /* mkdirs over a file */
    tio_err_clear(&e);
    snprintf(sub, sizeof sub, "%s/a/x", d);
    CHECK(tio_ckpt_mkdirs(sub, &e) != TIO_OK);
    CHECK_HAS(e.msg, "not a directory");
    free(got);
    free(buf);
}

int main(void)
{
    test_crc_known();
    test_crc_forms();
    test_manifest_roundtrip();
    test_manifest_damage();
    test_manifest_malformed();
    test_names();
    test_store_versions();
    test_store_files();
    printf("test_ckpt_unit: passed\n");
    return 0;
}
