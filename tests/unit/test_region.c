/* tio_region_create / sync / destroy (win/region.c): how a window of `size` bytes is split
 * between memory and a file region (storage_alloc_factor 0, 1, fractions, auto; both
 * storage_alloc_order values), byte for byte in the file at the right offsets, and that
 * destroy honours storage_alloc_unlink and storage_alloc_discard. */
#include <sys/mman.h>

#include "check.h"
#include "win/region.h"

#define P 4096u

static struct tio_hints storage_hints(const char *path, uint64_t off, double factor,
                                      enum tio_alloc_order order)
{
    struct tio_hints h;
    tio_hints_default(&h);
    h.alloc_type = TIO_ALLOC_STORAGE;
    h.storage_keys_seen = 1;
    snprintf(h.filename, sizeof h.filename, "%s", path);
    h.offset = off;
    h.factor = factor;
    h.order = order;
    return h;
}

/* The /proc/self/maps line of the mapping that holds addr ("" if none). */
static void maps_line_for(const void *addr, char *out, size_t n)
{
    FILE *f = fopen("/proc/self/maps", "re");
    char line[8192];
    out[0] = 0;
    CHECK(f != NULL);
    while (fgets(line, sizeof line, f)) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx", &a, &b) == 2 && (uintptr_t)addr >= a &&
            (uintptr_t)addr < b) {
            snprintf(out, n, "%s", line);
            break;
        }
    }
    fclose(f);
}

/* Every page of [p, p+len) is (want_file) or is not (!want_file) a mapping of path. */
static void check_backing(const char *p, size_t len, const char *path, int want_file)
{
    char line[8192];
    for (size_t o = 0; o < len; o += P) {
        maps_line_for(p + o, line, sizeof line);
        CHECK(line[0] != 0);
        if (want_file)
            CHECK_HAS(line, path);
        else
            CHECK(strstr(line, path) == NULL);
    }
    if (len) { /* and the last byte */
        maps_line_for(p + len - 1, line, sizeof line);
        CHECK(want_file ? strstr(line, path) != NULL : strstr(line, path) == NULL);
    }
}

struct split_case {
    const char *name;
    size_t size;
    uint64_t offset;
    double factor;      /* < 0: auto */
    uint64_t budget;    /* for auto */
    enum tio_alloc_order order;
    size_t sto;         /* bytes expected on storage (hand-computed, page size 4096) */
};

static void run_split(const char *dir, const struct split_case *c, int idx)
{
    struct tio_region r;
    struct tio_err err;
    char path[4200];
    static unsigned char back[1 << 20], zero[1 << 16];
    CASE(c->name);
    snprintf(path, sizeof path, "%s/split-%d.dat", dir, idx);
    struct tio_hints h = storage_hints(path, c->offset, c->factor < 0 ? 1.0 : c->factor,
                                       c->order);
    h.factor_auto = c->factor < 0;
    h.unlink = 1;
    tio_err_clear(&err);
    int maps0 = tc_maps_count(NULL);
    CHECK_EQ(tio_region_create(&r, c->size, &h, c->budget, &err), TIO_OK);
    CHECK_EQ(err.cls, TIO_OK);
    CHECK(r.base != NULL);
    CHECK_EQ(r.size, c->size);
    CHECK_EQ(r.has_file, c->sto > 0);
    CHECK(r.factor == (double)c->sto / (double)c->size);
    if (c->sto == 0) {
        CHECK_EQ(access(path, F_OK), -1); /* no file is touched */
        check_backing(r.base, c->size, path, 0);
        memset(r.base, 0x77, c->size);
    } else {
        const size_t mem = c->size - c->sto;
        char *sto_part = c->order == TIO_ORDER_STORAGE_FIRST ? r.base : r.base + mem;
        char *mem_part = c->order == TIO_ORDER_STORAGE_FIRST ? r.base + c->sto : r.base;
        CHECK_EQ(tt_file_size(path), c->offset + c->sto); /* memory part not in the file */
        CHECK(r.sync_addr == sto_part);
        CHECK_EQ(r.sync_len, c->sto);
        check_backing(sto_part, c->sto, path, 1);
        check_backing(mem_part, mem, path, 0);
        /* new file: the window reads as zeros */
        for (size_t i = 0; i < c->size; i++)
            CHECK_EQ(r.base[i], 0);
        tt_fill(r.base, c->size, (unsigned)idx);
        CHECK_EQ(tio_region_sync(&r, &err), TIO_OK);
        CHECK_EQ(tt_file_size(path), c->offset + c->sto);
        CHECK(tt_pread_file(path, back, c->sto, (off_t)c->offset) == (ssize_t)c->sto);
        CHECK_BYTES(back, sto_part, c->sto);
        CHECK(c->offset <= sizeof zero);
        CHECK(tt_pread_file(path, back, c->offset, 0) == (ssize_t)c->offset);
        CHECK_BYTES(back, zero, c->offset); /* nothing before the offset */
    }
    char *base = r.base;
    CHECK_EQ(tio_region_destroy(&r, &err), TIO_OK);
    CHECK_EQ(access(path, F_OK), -1); /* unlink */
    CHECK_EQ(tt_is_mapped(base, c->size ? c->size : 1), 0);
    CHECK_EQ(tc_maps_count(path), 0);
    CHECK_EQ(tc_maps_count(NULL), maps0);
}

