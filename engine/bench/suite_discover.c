/*
 * suite_discover.c: which files of an operator suite are references (akg/suite.h).
 *
 * A reference is told from a helper module by the engine's own parse (akg_reference_parse and
 * akg_reference_form_gap), the one every job starts with, so the suite and the pipeline agree on
 * what KernelBench form is. A file that declares the form but is broken (a syntax error, no
 * forward()) is still a reference: its job fails and the failure counts, where skipping it would
 * flatter the pass rate.
 *
 * The walk blocks on the file system, so suite.c runs it on libuv's thread pool; `stop` lets the
 * loop end it between files. Names are sorted so the suite's order, and its families' order, is
 * the same on every machine.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "akg/akg.h"
#include "akg/suite.h"
#include "akg/task.h"
#include "suite_internal.h"

#define SUITE_MAX_REF_BYTES (1 << 20) /* a reference larger than this is skipped, not parsed */
#define SUITE_MAX_PATH 4096

typedef struct {
    const char *suite_dir, *filter;
    const atomic_int *stop;
    akg_suite_listing *out;
    size_t cap_ops, cap_skips;
    char *err;
    size_t errlen;
} walk_ctx;

static void op_free(akg_suite_op *op)
{
    free(op->path);
    free(op->rel);
    free(op->family);
    free(op->name);
    free(op->status);
    free(op->error_class);
    free(op->error_detail);
    free(op->run_dir);
    free(op->env_note);
    free(op->compiled_error);
    free(op->compiled_isa);
    free(op->scaled_path);
    free(op->scale_note);
}

void akg_suite_listing_free(akg_suite_listing *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n_ops; i++)
        op_free(&l->ops[i]);
    free(l->ops);
    for (size_t i = 0; i < l->n_skips; i++) {
        free(l->skips[i].path);
        free(l->skips[i].reason);
    }
    free(l->skips);
    memset(l, 0, sizeof *l);
}

static int add_op(walk_ctx *w, const char *path, const char *rel)
{
    akg_suite_listing *l = w->out;
    if (l->n_ops == AKG_SUITE_MAX_REFS)
        return akg_fail(w->err, w->errlen, AKG_ENOMEM, "%s holds more than %d references",
                        w->suite_dir, AKG_SUITE_MAX_REFS);
    if (l->n_ops == w->cap_ops) {
        size_t cap = w->cap_ops ? w->cap_ops * 2 : 64;
        akg_suite_op *ops = realloc(l->ops, cap * sizeof *ops);
        if (!ops)
            return akg_fail(w->err, w->errlen, AKG_ENOMEM, "out of memory reading %s",
                            w->suite_dir);
        l->ops = ops;
        w->cap_ops = cap;
    }
    akg_suite_op *op = &l->ops[l->n_ops];
    memset(op, 0, sizeof *op);
    l->n_ops++; /* counted at once, so the listing frees whatever was allocated */
    op->path = akg_strdup(path);
    op->rel = akg_strdup(rel);
    const char *slash = strchr(rel, '/');
    op->family = slash ? strndup(rel, (size_t)(slash - rel)) : akg_strdup("-");
    const char *base = strrchr(rel, '/');
    base = base ? base + 1 : rel;
    op->name = strndup(base, strlen(base) - 3); /* without ".py" */
    op->status = akg_strdup("not_run");
    op->ref_ms = op->kernel_ms = op->speedup = op->elapsed_s = NAN;
    op->compiled_ms = op->speedup_compiled = op->compile_s = NAN;
    if (!op->path || !op->rel || !op->family || !op->name || !op->status)
        return akg_fail(w->err, w->errlen, AKG_ENOMEM, "out of memory reading %s", w->suite_dir);
    return AKG_OK;
}

static int add_skip(walk_ctx *w, const char *path, const char *reason)
{
    akg_suite_listing *l = w->out;
    if (l->n_skips == AKG_SUITE_MAX_REFS)
        return akg_fail(w->err, w->errlen, AKG_ENOMEM,
                        "%s holds more than %d files that are "
                        "not references",
                        w->suite_dir, AKG_SUITE_MAX_REFS);
    if (l->n_skips == w->cap_skips) {
        size_t cap = w->cap_skips ? w->cap_skips * 2 : 16;
        akg_suite_skip *s = realloc(l->skips, cap * sizeof *s);
        if (!s)
            return akg_fail(w->err, w->errlen, AKG_ENOMEM, "out of memory reading %s",
                            w->suite_dir);
        l->skips = s;
        w->cap_skips = cap;
    }
    akg_suite_skip *s = &l->skips[l->n_skips++];
    s->path = akg_strdup(path);
    s->reason = akg_strdup(reason);
    if (!s->path || !s->reason)
        return akg_fail(w->err, w->errlen, AKG_ENOMEM, "out of memory reading %s", w->suite_dir);
    return AKG_OK;
}

