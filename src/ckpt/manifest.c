#include "ckpt/manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt/crc32c.h"
#include "util/fileio.h"

#define MAGIC "tierio-checkpoint 1\n"
#define MAX_MANIFEST (256u << 20) /* refuse to read anything larger */

int tio_manifest_line(char *buf, size_t len, int rank, uint64_t size, uint32_t crc,
                      const char *name)
{
    int n = snprintf(buf, len, "f %d %" PRIu64 " %08" PRIx32 " %s\n", rank, size, crc, name);
    return n >= 0 && (size_t)n < len ? n : -1;
}

int tio_manifest_build(const char *set, long long version, int nranks, const char *lines,
                       size_t lines_len, char **text, size_t *text_len, struct tio_err *err)
{
    long long nfiles = 0;
    for (size_t i = 0; i < lines_len; i++)
        nfiles += lines[i] == '\n';
    char head[256];
    int hl = snprintf(head, sizeof head, MAGIC "set %s\nversion %lld\nranks %d\nfiles %lld\n",
                      set, version, nranks, nfiles);
    if (hl < 0 || (size_t)hl >= sizeof head)
        return tio_err_set(err, TIO_E_ARG, "manifest header does not fit");
    size_t total = (size_t)hl + lines_len + 16;
    char *t = malloc(total);
    if (!t)
        return tio_err_set(err, TIO_E_NOMEM, "out of memory building a manifest of %zu bytes",
                           total);
    memcpy(t, head, (size_t)hl);
    memcpy(t + hl, lines, lines_len);
    size_t body = (size_t)hl + lines_len;
    uint32_t c = tio_crc32c(0, t, body);
    int tl = snprintf(t + body, total - body, "end %08" PRIx32 "\n", c);
    *text = t;
    *text_len = body + (size_t)tl;
    return TIO_OK;
}

void tio_manifest_free(struct tio_manifest *m)
{
    free(m->files);
    free(m->first);
    memset(m, 0, sizeof *m);
}

/* Cursor over the text: one line at a time. */
struct cur {
    const char *p, *end;
    int line;
};

static int next_line(struct cur *c, char *out, size_t len)
{
    const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
    if (!nl)
        return -1;
    size_t n = (size_t)(nl - c->p);
    if (n >= len || memchr(c->p, 0, n))
        return -1; /* too long for any valid line, or a NUL inside: damaged */
    memcpy(out, c->p, n);
    out[n] = 0;
    c->p = nl + 1;
    c->line++;
    return 0;
}