static void test_splits(const char *dir)
{
    const size_t S = 10 * P + 100; /* 41060: not a page multiple */
    const struct split_case cases[] = {
        {"factor 1, memory_first", S, 0, 1.0, 0, TIO_ORDER_MEMORY_FIRST, S},
        {"factor 1, storage_first, offset 1000", S, 1000, 1.0, 0, TIO_ORDER_STORAGE_FIRST, S},
        {"factor 1, memory_first, offset 123", S, 123, 1.0, 0, TIO_ORDER_MEMORY_FIRST, S},
        {"factor 0, memory_first", S, 0, 0.0, 0, TIO_ORDER_MEMORY_FIRST, 0},
        {"factor 0, storage_first", S, 0, 0.0, 0, TIO_ORDER_STORAGE_FIRST, 0},
        {"factor 0, memory_first, offset 123", S, 123, 0.0, 0, TIO_ORDER_MEMORY_FIRST, 0},
        /* memory part = round_down(S - S/2, page) = 20480: storage gets at least half */
        {"factor 0.5, memory_first", S, 0, 0.5, 0, TIO_ORDER_MEMORY_FIRST, 20580},
        /* storage part = round_up(S/2, page) */
        {"factor 0.5, storage_first", S, 0, 0.5, 0, TIO_ORDER_STORAGE_FIRST, 24576},
        /* storage part ends on a page boundary: round_up(1000 + 20530) - 1000 */
        {"factor 0.5, storage_first, offset 1000", S, 1000, 0.5, 0, TIO_ORDER_STORAGE_FIRST,
         23576},
        {"factor 0.5, memory_first, aligned size", 8 * P, 0, 0.5, 0, TIO_ORDER_MEMORY_FIRST,
         4 * P},
        {"factor 0.5, storage_first, aligned size", 8 * P, 0, 0.5, 0,
         TIO_ORDER_STORAGE_FIRST, 4 * P},
        /* memory part = round_down(41060 - 10265) = 28672 */
        {"factor 0.25, memory_first, offset 8192", S, 8192, 0.25, 0, TIO_ORDER_MEMORY_FIRST,
         12388},
        /* round_up(17 + 10265) - 17 */
        {"factor 0.25, storage_first, offset 12305", S, 3 * P + 17, 0.25, 0,
         TIO_ORDER_STORAGE_FIRST, 12271},
        /* auto: the budget stays in memory */
        {"auto, memory_first, budget 2 pages", S, 0, -1, 2 * P, TIO_ORDER_MEMORY_FIRST,
         S - 2 * P},
        {"auto, storage_first, budget 3 pages + 5, offset 100", S, 100, -1, 3 * P + 5,
         TIO_ORDER_STORAGE_FIRST, 32668},
        {"auto, budget covers the window", S, 0, -1, 1 << 30, TIO_ORDER_MEMORY_FIRST, 0},
        {"auto, budget 0", S, 0, -1, 0, TIO_ORDER_STORAGE_FIRST, S},
        {"auto, budget 0, memory_first", S, 0, -1, 0, TIO_ORDER_MEMORY_FIRST, S},
        {"factor 1, one byte", 1, 0, 1.0, 0, TIO_ORDER_MEMORY_FIRST, 1},
        {"factor 1, 1 MiB, offset 4097", 1 << 20, 4097, 1.0, 0, TIO_ORDER_STORAGE_FIRST,
         1 << 20},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_split(dir, &cases[i], (int)i);
}

static void test_invalid_offset(const char *dir)
{
    struct tio_region r;
    struct tio_err err;
    char path[4200];
    CASE("memory_first with an unaligned offset");
    snprintf(path, sizeof path, "%s/unaligned.dat", dir);
    const uint64_t offs[] = {1, 16, 100, P + 8, 2 * P - 1};
    for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++) {
        struct tio_hints h = storage_hints(path, offs[i], 0.5, TIO_ORDER_MEMORY_FIRST);
        int maps0 = tc_maps_count(NULL);
        tio_err_clear(&err);
        CHECK_EQ(tio_region_create(&r, 8 * P, &h, 0, &err), TIO_E_INFO_VALUE);
        CHECK_EQ(err.cls, TIO_E_INFO_VALUE);
        char want[64];
        snprintf(want, sizeof want, "storage_alloc_offset=%llu", (unsigned long long)offs[i]);
        CHECK_HAS(err.msg, want);
        CHECK_HAS(err.msg, "memory_first");
        CHECK_EQ(access(path, F_OK), -1);
        CHECK_EQ(tc_maps_count(NULL), maps0);
        /* auto with a budget that splits the window: the same rule */
        h.factor_auto = 1;
        tio_err_clear(&err);
        CHECK_EQ(tio_region_create(&r, 8 * P, &h, 3 * P, &err), TIO_E_INFO_VALUE);
        CHECK_HAS(err.msg, "storage_alloc_offset");
        CHECK_EQ(access(path, F_OK), -1);
    }
    /* a page-multiple offset is fine */
    struct tio_hints h = storage_hints(path, 3 * P, 0.5, TIO_ORDER_MEMORY_FIRST);
    h.unlink = 1;
    tio_err_clear(&err);
    CHECK_EQ(tio_region_create(&r, 8 * P, &h, 0, &err), TIO_OK);
    CHECK_EQ(tio_region_destroy(&r, &err), TIO_OK);
    CHECK_EQ(access(path, F_OK), -1);
}