/* Adds path as a reference, or as a skip with the reason it is none. */
static int classify(walk_ctx *w, const char *path, const char *rel)
{
    char *text = NULL;
    size_t len = 0;
    char why[1024];
    if (akg_read_file(path, SUITE_MAX_REF_BYTES, &text, &len, why, sizeof why) != AKG_OK)
        return add_skip(w, path, why);
    akg_reference *ref = akg_reference_parse(text, len, path);
    free(text);
    if (!ref)
        return akg_fail(w->err, w->errlen, AKG_ENOMEM, "out of memory parsing %s", path);
    const char *gap = akg_reference_form_gap(ref);
    int rc;
    if (!gap) {
        rc = add_op(w, path, rel);
    } else {
        if (ref->syntax_errors)
            snprintf(why, sizeof why, "not in KernelBench form: %s (syntax error at line %u)", gap,
                     ref->first_error.start_row + 1);
        else
            snprintf(why, sizeof why, "not in KernelBench form: %s", gap);
        rc = add_skip(w, path, why);
    }
    akg_reference_free(ref);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of dirpath worth a look, sorted; *out is malloc'd, as is every name. */
static int list_dir(walk_ctx *w, const char *dirpath, char ***out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    DIR *d = opendir(dirpath);
    if (!d)
        return akg_fail(w->err, w->errlen, AKG_EIO, "cannot read the suite folder %s: %s", dirpath,
                        strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = AKG_OK;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "__pycache__") == 0)
            continue;
        if (n == cap) {
            size_t grown_cap = cap ? cap * 2 : 32;
            char **grown = realloc(names, grown_cap * sizeof *names);
            if (!grown) {
                rc = AKG_ENOMEM;
                break;
            }
            names = grown;
            cap = grown_cap;
        }
        if (!(names[n] = akg_strdup(e->d_name))) {
            rc = AKG_ENOMEM;
            break;
        }
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    *out = names;
    *n_out = n;
    if (rc != AKG_OK)
        return akg_fail(w->err, w->errlen, rc, "out of memory reading %s", dirpath);
    return AKG_OK;
}

/* Walks suite_dir/rel, depth levels below the suite. */
static int walk(walk_ctx *w, const char *rel, int depth)
{
    char dirpath[SUITE_MAX_PATH];
    int nd = snprintf(dirpath, sizeof dirpath, "%s%s%s", w->suite_dir, *rel ? "/" : "", rel);
    if (nd < 0 || (size_t)nd >= sizeof dirpath)
        return AKG_OK; /* a folder too deep to name holds nothing we could run */
    char **names = NULL;
    size_t n = 0;
    int rc = list_dir(w, dirpath, &names, &n);
    for (size_t i = 0; i < n && rc == AKG_OK; i++) {
        if (w->stop && atomic_load(w->stop)) {
            rc = akg_fail(w->err, w->errlen, AKG_ECANCELED, "cancelled");
            break;
        }
        char sub[SUITE_MAX_PATH], path[SUITE_MAX_PATH];
        int nsub = snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", names[i]);
        int npath = snprintf(path, sizeof path, "%s/%s", w->suite_dir, sub);
        struct stat st;
        if (nsub < 0 || (size_t)nsub >= sizeof sub || npath < 0 || (size_t)npath >= sizeof path ||
            stat(path, &st) != 0)
            continue; /* a path too long to name is not a reference we could run */
        if (S_ISDIR(st.st_mode)) {
            if (depth < AKG_SUITE_MAX_DEPTH)
                rc = walk(w, sub, depth + 1);
            continue;
        }
        size_t len = strlen(names[i]);
        if (!S_ISREG(st.st_mode) || len < 4 || strcmp(names[i] + len - 3, ".py") != 0)
            continue;
        /* the suite's own checker and package markers are never references */
        if (!strcmp(names[i], "check_suite.py") || !strcmp(names[i], "__init__.py"))
            continue;
        if (w->filter && !strstr(sub, w->filter))
            continue;
        rc = classify(w, path, sub);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

int akg__suite_discover(const char *suite_dir, const char *filter, akg_suite_listing *out,
                        const atomic_int *stop, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!suite_dir || !*suite_dir)
        return akg_fail(err, errlen, AKG_EINVAL, "no suite folder given");
    walk_ctx w = {suite_dir, filter && *filter ? filter : NULL, stop, out, 0, 0, err, errlen};
    int rc = walk(&w, "", 0);
    if (rc != AKG_OK)
        akg_suite_listing_free(out);
    return rc;
}

int akg_suite_discover(const char *suite_dir, const char *filter, akg_suite_listing *out, char *err,
                       size_t errlen)
{
    return akg__suite_discover(suite_dir, filter, out, NULL, err, errlen);
}
