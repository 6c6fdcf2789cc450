/*
 * sketch_file.c: loading a user's sketch as the design (see akg/sketch_file.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/sketch.h"
#include "akg/sketch_file.h"

#define MAX_LISTED_DIAGS 20
#define DIAG_TEXT_CAP ((size_t)64 << 10)

/* The 0-based line of the first `sketch NAME` header, 0 when none is found. */
static unsigned header_line(const char *text)
{
    unsigned line = 0;
    for (const char *p = text; p && *p; line++) {
        const char *q = p;
        while (*q == ' ' || *q == '\t')
            q++;
        if (strncmp(q, "sketch", 6) == 0 && (q[6] == ' ' || q[6] == '\t'))
            return line;
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return 0;
}

static void set_first(akg_sketch_file *f, unsigned line0, unsigned col0, unsigned end_line0,
                      unsigned end_col0)
{
    f->line = line0 + 1;
    f->column = col0 + 1;
    f->end_line = end_line0 + 1;
    f->end_column = end_col0 + 1;
}

void akg_sketch_file_free(akg_sketch_file *f)
{
    if (!f)
        return;
    free(f->text);
    akg_sketch_free(f->sketch);
    free(f->diagnostics);
    memset(f, 0, sizeof *f);
}

int akg_sketch_file_load(const char *path, const char *display, akg_sketch_file *f, char *err,
                         size_t errlen)
{
    memset(f, 0, sizeof *f);
    if (!display)
        display = path;
    size_t len = 0;
    int rc = akg_read_file(path, AKG_SKETCH_MAX_TEXT, &f->text, &len, err, errlen);
    if (rc != AKG_OK)
        return rc;
    f->header_line = header_line(f->text) + 1;
    akg_sketch_diag_list *diags = akg_sketch_diag_list_new();
    if (!diags)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory reading %s", display);
    int prc = akg_sketch_parse(f->text, len, &f->sketch, diags);
    if (prc == -ENOMEM) {
        akg_sketch_diag_list_free(diags);
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory parsing %s", display);
    }
    if (prc == 0) {
        int crc = akg_sketch_check(f->sketch, diags);
        if (crc < 0) {
            akg_sketch_diag_list_free(diags);
            return akg_fail(err, errlen, AKG_ENOMEM, "out of memory checking %s", display);
        }
    }
    akg_buf out;
    akg_buf_init(&out, DIAG_TEXT_CAP);
    size_t errors = 0;
    for (size_t i = 0; i < akg_sketch_diag_count(diags); i++) {
        const akg_sketch_diag *d = akg_sketch_diag_at(diags, i);
        if (d->severity != AKG_SKETCH_ERROR)
            continue;
        if (errors == 0)
            set_first(f, d->span.line, d->span.col, d->span.end_line, d->span.end_col);
        if (errors < MAX_LISTED_DIAGS) {
            char *line = akg_sketch_diag_format(display, d);
            if (line)
                akg_buf_appendf(&out, "%s%s", out.len ? "\n" : "", line);
            else
                akg_buf_puts(&out, "\n(out of memory formatting a diagnostic)");
            free(line);
        }
        errors++;
    }
    if (prc != 0 && errors == 0) {
        /* a parse failure always carries a diagnostic; keep a line anyway */
        set_first(f, 0, 0, 0, 0);
        akg_buf_appendf(&out, "%s:1:1: error: the sketch does not parse", display);
        errors = 1;
    }
    if (errors > MAX_LISTED_DIAGS)
        akg_buf_appendf(&out, "\n%s: %zu more errors not shown", display,
                        errors - MAX_LISTED_DIAGS);
    akg_sketch_diag_list_free(diags);
    if (errors == 0 && !akg_sketch_has_binding(f->sketch)) {
        unsigned h = f->header_line - 1;
        set_first(f, h, 0, h, 0);
        akg_buf_appendf(&out,
                        "%s:%u:1: error: sketch '%s' has no bind: section; a sketch given as the "
                        "design is lowered for its task, so it must say where each tensor and "
                        "symbol comes from (bind: x = input(\"x\", [...]), y = output(0, [...]))",
                        display, h + 1, akg_sketch_name(f->sketch));
        errors = 1;
    }
    if (errors == 0) {
        akg_buf_free(&out);
        return AKG_OK;
    }
    akg_sketch_free(f->sketch);
    f->sketch = NULL;
    if (akg_buf_status(&out) != AKG_OK) {
        akg_buf_free(&out);
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory listing the errors of %s", display);
    }
    f->diagnostics = akg_buf_steal(&out);
    if (err && errlen) {
        const char *nl = strchr(f->diagnostics, '\n');
        size_t n = nl ? (size_t)(nl - f->diagnostics) : strlen(f->diagnostics);
        snprintf(err, errlen, "%.*s", (int)(n < errlen ? n : errlen - 1), f->diagnostics);
    }
    return AKG_EPARSE;
}