static void test_size0(const char *dir)
{
    struct tio_region r;
    struct tio_err err;
    char path[4200];
    const enum tio_alloc_order orders[] = {TIO_ORDER_MEMORY_FIRST, TIO_ORDER_STORAGE_FIRST};
    const double factors[] = {1.0, 0.5, 0.0, -1};
    snprintf(path, sizeof path, "%s/size0.dat", dir);
    for (int o = 0; o < 2; o++)
        for (int f = 0; f < 4; f++) {
            char label[64];
            snprintf(label, sizeof label, "size 0, factor %g, order %d", factors[f], o);
            CASE(label);
            struct tio_hints h =
                storage_hints(path, 100, factors[f] < 0 ? 1 : factors[f], orders[o]);
            h.factor_auto = factors[f] < 0;
            h.unlink = 1;
            int maps0 = tc_maps_count(NULL);
            tio_err_clear(&err);
            CHECK_EQ(tio_region_create(&r, 0, &h, 4096, &err), TIO_OK);
            CHECK(r.base != NULL);
            CHECK_EQ(r.size, 0);
            CHECK_EQ(tio_region_sync(&r, &err), TIO_OK);
            CHECK_EQ(tio_region_destroy(&r, &err), TIO_OK);
            CHECK_EQ(access(path, F_OK), -1);
            CHECK_EQ(tc_maps_count(NULL), maps0);
        }
}

static void test_existing_content(const char *dir)
{
    struct tio_region r;
    struct tio_err err;
    char path[4200];
    static unsigned char pat[16 * 4096];
    CASE("existing file content shows in the storage part");
    snprintf(path, sizeof path, "%s/existing.dat", dir);
    tt_fill(pat, sizeof pat, 9);
    tt_write_file(path, pat, sizeof pat);
    struct tio_hints h = storage_hints(path, P + 3, 0.5, TIO_ORDER_STORAGE_FIRST);
    tio_err_clear(&err);
    CHECK_EQ(tio_region_create(&r, 8 * P, &h, 0, &err), TIO_OK);
    /* round_up(3 + 4P) - 3 */
    CHECK_EQ(r.sync_len, 5 * P - 3);
    CHECK_BYTES(r.base, pat + P + 3, 5 * P - 3);
    for (size_t i = 5 * P - 3; i < 8 * P; i++)
        CHECK_EQ(r.base[i], 0);
    CHECK_EQ(tio_region_destroy(&r, &err), TIO_OK);
    CHECK_EQ(tt_file_size(path), sizeof pat); /* not shortened, not removed */
    static unsigned char back[sizeof pat];
    CHECK(tt_pread_file(path, back, sizeof pat, 0) == (ssize_t)sizeof pat);
    CHECK_BYTES(back, pat, sizeof pat);
    unlink(path);
}