/* Strict unsigned decimal (no sign, no spaces, no leading zeros but "0"). */
static int parse_dec(const char *s, unsigned long long max, unsigned long long *out)
{
    if (!*s || (s[0] == '0' && s[1]))
        return -1;
    unsigned long long v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        unsigned d = (unsigned)(*s - '0');
        if (d > max || v > (max - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static int parse_hex8(const char *s, uint32_t *out)
{
    uint32_t v = 0;
    for (int i = 0; i < 8; i++) {
        char c = s[i];
        unsigned d;
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else
            return -1;
        v = v << 4 | d;
    }
    if (s[8])
        return -1;
    *out = v;
    return 0;
}

/* "key value" with a decimal value. */
static int keyed(struct cur *c, const char *key, unsigned long long max, unsigned long long *v)
{
    char l[256];
    size_t kl = strlen(key);
    if (next_line(c, l, sizeof l) || strncmp(l, key, kl) || l[kl] != ' ')
        return -1;
    return parse_dec(l + kl + 1, max, v);
}

int tio_manifest_parse(const char *text, size_t len, struct tio_manifest *m,
                       struct tio_err *err)
{
    memset(m, 0, sizeof *m);
    /* The checksum line first: nothing of a damaged manifest is believed. */
    if (len < sizeof MAGIC + 13 || text[len - 1] != '\n')
        return tio_err_set(err, TIO_E_IO, "manifest is truncated (%zu bytes)", len);
    size_t last = len - 1;
    while (last > 0 && text[last - 1] != '\n')
        last--;
    uint32_t want, got;
    char tail[32];
    size_t tl = len - 1 - last;
    if (tl < 4 || tl >= sizeof tail || memcmp(text + last, "end ", 4) != 0)
        return tio_err_set(err, TIO_E_IO, "manifest has no checksum line (truncated?)");
    memcpy(tail, text + last + 4, tl - 4);
    tail[tl - 4] = 0;
    if (parse_hex8(tail, &want))
        return tio_err_set(err, TIO_E_IO, "manifest checksum line is malformed");
    got = tio_crc32c(0, text, last);
    if (got != want)
        return tio_err_set(err, TIO_E_IO,
                           "manifest is damaged: CRC-32C of its content is %08x, its last "
                           "line says %08x", got, want);

    struct cur c = {text, text + last, 0};
    char l[512];
    unsigned long long version, nranks, nfiles;
    struct tio_err ignore;
    tio_err_clear(&ignore);
    if (next_line(&c, l, sizeof l) || strcmp(l, "tierio-checkpoint 1"))
        return tio_err_set(err, TIO_E_IO, "not a tierio checkpoint manifest (version 1)");
    if (next_line(&c, l, sizeof l) || strncmp(l, "set ", 4) ||
        tio_ckpt_check_name(l + 4, "set", &ignore))
        return tio_err_set(err, TIO_E_IO, "manifest line 2 is not \"set <name>\"");
    tio_ckpt_copy_name(m->set, l + 4);
    if (keyed(&c, "version", LLONG_MAX, &version) || keyed(&c, "ranks", INT_MAX, &nranks) ||
        nranks == 0 || keyed(&c, "files", INT_MAX, &nfiles))
        return tio_err_set(err, TIO_E_IO, "manifest header is malformed (line %d)", c.line);
    m->version = (long long)version;
    m->nranks = (int)nranks;
    m->files = calloc(nfiles ? nfiles : 1, sizeof *m->files);
    m->first = calloc(nranks + 1, sizeof *m->first);
    if (!m->files || !m->first) {
        tio_manifest_free(m);
        return tio_err_set(err, TIO_E_NOMEM, "out of memory reading a manifest of %llu files",
                           nfiles);
    }
    int prev_rank = 0;
    for (unsigned long long i = 0; i < nfiles; i++) {
        struct tio_manifest_file *f = &m->files[i];
        char *tok[6], *save = NULL, *t;
        int nt = 0;
        if (next_line(&c, l, sizeof l))
            goto bad;
        for (char *s = l; nt < 6 && (t = strtok_r(s, " ", &save)) != NULL; s = NULL)
            tok[nt++] = t;
        unsigned long long rank, size;
        if (nt != 5 || strcmp(tok[0], "f") ||
            parse_dec(tok[1], nranks - 1, &rank) || parse_dec(tok[2], UINT64_MAX, &size) ||
            parse_hex8(tok[3], &f->crc) || tio_ckpt_check_name(tok[4], "file", &ignore))
            goto bad;
        if ((int)rank < prev_rank)
            goto bad;
        f->rank = (int)rank;
        f->size = size;
        tio_ckpt_copy_name(f->name, tok[4]);
        /* first[] of this rank and of the ranks in between (no files) point here. */
        for (int r = prev_rank + 1; r <= (int)rank; r++)
            m->first[r] = (int)i;
        prev_rank = (int)rank;
        for (int j = m->first[rank]; j < (int)i; j++)
            if (!strcmp(m->files[j].name, f->name))
                goto bad;
    }
    for (int r = prev_rank + 1; r <= m->nranks; r++)
        m->first[r] = (int)nfiles;
    if (c.p != c.end)
        goto bad;
    m->nfiles = (int)nfiles;
    return TIO_OK;
bad:
    tio_manifest_free(m);
    return tio_err_set(err, TIO_E_IO, "manifest file list is malformed at line %d", c.line);
}

const struct tio_manifest_file *tio_manifest_find(const struct tio_manifest *m, int rank,
                                                  const char *name)
{
    if (rank < 0 || rank >= m->nranks)
        return NULL;
    for (int i = m->first[rank]; i < m->first[rank + 1]; i++)
        if (!strcmp(m->files[i].name, name))
            return &m->files[i];
    return NULL;
}

int tio_manifest_write(const char *vdir, const char *text, size_t len, struct tio_err *err)
{
    char dst[PATH_MAX];
    int n = snprintf(dst, sizeof dst, "%s/" TIO_CKPT_MANIFEST, vdir);
    if (n < 0 || (size_t)n >= sizeof dst - 64) /* room for the temporary's suffix */
        return tio_err_set(err, TIO_E_ARG, "manifest path in \"%.200s\" is too long", vdir);
    return tio_replace_file(dst, text, len, 0644, err);
}

int tio_manifest_read(const char *vdir, char **text, size_t *len, struct tio_err *err)
{
    char p[PATH_MAX];
    int n = snprintf(p, sizeof p, "%s/" TIO_CKPT_MANIFEST, vdir);
    if (n < 0 || (size_t)n >= sizeof p)
        return tio_err_set(err, TIO_E_ARG, "manifest path in \"%.200s\" is too long", vdir);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return tio_err_errno(err, errno, "cannot open \"%s\"", p);
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_size < 0 || (uint64_t)st.st_size > MAX_MANIFEST) {
        close(fd);
        return tio_err_set(err, TIO_E_IO, "\"%s\" is not a plausible manifest (size)", p);
    }
    size_t sz = (size_t)st.st_size;
    char *t = malloc(sz + 1);
    if (!t) {
        close(fd);
        return tio_err_set(err, TIO_E_NOMEM, "out of memory reading \"%s\"", p);
    }
    size_t got = 0;
    while (got < sz) {
        ssize_t r = read(fd, t + got, sz - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    t[got] = 0;
    *text = t;
    *len = got;
    return TIO_OK;
}
