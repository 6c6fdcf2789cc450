/*
 * util.c: status names, the capped buffer, file helpers, SHA-256, clocks.
 * Everything here is pure or does short synchronous file I/O on small files
 * (settings, generated sources); nothing here may be used for large transfers
 * on the event loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "akg/akg.h"

const char *akg_strerror(int status)
{
    switch (status) {
    case AKG_OK:
        return "ok";
    case AKG_EINVAL:
        return "invalid argument";
    case AKG_ENOMEM:
        return "out of memory or buffer limit reached";
    case AKG_EIO:
        return "input/output error";
    case AKG_ENOTFOUND:
        return "not found";
    case AKG_EUNSUPPORTED:
        return "unsupported";
    case AKG_ESPAWN:
        return "could not start a child process";
    case AKG_ECANCELED:
        return "cancelled";
    case AKG_ETIMEDOUT:
        return "timed out";
    case AKG_EDB:
        return "store error";
    case AKG_EPARSE:
        return "parse error";
    case AKG_EBUSY:
        return "queue full";
    default:
        return "unknown error";
    }
}

int akg_fail(char *err, size_t errlen, int status, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return status;
}

void akg_buf_init(akg_buf *b, size_t limit)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->limit = limit ? limit : AKG_BUF_DEFAULT_LIMIT;
    b->failed = 0;
}

int akg_buf_status(const akg_buf *b)
{
    return b->failed ? AKG_ENOMEM : AKG_OK;
}

static int buf_reserve(akg_buf *b, size_t extra)
{
    if (b->failed)
        return AKG_ENOMEM;
    if (!b->limit)
        b->limit = AKG_BUF_DEFAULT_LIMIT;
    if (extra > b->limit || b->len > b->limit - extra) {
        b->failed = 1;
        return AKG_ENOMEM;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return AKG_OK;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        b->failed = 1;
        return AKG_ENOMEM;
    }
    b->data = p;
    b->cap = cap;
    return AKG_OK;
}

int akg_buf_append(akg_buf *b, const void *data, size_t len)
{
    int rc = buf_reserve(b, len);
    if (rc)
        return rc;
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return AKG_OK;
}

int akg_buf_puts(akg_buf *b, const char *s)
{
    return akg_buf_append(b, s, strlen(s));
}

int akg_buf_appendf(akg_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return AKG_EINVAL;
    }
    int rc = buf_reserve(b, (size_t)n);
    if (rc)
        return rc;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return AKG_OK;
}

void akg_buf_consume(akg_buf *b, size_t n)
{
    if (n >= b->len) {
        b->len = 0;
        if (b->data)
            b->data[0] = '\0';
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
    b->data[b->len] = '\0';
}

char *akg_buf_steal(akg_buf *b)
{
    char *p = b->data;
    if (!p)
        p = calloc(1, 1);
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

char *akg_buf_take(akg_buf *b)
{
    if (akg_buf_status(b)) {
        akg_buf_free(b);
        return NULL;
    }
    return akg_buf_steal(b);
}

void akg_buf_free(akg_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

char *akg_strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

int akg_read_file(const char *path, size_t limit, char **out, size_t *out_len, char *err,
                  size_t errlen)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return akg_fail(err, errlen, errno == ENOENT ? AKG_ENOTFOUND : AKG_EIO, "%s: %s", path,
                        strerror(errno));
    akg_buf b;
    akg_buf_init(&b, limit);
    char chunk[65536];
    size_t n;
    int rc = AKG_OK;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        rc = akg_buf_append(&b, chunk, n);
        if (rc) {
            akg_fail(err, errlen, rc, "%s: larger than %zu bytes", path, b.limit);
            break;
        }
    }
    if (!rc && ferror(f))
        rc = akg_fail(err, errlen, AKG_EIO, "%s: read failed", path);
    fclose(f);
    if (rc) {
        akg_buf_free(&b);
        return rc;
    }
    if (out_len)
        *out_len = b.len;
    *out = akg_buf_steal(&b);
    return AKG_OK;
}

int akg_write_file(const char *path, const char *data, size_t len, char *err, size_t errlen)
{
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    if (!tmp)
        return AKG_ENOMEM;
    snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        int rc = akg_fail(err, errlen, AKG_EIO, "%s: %s", path, strerror(errno));
        free(tmp);
        return rc;
    }
    int ok = fwrite(data, 1, len, f) == len;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        int rc = akg_fail(err, errlen, AKG_EIO, "%s: write failed: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return rc;
    }
    free(tmp);
    return AKG_OK;
}

int akg_mkdirs(const char *path, char *err, size_t errlen)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return akg_fail(err, errlen, AKG_EINVAL, "path too long: %s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return akg_fail(err, errlen, AKG_EIO, "mkdir %s: %s", buf, strerror(errno));
            *p = '/';
        }
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST)
        return akg_fail(err, errlen, AKG_EIO, "mkdir %s: %s", buf, strerror(errno));
    return AKG_OK;
}

char *akg_run_dir_path(const char *dir, const char *reference_path, const char *dsl,
                       const char *suffix)
{
    const char *stem = strrchr(reference_path, '/');
    stem = stem ? stem + 1 : reference_path;
    char name[256];
    snprintf(name, sizeof name, "%s", stem);
    char *dot = strrchr(name, '.');
    if (dot)
        *dot = '\0';
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    char ts[32];
    strftime(ts, sizeof ts, "%Y%m%d-%H%M%S", &tm);
    char rel[1024];
    snprintf(rel, sizeof rel, "%s/%s_%s_%s%s", dir, name, dsl, ts, suffix ? suffix : "");
    return akg_abspath(rel);
}

char *akg_abspath(const char *path)
{
    char cwd[PATH_MAX];
    akg_buf b;
    akg_buf_init(&b, PATH_MAX * 2);
    if (path[0] != '/') {
        if (!getcwd(cwd, sizeof cwd))
            return NULL;
        akg_buf_puts(&b, cwd);
        akg_buf_puts(&b, "/");
    }
    akg_buf_puts(&b, path);
    /* Normalise: drop "." segments, resolve "..", collapse "//". */
    char *src = b.data;
    char *out = malloc(b.len + 2);
    if (!out) {
        akg_buf_free(&b);
        return NULL;
    }
    size_t o = 0;
    char *save = NULL;
    for (char *seg = strtok_r(src, "/", &save); seg; seg = strtok_r(NULL, "/", &save)) {
        if (strcmp(seg, ".") == 0)
            continue;
        if (strcmp(seg, "..") == 0) {
            while (o > 0 && out[o - 1] != '/')
                o--;
            if (o > 0)
                o--;
            continue;
        }
        out[o++] = '/';
        size_t l = strlen(seg);
        memcpy(out + o, seg, l);
        o += l;
    }
    if (o == 0)
        out[o++] = '/';
    out[o] = '\0';
    akg_buf_free(&b);
    return out;
}

