/* uri.c: see uri.h. */
#include "uri.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

char *akg_lsp_uri_to_path(const char *uri)
{
    if (!uri || strncmp(uri, "file://", 7) != 0)
        return NULL;
    const char *p = uri + 7;
    /* file://host/path: only the local host is ours. */
    if (*p != '/') {
        if (strncmp(p, "localhost/", 10) != 0)
            return NULL;
        p += 9;
    }
    size_t n = strlen(p);
    char *raw = malloc(n + 1);
    if (!raw)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '?' || p[i] == '#')
            break;
        if (p[i] == '%') {
            int hi = i + 1 < n ? hex_value(p[i + 1]) : -1;
            int lo = i + 2 < n ? hex_value(p[i + 2]) : -1;
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
                free(raw);
                return NULL;
            }
            raw[k++] = (char)(hi * 16 + lo);
            i += 2;
        } else {
            raw[k++] = p[i];
        }
    }
    raw[k] = '\0';
    char *abs = akg_abspath(raw);
    free(raw);
    return abs;
}

char *akg_lsp_path_to_uri(const char *path)
{
    if (!path)
        return NULL;
    size_t n = strlen(path);
    char *out = malloc(7 + 3 * n + 1);
    if (!out)
        return NULL;
    memcpy(out, "file://", 7);
    size_t k = 7;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)path[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            strchr("/-._~", c)) {
            out[k++] = (char)c;
        } else {
            sprintf(out + k, "%%%02X", c);
            k += 3;
        }
    }
    out[k] = '\0';
    return out;
}

int akg_lsp_path_within(const char *path, const char *folder)
{
    if (!path || !folder)
        return 0;
    size_t fn = strlen(folder);
    while (fn > 1 && folder[fn - 1] == '/')
        fn--;
    if (strncmp(path, folder, fn) != 0)
        return 0;
    return path[fn] == '\0' || path[fn] == '/' || (fn == 1 && folder[0] == '/');
}

int akg_lsp_ends_with(const char *s, const char *suffix)
{
    if (!s || !suffix)
        return 0;
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}