/* destroy: sync unless discard; remove the file with unlink. */
static void test_destroy(const char *dir)
{
    struct tio_region r;
    struct tio_err err;
    char path[4200];
    static unsigned char pat[16 * 4096], back[16 * 4096], zero[16 * 4096];
    const size_t S = 6 * P + 10;
    snprintf(path, sizeof path, "%s/destroy.dat", dir);
    const double factors[] = {1.0, 0.5};
    const enum tio_alloc_order orders[] = {TIO_ORDER_MEMORY_FIRST, TIO_ORDER_STORAGE_FIRST};
    for (int fi = 0; fi < 2; fi++)
        for (int oi = 0; oi < 2; oi++) {
            const uint64_t off = orders[oi] == TIO_ORDER_STORAGE_FIRST ? 777 : 2 * P;
            char label[96];

            snprintf(label, sizeof label, "destroy writes back (factor %g, order %d)",
                     factors[fi], oi);
            CASE(label);
            struct tio_hints h = storage_hints(path, off, factors[fi], orders[oi]);
            tio_err_clear(&err);
            CHECK_EQ(tio_region_create(&r, S, &h, 0, &err), TIO_OK);
            char *sp = r.sync_addr;
            size_t sl = r.sync_len;
            tt_fill(r.base, S, 11);
            memcpy(pat, sp, sl);
            CHECK_EQ(tio_region_destroy(&r, &err), TIO_OK); /* no explicit sync */
            CHECK_EQ(tt_file_size(path), off + sl);
            CHECK(tt_pread_file(path, back, sl, (off_t)off) == (ssize_t)sl);
            CHECK_BYTES(back, pat, sl);
            CHECK_EQ(tc_maps_count(path), 0);

            snprintf(label, sizeof label, "discard (factor %g, order %d)", factors[fi], oi);
            CASE(label);
            h.discard = 1;
            tio_err_clear(&err);
            CHECK_EQ(tio_region_create(&r, S, &h, 0, &err), TIO_OK);
            CHECK_EQ(r.fm.private_map, 1);
            CHECK(r.sync_len == sl);
            CHECK_BYTES(r.sync_addr, pat, sl); /* sees the file */
            memset(r.base, 0xEE, S);
            CHECK_EQ(tio_region_destroy(&r, &err), TIO_OK);
            CHECK(tt_pread_file(path, back, sl, (off_t)off) == (ssize_t)sl);
            CHECK_BYTES(back, pat, sl); /* nothing written */

            snprintf(label, sizeof label, "discard + explicit sync (factor %g, order %d)",
                     factors[fi], oi);
            CASE(label);
            tio_err_clear(&err);
            CHECK_EQ(tio_region_create(&r, S, &h, 0, &err), TIO_OK);
            tt_fill(r.base, S, 12);
            memcpy(pat, r.sync_addr, sl);
            CHECK_EQ(tio_region_sync(&r, &err), TIO_OK);
            CHECK(tt_pread_file(path, back, sl, (off_t)off) == (ssize_t)sl);
            CHECK_BYTES(back, pat, sl);
            CHECK_BYTES(r.sync_addr, pat, sl);
            memset(r.base, 0xDD, S); /* after the sync: dropped */
            CHECK_EQ(tio_region_destroy(&r, &err), TIO_OK);
            CHECK(tt_pread_file(path, back, sl, (off_t)off) == (ssize_t)sl);
            CHECK_BYTES(back, pat, sl);
            CHECK(tt_pread_file(path, back, off, 0) == (ssize_t)off);
            CHECK_BYTES(back, zero, off);

            snprintf(label, sizeof label, "unlink (factor %g, order %d)", factors[fi], oi);
            CASE(label);
            h.discard = 0;
            h.unlink = 1;
            tio_err_clear(&err);
            CHECK_EQ(tio_region_create(&r, S, &h, 0, &err), TIO_OK);
            CHECK_EQ(r.fm.created, 0); /* it exists from the cases above */
            CHECK_EQ(tio_region_destroy(&r, &err), TIO_OK);
            CHECK_EQ(access(path, F_OK), -1);
            CHECK_EQ(tc_maps_count(path), 0);
        }
}