double akg_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

const char *akg_data_dir(void)
{
    const char *home = getenv("AKG_HOME");
    if (home && *home)
        return home;
#ifdef AKG_DATA_DIR_DEFAULT
    return AKG_DATA_DIR_DEFAULT;
#else
    return ".";
#endif
}

/* SHA-256 (FIPS 180-4), used for content hashes of references. */
static const uint32_t sha_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ROTR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha_block(uint32_t h[8], const unsigned char *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROTR(w[i - 15], 7) ^ ROTR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROTR(w[i - 2], 17) ^ ROTR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 =
            hh + (ROTR(e, 6) ^ ROTR(e, 11) ^ ROTR(e, 25)) + ((e & f) ^ (~e & g)) + sha_k[i] + w[i];
        uint32_t t2 = (ROTR(a, 2) ^ ROTR(a, 13) ^ ROTR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        hh = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

void akg_sha256_hex(const void *data, size_t len, char out[65])
{
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    const unsigned char *p = data;
    size_t full = len / 64;
    for (size_t i = 0; i < full; i++)
        sha_block(h, p + 64 * i);
    unsigned char tail[128] = {0};
    size_t rem = len - full * 64;
    memcpy(tail, p + full * 64, rem);
    tail[rem] = 0x80;
    size_t tl = rem < 56 ? 64 : 128;
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++)
        tail[tl - 1 - i] = (unsigned char)(bits >> (8 * i));
    sha_block(h, tail);
    if (tl == 128)
        sha_block(h, tail + 64);
    for (int i = 0; i < 8; i++)
        snprintf(out + 8 * i, 9, "%08x", h[i]);
}
