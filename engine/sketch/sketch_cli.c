/*
 * `akg_cli sketch check|fmt|json`: compiler-style diagnostics, the canonical
 * formatter and the JSON form over sketch files.
 */
#include "akg/sketch.h"
#include "akg/sketch_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads a whole file (capped at AKG_SKETCH_MAX_TEXT) into a new buffer owned
 * by the caller. Returns 0, or -errno with a message on stderr. */
static int sketch_cli_read(const char *path, char **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: cannot open: %s\n", path, strerror(errno));
        return -errno;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
        if (n == cap) {
            if (cap > AKG_SKETCH_MAX_TEXT) {
                fprintf(stderr, "%s: larger than the %u-byte limit for a sketch\n", path,
                        AKG_SKETCH_MAX_TEXT);
                free(buf);
                fclose(f);
                return -E2BIG;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    bool err = ferror(f);
    fclose(f);
    if (!buf || err) {
        free(buf);
        fprintf(stderr, "%s: read failed\n", path);
        return -EIO;
    }
    *out = buf;
    *len = n;
    return 0;
}

static void sketch_cli_print_diags(const char *path, const akg_sketch_diag_list *diags)
{
    for (size_t i = 0; i < akg_sketch_diag_count(diags); i++) {
        char *line = akg_sketch_diag_format(path, akg_sketch_diag_at(diags, i));
        if (line)
            fprintf(stderr, "%s\n", line);
        free(line);
    }
}

int akg_sketch_cli_check(int argc, char **argv)
{
    if (argc < 1) {
        fprintf(stderr, "usage: akg_cli sketch check FILE...\n");
        return 2;
    }
    int rc = 0;
    for (int i = 0; i < argc; i++) {
        char *text;
        size_t len;
        if (sketch_cli_read(argv[i], &text, &len)) {
            rc = 2;
            continue;
        }
        akg_sketch_diag_list *diags = akg_sketch_diag_list_new();
        akg_sketch **list = NULL;
        size_t n = 0;
        int prc = diags ? akg_sketch_parse_all(text, len, &list, &n, diags) : -ENOMEM;
        for (size_t k = 0; prc == 0 && k < n; k++) {
            if (akg_sketch_check(list[k], diags) < 0)
                prc = -ENOMEM;
            akg_sketch_free(list[k]);
        }
        free(list);
        sketch_cli_print_diags(argv[i], diags);
        if (prc == -ENOMEM) {
            fprintf(stderr, "%s: out of memory\n", argv[i]);
            rc = 2;
        } else if ((prc || akg_sketch_diag_error_count(diags)) && rc == 0) {
            rc = 1;
        }
        akg_sketch_diag_list_free(diags);
        free(text);
    }
    return rc;
}

int akg_sketch_cli_fmt(int argc, char **argv)
{
    bool write = false, check = false;
    int first = 0;
    for (; first < argc && argv[first][0] == '-'; first++) {
        if (strcmp(argv[first], "--write") == 0)
            write = true;
        else if (strcmp(argv[first], "--check") == 0)
            check = true;
        else {
            fprintf(stderr, "akg_cli sketch fmt: unknown option %s\n", argv[first]);
            return 2;
        }
    }
    if (first == argc || (write && check)) {
        fprintf(stderr, "usage: akg_cli sketch fmt [--write|--check] FILE...\n");
        return 2;
    }
    int rc = 0;
    for (int i = first; i < argc; i++) {
        char *text;
        size_t len;
        if (sketch_cli_read(argv[i], &text, &len)) {
            rc = 2;
            continue;
        }
        akg_sketch_diag_list *diags = akg_sketch_diag_list_new();
        akg_sketch **list = NULL;
        size_t n = 0;
        int prc = diags ? akg_sketch_parse_all(text, len, &list, &n, diags) : -ENOMEM;
        if (prc) {
            sketch_cli_print_diags(argv[i], diags);
            if (rc == 0)
                rc = prc == -ENOMEM ? 2 : 1;
        } else {
            size_t total = 0, cap = 0;
            char *all = NULL;
            for (size_t k = 0; k < n; k++) {
                char *one = NULL;
                if (akg_sketch_print(list[k], &one) == 0) {
                    size_t l = strlen(one) + (k ? 1 : 0);
                    if (total + l + 1 > cap) {
                        cap = (total + l + 1) * 2;
                        char *na = realloc(all, cap);
                        if (!na) {
                            free(one);
                            break;
                        }
                        all = na;
                    }
                    if (k)
                        all[total++] = '\n';
                    memcpy(all + total, one, strlen(one) + 1);
                    total += strlen(one);
                }
                free(one);
            }
            if (!all) {
                rc = 2;
            } else if (check) {
                if (total != len || memcmp(all, text, len) != 0) {
                    fprintf(stderr, "%s: not in canonical form (run akg_cli sketch fmt --write)\n",
                            argv[i]);
                    if (rc == 0)
                        rc = 1;
                }
            } else if (write) {
                if (total != len || memcmp(all, text, len) != 0) {
                    FILE *f = fopen(argv[i], "wb");
                    if (!f || fwrite(all, 1, total, f) != total) {
                        fprintf(stderr, "%s: cannot write: %s\n", argv[i], strerror(errno));
                        rc = 2;
                    }
                    if (f)
                        fclose(f);
                }
            } else {
                fwrite(all, 1, total, stdout);
            }
            free(all);
            for (size_t k = 0; k < n; k++)
                akg_sketch_free(list[k]);
            free(list);
        }
        akg_sketch_diag_list_free(diags);
        free(text);
    }
    return rc;
}

int akg_sketch_cli_json(int argc, char **argv)
{
    if (argc < 1) {
        fprintf(stderr, "usage: akg_cli sketch json FILE...\n");
        return 2;
    }
    int rc = 0;
    for (int i = 0; i < argc; i++) {
        char *text;
        size_t len;
        if (sketch_cli_read(argv[i], &text, &len)) {
            rc = 2;
            continue;
        }
        akg_sketch_diag_list *diags = akg_sketch_diag_list_new();
        akg_sketch *sk = NULL;
        int prc = diags ? akg_sketch_parse(text, len, &sk, diags) : -ENOMEM;
        int errors = prc == 0 ? akg_sketch_check(sk, diags) : 0;
        sketch_cli_print_diags(argv[i], diags);
        char *out = NULL;
        if (prc == 0 && errors == 0) {
            cJSON *json = akg_sketch_to_json(sk);
            out = json ? cJSON_PrintUnformatted(json) : NULL;
            cJSON_Delete(json);
            if (!out)
                prc = -ENOMEM;
        }
        if (prc == -ENOMEM || errors < 0) {
            fprintf(stderr, "%s: out of memory\n", argv[i]);
            rc = 2;
        } else if (!out) {
            if (rc == 0)
                rc = 1;
        } else {
            printf("%s\n", out);
        }
        free(out);
        akg_sketch_free(sk);
        akg_sketch_diag_list_free(diags);
        free(text);
    }
    return rc;
}