/* A process that asked for memory (alloc_type=memory, or no alloc_type) in a window where
 * others asked for storage still goes through tio_region_create: all memory, no file,
 * whatever other storage hints it gave (found by err_consistency_mixed). */
static void test_memory_alloc_type(const char *dir)
{
    struct tio_region r;
    struct tio_err err;
    char path[4200];
    snprintf(path, sizeof path, "%s/not-for-memory.dat", dir);
    for (int k = 0; k < 3; k++) {
        CASE(k == 0 ? "alloc_type=memory, no other hint"
                    : k == 1 ? "alloc_type=memory with storage hints"
                             : "alloc_type=memory with factor auto");
        struct tio_hints h;
        tio_hints_default(&h);
        if (k > 0) {
            h.storage_keys_seen = 1;
            snprintf(h.filename, sizeof h.filename, "%s", path);
            h.factor = 0.5;
            h.order = TIO_ORDER_STORAGE_FIRST;
            h.offset = 100;
            h.factor_auto = k == 2;
        }
        int maps0 = tc_maps_count(NULL);
        tio_err_clear(&err);
        CHECK_EQ(tio_region_create(&r, 5 * P + 7, &h, 0, &err), TIO_OK);
        CHECK_EQ(r.has_file, 0);
        CHECK(r.factor == 0.0);
        CHECK_EQ(access(path, F_OK), -1);
        check_backing(r.base, 5 * P + 7, path, 0);
        memset(r.base, 1, 5 * P + 7);
        CHECK_EQ(tio_region_sync(&r, &err), TIO_OK);
        CHECK_EQ(tio_region_destroy(&r, &err), TIO_OK);
        CHECK_EQ(tc_maps_count(NULL), maps0);
    }
}

static void test_errors(const char *dir)
{
    struct tio_region r;
    struct tio_err err;
    char path[4200];
    const double factors[] = {1.0, 0.5};
    for (int i = 0; i < 2; i++) {
        CASE(i ? "nonexistent directory, factor 0.5" : "nonexistent directory, factor 1");
        snprintf(path, sizeof path, "%s/missing/f.dat", dir);
        struct tio_hints h = storage_hints(path, 0, factors[i], TIO_ORDER_STORAGE_FIRST);
        int maps0 = tc_maps_count(NULL);
        tio_err_clear(&err);
        CHECK_EQ(tio_region_create(&r, 8 * P, &h, 0, &err), TIO_E_NOENT);
        CHECK_HAS(err.msg, path);
        CHECK_EQ(tc_maps_count(NULL), maps0);

        CASE(i ? "too big to reserve, factor 0.5" : "too big to reserve, factor 1");
        snprintf(path, sizeof path, "%s/huge.dat", dir);
        h = storage_hints(path, 0, factors[i], TIO_ORDER_MEMORY_FIRST);
        tio_err_clear(&err);
        CHECK_EQ(tio_region_create(&r, (size_t)1 << 51, &h, 0, &err), TIO_E_NOSPACE);
        CHECK_HAS(err.msg, path);
        CHECK_HAS(err.msg, "reserve");
        CHECK_EQ(access(path, F_OK), -1);
        CHECK_EQ(tc_maps_count(NULL), maps0);
    }
}

int main(void)
{
    if (tio_page_size() != P) {
        printf("skipped: the expected splits are computed for 4 KiB pages\n");
        return 77;
    }
    const char *dir = tt_tmpdir("region");
    test_splits(dir);
    test_invalid_offset(dir);
    test_size0(dir);
    test_existing_content(dir);
    test_destroy(dir);
    test_memory_alloc_type(dir);
    test_errors(dir);
    CHECK_EQ(tc_count_entries(dir), 0);
    printf("test_region: all checks passed\n");
    return 0;
}
