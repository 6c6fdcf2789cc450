/* task.c: `akg_cli task FILE --select LINE[:LINE]`, the TaskConstructor alone.
 * It prints the constructed KernelBench-form reference on stdout and saves it
 * (default .akg/tasks/<name>.py next to FILE) so that `akg_cli op` can take it
 * and the user can read and edit it. A selection it cannot turn into a
 * reference exits 1 with the line and what would fix it.
 *
 * Before it is printed or saved, the reference is run once: the harness's
 * probe (the engine's harness client, one CPU worker, the request `akg_cli
 * op` starts with) builds Model, draws the inputs and runs forward. A
 * reference that constructs but fails there (a shape comment that does not
 * fit the code, a constant that is not what the code needs) exits 1 with the
 * line of the user's file the failing line came from (the constructor's line
 * map), the reason, and what would work; --no-check skips the run.
 *
 * What the constructor cannot know (an input's shape, a size's value, the
 * module's constructor arguments) is never guessed. At a terminal (stdin and
 * stderr both one) it is asked, one question a need, each answer checked
 * (akg_task_need_answer) and asked again until it is of the form asked; the
 * answers become `# akg:` comments above the selection in a copy of the
 * file, never in the file itself, and the closing note shows them so the
 * user can keep them. Without a terminal it exits 1 with the comments to
 * add, a `?` where each answer goes. */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "akg/akg.h"
#include "akg/harness.h"
#include "akg/task_constructor.h"
#include "cli.h"

/* How long the probe of a constructed reference may take, importing torch included. */
#define TASK_CHECK_TIMEOUT_S 180.0

typedef struct {
    cJSON *answer;
    int answered, closed;
} task_probe;

static void on_probe_answer(const cJSON *answer, void *user)
{
    task_probe *w = user;
    w->answer = cJSON_Duplicate(answer, 1);
    w->answered = 1;
}

static void on_pool_closed(void *user)
{
    ((task_probe *)user)->closed = 1;
}

/* Runs the harness's probe on the reference at path (absolute) in one CPU worker of python.
 * Returns the answer (the caller deletes it) or NULL with err filled. */
static cJSON *probe_reference(const char *path, const char *python, char *err, size_t errlen)
{
    uv_loop_t loop;
    if (uv_loop_init(&loop) != 0) {
        akg_fail(err, errlen, AKG_ENOMEM, "cannot start an event loop");
        return NULL;
    }
    char script[4096];
    snprintf(script, sizeof script, "%s/backends/harness/worker.py", akg_data_dir());
    akg_harness_options ho;
    memset(&ho, 0, sizeof ho);
    ho.python = python;
    ho.worker_script = script;
    ho.workers = 1;
    ho.threads = akg_cpu_count();
    ho.device_kind = "cpu";
    akg_harness *pool = NULL;
    task_probe w = {0};
    if (akg_harness_new(&loop, &ho, &pool, err, errlen) == AKG_OK) {
        cJSON *req = cJSON_CreateObject();
        cJSON_AddStringToObject(req, "op", "probe");
        cJSON_AddStringToObject(req, "reference", path);
        cJSON_AddNumberToObject(req, "seed", 1);
        if (akg_harness_submit(pool, req, TASK_CHECK_TIMEOUT_S, on_probe_answer, &w, NULL) !=
            AKG_OK)
            akg_fail(err, errlen, AKG_ESPAWN, "cannot ask the harness (%s) to run it", python);
        else
            while (!w.answered && uv_run(&loop, UV_RUN_ONCE))
                ;
        akg_harness_close(pool, on_pool_closed, &w);
        while (!w.closed && uv_run(&loop, UV_RUN_ONCE))
            ;
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    if (!w.answer && !err[0])
        akg_fail(err, errlen, AKG_ESPAWN, "the harness gave no answer");
    return w.answer;
}

/* The text of line (1-based) of src, trimmed, into out. */
static void source_line(const char *src, unsigned line, char *out, size_t n)
{
    out[0] = '\0';
    for (unsigned l = 1; src && *src && l < line; l++) {
        src = strchr(src, '\n');
        src = src ? src + 1 : NULL;
    }
    if (!src || !line)
        return;
    while (*src == ' ' || *src == '\t')
        src++;
    size_t len = strcspn(src, "\n");
    while (len && (src[len - 1] == ' ' || src[len - 1] == '\r'))
        len--;
    snprintf(out, n, "%.*s", (int)len, src);
}

/* Runs t's reference once; 0 when it runs, 1 after telling why not (on stderr), 2 when it could
 * not be run at all. answers: the comments the user's answers gave (NULL: none), for a reference
 * whose shapes came from them. */
static int check_reference(const akg_constructed_task *t, const char *file, const char *src,
                           unsigned first, unsigned last, const char *python, const char *answers)
{
    char dir_tpl[4096], path[4200], err[2048] = "";
    const char *tmp = getenv("TMPDIR");
    snprintf(dir_tpl, sizeof dir_tpl, "%s/akg-task-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir_tpl)) {
        fprintf(stderr, "akg_cli task: cannot make a folder to run the reference in (%s)\n",
                dir_tpl);
        return 2;
    }
    snprintf(path, sizeof path, "%s/%s.py", dir_tpl, t->name);
    cJSON *ans = NULL;
    if (akg_write_file(path, t->reference, strlen(t->reference), err, sizeof err) == AKG_OK)
        ans = probe_reference(path, python, err, sizeof err);
    unlink(path);
    rmdir(dir_tpl);
    if (!ans) {
        fprintf(stderr,
                "akg_cli task: cannot run the constructed reference to check it: %s; install "
                "PyTorch for %s (or give --python), or pass --no-check to save it unchecked\n",
                err, python);
        return 2;
    }
    if (cJSON_IsTrue(cJSON_GetObjectItem(ans, "ok"))) {
        cJSON_Delete(ans);
        return 0;
    }
    const char *cls = cJSON_GetStringValue(cJSON_GetObjectItem(ans, "class"));
    const char *detail = cJSON_GetStringValue(cJSON_GetObjectItem(ans, "detail"));
    const cJSON *jl = cJSON_GetObjectItem(ans, "line");
    unsigned ref_line = cJSON_IsNumber(jl) && jl->valuedouble >= 1 ? (unsigned)jl->valuedouble : 0;
    unsigned at = ref_line && ref_line <= t->n_lines ? t->source_lines[ref_line - 1] : 0;
    /* the harness names its copy (name.py:N): the user's file and line say it better */
    char reason[1500];
    snprintf(reason, sizeof reason, "%s", detail ? detail : "no detail");
    char tag[300];
    snprintf(tag, sizeof tag, " (%s.py:%u)", t->name, ref_line);
    char *hit = ref_line ? strstr(reason, tag) : NULL;
    if (hit)
        memmove(hit, hit + strlen(tag), strlen(hit + strlen(tag)) + 1);
    char shapes[512];
    source_line(src, t->shapes_line, shapes, sizeof shapes);
    char code[512];
    source_line(src, at, code, sizeof code);
    fprintf(stderr,
            "akg_cli task: %s:%u: the reference built from lines %u-%u fails when it runs "
            "(%s): %s",
            file, at ? at : first, first, last, cls ? cls : "runtime_error", reason);
    if (at && code[0])
        fprintf(stderr, "; at `%s`", code);
    if (!t->shapes_line && answers)
        fprintf(stderr,
                ". Its inputs take their shapes from your answers (%s): make them what the code "
                "computes on",
                answers);
    else if (t->shapes_line && shapes[0])
        fprintf(stderr,
                ". Its inputs take their shapes from line %u (`%s`): make them what the code "
                "computes on",
                t->shapes_line, shapes);
    else
        fprintf(stderr, ". Give the inputs shapes the code computes on (`# akg: x: f32[B, 4096]` "
                        "above the selection)");
    fprintf(stderr, ", or pass --no-check to save the reference as it is and edit it\n");
    cJSON_Delete(ans);
    return 1;
}

/* ---- asking for what the constructor cannot know ---- */

/* The `# akg:` lines for needs, one a need, each filled by a person's checked answer; 0 when they
 * all came, -1 when stdin ended first. Questions and complaints go to stderr. */
static int ask_needs(const akg_task_needs *needs, akg_buf *lines)
{
    for (size_t i = 0; i < needs->n; i++) {
        const akg_task_need *need = &needs->items[i];
        char question[512], line[1024], comment[1024], err[512];
        akg_task_need_question(need, question, sizeof question);
        for (;;) {
            fprintf(stderr, "akg_cli task: %s? ", question);
            fflush(stderr);
            if (!fgets(line, sizeof line, stdin)) {
                fputc('\n', stderr);
                return -1;
            }
            line[strcspn(line, "\r\n")] = '\0';
            if (akg_task_need_answer(need, line, comment, sizeof comment, err, sizeof err) ==
                AKG_OK)
                break;
            fprintf(stderr, "akg_cli task: %s; answer again (Ctrl-D to stop)\n", err);
        }
        akg_buf_appendf(lines, "%s%s\n", needs->indent, comment);
    }
    return 0;
}

/* Without a terminal: the `# akg:` lines to add, a `?` where each answer goes, and the
 * placeholders already in the file that are still to fill. */
static void tell_needs(const akg_task_needs *needs, const char *file)
{
    size_t lines = 0;
    for (size_t i = 0; i < needs->n; i++)
        lines += !needs->items[i].placeholder;
    fprintf(stderr, "akg_cli task: stdin is not a terminal, so nothing was asked (and nothing is "
                    "guessed)");
    if (lines)
        fprintf(stderr,
                "; put %s above line %u of %s, with each `?` filled in, and run it again:\n",
                lines > 1 ? "these lines" : "this line", needs->comment_line, file);
    else
        fprintf(stderr, "\n");
    for (size_t i = 0; i < needs->n; i++) {
        char ph[256];
        akg_task_need_placeholder(&needs->items[i], ph, sizeof ph);
        if (!needs->items[i].placeholder)
            fprintf(stderr, "    %s%s\n", needs->indent, ph);
    }
    for (size_t i = 0; i < needs->n; i++)
        if (needs->items[i].placeholder)
            fprintf(stderr,
                    "akg_cli task: %s the `?` of the shape comment for `%s` at line %u of %s\n",
                    lines ? "and fill in" : "fill in", needs->items[i].name, needs->items[i].line,
                    file);
}

/* src with text inserted before line at (1-based); malloc'd, *len set. */
static char *insert_lines(const char *src, size_t len, unsigned at, const char *text,
                          size_t *out_len)
{
    size_t off = 0;
    for (unsigned l = 1; l < at && off < len; l++) {
        const char *nl = memchr(src + off, '\n', len - off);
        off = nl ? (size_t)(nl - src) + 1 : len;
    }
    size_t n = strlen(text);
    char *out = malloc(len + n + 2);
    if (!out)
        return NULL;
    memcpy(out, src, off);
    size_t k = off;
    if (off == len && off > 0 && src[off - 1] != '\n')
        out[k++] = '\n';
    memcpy(out + k, text, n);
    memcpy(out + k + n, src + off, len - off);
    *out_len = k + n + len - off;
    out[*out_len] = '\0';
    return out;
}

/* Lines of a file at `at` and after moved down by `added` answer lines: back to the file's. */
static unsigned file_line(unsigned v, unsigned at, unsigned added)
{
    if (!added || v < at)
        return v;
    return v < at + added ? 0 : v - added;
}

static void task_usage(FILE *f)
{
    fprintf(f,
            "usage: akg_cli task FILE --select LINE[:LINE] [--output PATH] [--no-save]\n"
            "                    [--no-check] [--python PATH]\n"
            "\n"
            "Builds a KernelBench-form reference (Model, get_inputs, get_init_inputs and,\n"
            "with `# @hint:` comments, get_inputs_dyn_list) from the selected lines of FILE:\n"
            "an nn.Module subclass, a function, or statements inside a forward. Input shapes\n"
            "come from `# akg: x: f32[B, 4096]` comments (`# akg: B = 32`), annotations,\n"
            "hints (`# @hint: M in range(16, 65536)`) or a sample call in the file; at a\n"
            "terminal, what none of them gives is asked (never guessed).\n"
            "\n"
            "  --select LINE[:LINE]  the selection, 1-based lines, inclusive\n"
            "  --output PATH         where to save it (default .akg/tasks/<name>.py beside FILE)\n"
            "  --no-save             print only\n"
            "  --no-check            do not run the reference once (in the harness) first\n"
            "  --python PATH         the harness's interpreter (default $AKG_PYTHON or\n"
            "                        " AKG_PYTHON_DEFAULT ")\n");
}

int cli_task(int argc, char **argv)
{
    const char *select = NULL, *output = NULL, *python = NULL;
    int help = 0, no_save = 0, no_check = 0;
    cli_flag flags[] = {{"select", 1, &select, NULL},   {"output", 1, &output, NULL},
                        {"no-save", 0, NULL, &no_save}, {"no-check", 0, NULL, &no_check},
                        {"python", 1, &python, NULL},   {"help", 0, NULL, &help},
                        {NULL, 0, NULL, NULL}};
    const char *pos[1];
    int npos;
    if (cli_parse("task", argc, argv, flags, pos, 1, &npos))
        return 2;
    if (help) {
        task_usage(stdout);
        return 0;
    }
    if (npos != 1 || !select) {
        task_usage(stderr);
        return 2;
    }
    char *end;
    long first = strtol(select, &end, 10), last = first;
    if (*end == ':' || *end == '-')
        last = strtol(end + 1, &end, 10);
    if (*end || first < 1 || last < first) {
        fprintf(stderr,
                "akg_cli task: --select %s is not a line range; write LINE or FIRST:LAST "
                "(1-based, FIRST <= LAST)\n",
                select);
        return 2;
    }
    char err[2048];
    char *src;
    size_t len;
    if (akg_read_file(pos[0], (size_t)16 << 20, &src, &len, err, sizeof err)) {
        fprintf(stderr, "akg_cli task: %s\n", err);
        return 2;
    }
    akg_constructed_task t;
    akg_task_needs needs;
    int can_ask = isatty(STDIN_FILENO) && isatty(STDERR_FILENO);
    /* work: the file's text with the answers' comments, `added` lines from line `at` */
    char *work = src;
    size_t work_len = len;
    unsigned at = 0, added = 0, sel_first = (unsigned)first, sel_last = (unsigned)last;
    akg_buf answers;
    akg_buf_init(&answers, 64 * 1024);
    int rc;
    for (int round = 0;; round++) {
        rc = akg_task_construct_needs(work, work_len, pos[0], sel_first, sel_last, &t, &needs, err,
                                      sizeof err);
        if (rc != AKG_ENOTFOUND || needs.n == 0)
            break;
        if (!can_ask || round == 8) {
            fprintf(stderr, "akg_cli task: %s\n", err);
            if (!can_ask)
                tell_needs(&needs, pos[0]);
            break;
        }
        /* later rounds read the copy: its lines are not the file's, the questions say enough */
        if (round == 0)
            fprintf(stderr, "akg_cli task: %s\n", err);
        for (size_t i = 0; i < needs.n; i++)
            needs.items[i].line = file_line(needs.items[i].line, at, added);
        akg_buf lines;
        akg_buf_init(&lines, 64 * 1024);
        if (ask_needs(&needs, &lines) != 0 || !lines.data) {
            fprintf(stderr, "akg_cli task: no answer, so no reference was built\n");
            akg_buf_free(&lines);
            break;
        }
        unsigned ins = added ? at + added : needs.comment_line;
        size_t nl = 0;
        for (const char *q = lines.data; *q; q++)
            nl += *q == '\n';
        size_t grown_len = 0;
        char *grown = insert_lines(work, work_len, ins, lines.data, &grown_len);
        if (!grown) {
            fprintf(stderr, "akg_cli task: out of memory\n");
            akg_buf_free(&lines);
            break;
        }
        akg_buf_puts(&answers, lines.data);
        akg_buf_free(&lines);
        if (work != src)
            free(work);
        work = grown;
        work_len = grown_len;
        if (!added)
            at = ins;
        added += (unsigned)nl;
        if (sel_first >= ins)
            sel_first += (unsigned)nl;
        if (sel_last >= ins)
            sel_last += (unsigned)nl;
    }
    if (work != src)
        free(work);
    if (rc) {
        free(src);
        akg_buf_free(&answers);
        if (rc != AKG_ENOTFOUND || needs.n == 0)
            fprintf(stderr, "akg_cli task: %s\n", err);
        return 1;
    }
    /* the reference's lines name the file's lines, not the copy's */
    for (size_t i = 0; i < t.n_lines; i++)
        t.source_lines[i] = file_line(t.source_lines[i], at, added);
    t.shapes_line = file_line(t.shapes_line, at, added);
    if (added) { /* its first line names the selection: the file's lines */
        char from[64], to[64];
        snprintf(from, sizeof from, ", lines %u-%u (", sel_first, sel_last);
        snprintf(to, sizeof to, ", lines %ld-%ld (", first, last);
        char *hit = strstr(t.reference, from), *eol = strchr(t.reference, '\n');
        if (hit && eol && hit < eol && strlen(to) <= strlen(from)) {
            memcpy(hit, to, strlen(to));
            memmove(hit + strlen(to), hit + strlen(from), strlen(hit + strlen(from)) + 1);
        }
    }
    /* the answers, one line, for messages */
    char answered[1024] = "";
    for (const char *q = answers.data; q && *q && strlen(answered) + 8 < sizeof answered;) {
        while (*q == ' ' || *q == '\t')
            q++;
        size_t n = strcspn(q, "\n");
        size_t used = strlen(answered);
        snprintf(answered + used, sizeof answered - used, "%s`%.*s`", used ? ", " : "", (int)n, q);
        q += n + (q[n] == '\n');
    }
    if (!no_check) {
        if (!python || !*python)
            python = getenv("AKG_PYTHON");
        if (!python || !*python)
            python = AKG_PYTHON_DEFAULT;
        rc = check_reference(&t, pos[0], src, (unsigned)first, (unsigned)last, python,
                             added ? answered : NULL);
        if (rc) {
            free(src);
            akg_buf_free(&answers);
            akg_constructed_task_free(&t);
            return rc;
        }
    }
    free(src);
    if (added)
        fprintf(stderr,
                "akg_cli task: built with your answers; to keep them, put %s above line %u of "
                "%s:\n%s",
                added > 1 ? "these lines" : "this line", at, pos[0], answers.data);
    akg_buf_free(&answers);
    fputs(t.reference, stdout);
    int status = 0;
    if (!no_save) {
        char path[4096];
        if (output) {
            snprintf(path, sizeof path, "%s", output);
        } else {
            char *copy = akg_strdup(pos[0]);
            snprintf(path, sizeof path, "%s/.akg/tasks/%s.py", copy ? dirname(copy) : ".", t.name);
            free(copy);
        }
        char *dir = akg_strdup(path);
        if (!dir || akg_mkdirs(dirname(dir), err, sizeof err) ||
            akg_write_file(path, t.reference, strlen(t.reference), err, sizeof err)) {
            fprintf(stderr, "akg_cli task: cannot save %s: %s\n", path, dir ? err : "no memory");
            status = 1;
        } else {
            fprintf(stderr, "akg_cli task: saved %s (akg_cli op %s)\n", path, path);
        }
        free(dir);
    }
    akg_constructed_task_free(&t);
    return status;
}
