/*
 * interactive.c: `akg_cli op` without a reference, at a terminal.
 *
 * A session on the command's libuv loop and engine: one harness worker stays
 * warm from run to run. The terminal is read through readline's callback
 * interface (line editing, history in $XDG_STATE_HOME/akg/history, else
 * ~/.akg/history) driven by a uv_poll on stdin, so Ctrl-C reaches the loop
 * as a signal: it cancels a running pipeline, or drops the line or paste
 * being typed. Built without readline, the same session reads plain lines.
 *
 * What a line starts decides what it is. Python (`import`, `class`, `def`,
 * an assignment, a comment) starts a paste, which ends with Ctrl-D, or with
 * a blank line after which nothing more arrives within PASTE_QUIET_MS (a
 * pasted file's own blank lines arrive with the rest of it; a typed blank
 * line ends it). A paste with Model, get_inputs and get_init_inputs is a
 * reference and runs as it is; other code goes through the TaskConstructor
 * (its top-level nn.Module class, else its last class, else its last
 * function is the selection). Anything else is a request in words
 * (request.c): understood, it becomes a reference; refused, the user reads
 * what was not understood and what works. Every reference the session runs
 * is saved first in .akg/tasks/ (the user can read, edit and rerun it) and
 * goes through the normal pipeline with the command line's flags.
 */
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#ifdef AKG_HAVE_READLINE
#include <readline/history.h>
#include <readline/readline.h>
#endif

#include "akg/akg.h"
#include "akg/task_constructor.h"
#include "interactive.h"
#include "request.h"

#define PASTE_LIMIT ((size_t)1 << 20) /* a pasted reference or snippet, not a whole project */
#define PASTE_QUIET_MS 150
#define TASKS_DIR ".akg/tasks"

typedef struct {
    uv_loop_t *loop;
    akg_engine *engine;
    akg_job *job;
    akg_job_options base;
    int quiet, json;
    uv_poll_t input;
    uv_timer_t paste_end; /* a blank line in a paste: ends it unless more arrives */
    uv_timer_t drain;     /* plain input: lines read ahead of a run, taken after it */
    uv_signal_t sigint, sigterm;
    int input_active, prompt_installed;
    int pasting, blank_pending, ending;
    akg_buf paste;
    akg_buf plain; /* plain input: bytes read that are not a whole line yet */
    int stdin_flags;
    int runs;
    char history[4096];
    /* a snippet the TaskConstructor could not finish: what it lacks (needs), asked one at a
     * time (ask_next), and the `# akg:` comments the checked answers gave so far, which go
     * above the code before it tries again */
    char *ask_code;
    unsigned ask_sel;
    int asks;
    akg_task_needs needs;
    size_t ask_next;
    char ask_prompt[256], ask_lines[4096];
} session;

#ifdef AKG_HAVE_READLINE
static session *rl_session; /* readline's line callback carries no user pointer */
#endif

static void on_line(session *s, char *line);
static void prompt(session *s);

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("akg: ", stdout);
    vprintf(fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
    fflush(stdout);
}

/* ---- input ---- */

#ifdef AKG_HAVE_READLINE
static void on_rl_line(char *line)
{
    on_line(rl_session, line);
    free(line);
}
#endif

#ifndef AKG_HAVE_READLINE
static void drain_plain(session *s)
{
    char *nl;
    while (s->input_active && !s->ending && s->plain.len &&
           (nl = memchr(s->plain.data, '\n', s->plain.len))) {
        size_t n = (size_t)(nl - s->plain.data);
        char *line = malloc(n + 1);
        if (!line)
            return;
        memcpy(line, s->plain.data, n);
        line[n] = '\0';
        if (n && line[n - 1] == '\r')
            line[n - 1] = '\0';
        akg_buf_consume(&s->plain, n + 1);
        on_line(s, line);
        free(line);
        if (s->input_active && !s->ending && !s->pasting)
            prompt(s);
    }
}

static void on_drain(uv_timer_t *t)
{
    drain_plain(t->data);
}
#endif

static void on_readable(uv_poll_t *h, int status, int events)
{
    session *s = h->data;
    (void)events;
    if (status < 0) {
        on_line(s, NULL);
        return;
    }
#ifdef AKG_HAVE_READLINE
    rl_callback_read_char();
#else
    char buf[4096];
    ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0)
        return; /* EAGAIN: nothing after all */
    if (n == 0) {
        if (s->plain.len) { /* a last line without a newline */
            akg_buf_append(&s->plain, "\n", 1);
            drain_plain(s);
        }
        if (s->input_active && !s->ending)
            on_line(s, NULL);
        return;
    }
    if (akg_buf_append(&s->plain, buf, (size_t)n)) {
        say("a line longer than %zu bytes: dropped", PASTE_LIMIT);
        akg_buf_free(&s->plain);
        akg_buf_init(&s->plain, PASTE_LIMIT);
        return;
    }
    drain_plain(s);
#endif
}

/* Shows the prompt ("akg> ", or "...  " inside a paste) and reads the terminal again. */
static void prompt(session *s)
{
    if (s->ending)
        return;
    const char *p = s->ask_code ? s->ask_prompt : s->pasting ? "...  " : "akg> ";
#ifdef AKG_HAVE_READLINE
    if (s->prompt_installed) {
        rl_set_prompt(p);
    } else {
        rl_callback_handler_install(p, on_rl_line);
        s->prompt_installed = 1;
    }
#else
    fputs(p, stdout);
    fflush(stdout);
#endif
    if (!s->input_active) {
        uv_poll_start(&s->input, UV_READABLE, on_readable);
        s->input_active = 1;
#ifndef AKG_HAVE_READLINE
        uv_timer_start(&s->drain, on_drain, 0, 0);
#endif
    }
}

/* Stops reading the terminal while a pipeline runs (what is typed waits in the terminal). */
static void pause_input(session *s)
{
#ifdef AKG_HAVE_READLINE
    if (s->prompt_installed)
        rl_callback_handler_remove();
#endif
    s->prompt_installed = 0;
    if (s->input_active)
        uv_poll_stop(&s->input);
    s->input_active = 0;
}

/* ---- the end ---- */

static void on_engine_closed(void *user)
{
    session *s = user;
    uv_close((uv_handle_t *)&s->sigint, NULL);
    uv_close((uv_handle_t *)&s->sigterm, NULL);
}

static void close_session(session *s)
{
    uv_close((uv_handle_t *)&s->input, NULL);
    uv_close((uv_handle_t *)&s->paste_end, NULL);
    uv_close((uv_handle_t *)&s->drain, NULL);
    akg_engine_close(s->engine, on_engine_closed, s);
}

static void end_session(session *s)
{
    if (s->ending)
        return;
    pause_input(s);
    s->ending = 1;
    uv_timer_stop(&s->paste_end);
    fputc('\n', stdout);
    fflush(stdout);
    if (s->job)
        akg_job_cancel(s->job); /* the session closes when its DONE comes */
    else
        close_session(s);
}

/* ---- runs ---- */

static void on_event(const akg_event *ev, void *user)
{
    session *s = user;
    if (ev->kind != AKG_EVENT_DONE) {
        if (!s->quiet)
            cli_op_print_progress(ev);
        return;
    }
    cli_op_print_summary(ev, s->json);
    fflush(stdout);
    s->job = NULL;
    if (s->ending) {
        close_session(s);
        return;
    }
    fputc('\n', stdout);
    prompt(s);
}

/* Runs the pipeline on the reference at path; the prompt comes back when it is done. */
static void start_run(session *s, const char *path, const char *name)
{
    char err[1024], out[4096];
    akg_job_options jo = s->base;
    jo.reference_path = path;
    if (s->base.output_dir) { /* one folder per run under --output */
        snprintf(out, sizeof out, "%s/%s_%d", s->base.output_dir, name, s->runs + 1);
        jo.output_dir = out;
    }
    pause_input(s);
    if (akg_job_start(s->engine, &jo, on_event, s, &s->job, err, sizeof err) != AKG_OK) {
        say("cannot start the pipeline on %s: %s", path, err);
        s->job = NULL;
        prompt(s);
        return;
    }
    s->runs++;
}

static int save_task(const char *name, const char *text, char *path, size_t n)
{
    char err[1024];
    snprintf(path, n, TASKS_DIR "/%s.py", name);
    if (akg_mkdirs(TASKS_DIR, err, sizeof err) ||
        akg_write_file(path, text, strlen(text), err, sizeof err)) {
        say("cannot save %s: %s", path, err);
        return -1;
    }
    return 0;
}

static void show_reference(const char *path, const char *text)
{
    printf("akg: wrote %s (edit it and rerun with `akg_cli op %s`):\n", path, path);
    for (const char *line = text; *line;) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        printf("    | %.*s\n", (int)n, line);
        line += n + (nl != NULL);
    }
    fflush(stdout);
}

static void handle_request(session *s, const char *text)
{
    cli_request r;
    char err[4096];
    if (cli_request_parse(text, &r, err, sizeof err)) {
        say("%s", err);
        if (s->base.provider && strcmp(s->base.provider, "builtin") != 0)
            say("(requests in words are read by these rules only: nothing typed here goes to the "
                "%s provider, which designs kernels for a reference you paste)",
                s->base.provider);
        return;
    }
    char desc[1024], name[256], path[512];
    static char ref[16384];
    cli_request_describe(&r, desc, sizeof desc);
    cli_request_name(&r, name, sizeof name);
    say("request: %s", desc);
    if (cli_request_reference(&r, text, ref, sizeof ref)) {
        say("the reference for this request does not fit in %zu bytes", sizeof ref);
        return;
    }
    if (save_task(name, ref, path, sizeof path))
        return;
    show_reference(path, ref);
    start_run(s, path, name);
}

/* The selection for the TaskConstructor: the first line of the paste's top-level nn.Module
 * class, else of its last class, else of its last function; 0 when it has none. */
static unsigned snippet_selection(const char *code)
{
    unsigned line = 1, module = 0, cls = 0, fn = 0;
    for (const char *p = code; *p; line++) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (!strncmp(p, "class ", 6)) {
            cls = line;
            const char *colon = memchr(p, ':', n);
            if (colon && memmem(p, (size_t)(colon - p), "Module", 6) && !module)
                module = line;
        } else if (!strncmp(p, "def ", 4) || !strncmp(p, "async def ", 10)) {
            fn = line;
        }
        p += n + (nl != NULL);
    }
    return module ? module : cls ? cls : fn;
}

/* The next thing the TaskConstructor lacks: the question in full (the engine words it), and a
 * prompt short enough for readline to show whole on a narrow terminal. */
static void next_question(session *s)
{
    const akg_task_need *need = &s->needs.items[s->ask_next];
    char q[600];
    akg_task_need_question(need, q, sizeof q);
    say("%s", q);
    if (need->kind == AKG_TASK_NEED_SHAPE)
        snprintf(s->ask_prompt, sizeof s->ask_prompt, "shape of `%s` (f32[8, 64] or 8x64)? ",
                 need->name);
    else if (need->kind == AKG_TASK_NEED_VALUE)
        snprintf(s->ask_prompt, sizeof s->ask_prompt, "value of `%s` (a whole number)? ",
                 need->name);
    else
        snprintf(s->ask_prompt, sizeof s->ask_prompt, "arguments of %s ([64])? ", need->owner);
}

/* Builds the reference for the snippet's line sel and runs it; when a shape, a symbol's value
 * or the constructor's arguments are unknown, asks for them (never guesses) and tries again.
 * Takes code (freed here or kept for the answer). */
static void construct_snippet(session *s, char *code, unsigned sel)
{
    char path[512], err[4096];
    akg_constructed_task t;
    int rc = akg_task_construct_needs(code, strlen(code), "<pasted>", sel, sel, &t, &s->needs, err,
                                      sizeof err);
    if (rc != AKG_OK) {
        say("the TaskConstructor could not build a reference from the paste: %s", err);
        if (rc == AKG_ENOTFOUND && s->asks < 8 && s->needs.n > 0) {
            say("answer below (an empty line drops the paste), or Ctrl-C");
            s->ask_code = code;
            s->ask_sel = sel;
            s->asks++;
            s->ask_next = 0;
            s->ask_lines[0] = '\0';
            next_question(s);
            return;
        }
        say("add what it names to the code and paste it again (lines count from the paste's "
            "first)");
        free(code);
        return;
    }
    say("a model snippet: the TaskConstructor built a reference from line %u of the paste", sel);
    if (save_task(t.name, t.reference, path, sizeof path) == 0) {
        show_reference(path, t.reference);
        start_run(s, path, t.name);
    }
    akg_constructed_task_free(&t);
    free(code);
}

/* An answer to the TaskConstructor's question: checked (a wrong one is refused and asked
 * again), it becomes a comment; once all are answered they go above the code, and again. */
static void answer_question(session *s, const char *answer)
{
    if (!*answer) {
        say("paste dropped");
        free(s->ask_code);
        s->ask_code = NULL;
        return;
    }
    char comment[1024], err[1024];
    if (akg_task_need_answer(&s->needs.items[s->ask_next], answer, comment, sizeof comment, err,
                             sizeof err) != AKG_OK) {
        say("%s; answer again (an empty line drops the paste)", err);
        return;
    }
    size_t used = strlen(s->ask_lines);
    if (used + strlen(comment) + 2 > sizeof s->ask_lines) {
        say("too many answers for one paste; add the comments to the code and paste it again");
        free(s->ask_code);
        s->ask_code = NULL;
        return;
    }
    snprintf(s->ask_lines + used, sizeof s->ask_lines - used, "%s\n", comment);
    say("added `%s` above the paste", comment);
    if (++s->ask_next < s->needs.n) {
        next_question(s);
        return;
    }
    char *code = s->ask_code;
    unsigned sel = s->ask_sel, added = 0;
    s->ask_code = NULL;
    for (const char *p = s->ask_lines; *p; p++)
        added += *p == '\n';
    akg_buf b;
    akg_buf_init(&b, PASTE_LIMIT + sizeof s->ask_lines);
    akg_buf_appendf(&b, "%s%s", s->ask_lines, code);
    free(code);
    char *with = akg_buf_take(&b);
    if (!with) {
        say("out of memory");
        return;
    }
    construct_snippet(s, with, sel + added);
}

static void handle_code(session *s, char *code)
{
    char path[512], name[256];
    unsigned lines = 0;
    for (const char *p = code; *p; p++)
        lines += *p == '\n';
    if (strstr(code, "class Model") && strstr(code, "def get_inputs") &&
        strstr(code, "def get_init_inputs")) {
        int n = 1;
        do
            snprintf(path, sizeof path, TASKS_DIR "/pasted_%d.py", n++);
        while (access(path, F_OK) == 0 && n < 100000);
        snprintf(name, sizeof name, "pasted_%d", n - 1);
        if (save_task(name, code, path, sizeof path))
            return;
        say("a KernelBench reference (%u lines): saved as %s", lines, path);
        start_run(s, path, name);
        return;
    }
    unsigned sel = snippet_selection(code);
    if (!sel) {
        say("the pasted code (%u lines) has no class or function at its top level, and is not a "
            "KernelBench reference (class Model, get_inputs, get_init_inputs). What works: a "
            "class X(nn.Module) or a function, with its input shapes given by a comment "
            "(`# akg: x: f32[8, 64]`), annotations or a sample call (`X(64)(torch.randn(8, "
            "64))`); or a whole reference; or a request in words (`help`)",
            lines);
        return;
    }
    s->asks = 0;
    char *copy = akg_strdup(code);
    if (copy)
        construct_snippet(s, copy, sel);
}

static void finish_paste(session *s)
{
    s->pasting = 0;
    s->blank_pending = 0;
    uv_timer_stop(&s->paste_end);
    char *code = akg_buf_take(&s->paste);
    akg_buf_init(&s->paste, PASTE_LIMIT);
    if (!code) {
        say("the paste is longer than %zu bytes: dropped; save it to a file and run `akg_cli op "
            "FILE` or `akg_cli task FILE --select LINE`",
            PASTE_LIMIT);
        return;
    }
    handle_code(s, code);
    free(code);
}

static void on_paste_quiet(uv_timer_t *t)
{
    session *s = t->data;
    /* libuv runs due timers before it polls: after a stall of the process the rest of a paste
     * may be waiting unread. It is part of the paste, not a new one. */
    struct pollfd pending = {.fd = STDIN_FILENO, .events = POLLIN};
    if (poll(&pending, 1, 0) == 1 && (pending.revents & POLLIN)) {
        uv_timer_start(&s->paste_end, on_paste_quiet, PASTE_QUIET_MS, 0);
        return;
    }
    pause_input(s); /* the prompt shown for the next paste line goes */
    fputc('\n', stdout);
    finish_paste(s);
    if (!s->job)
        prompt(s);
}

static void print_help(void)
{
    printf("akg: paste a KernelBench reference (class Model, get_inputs, get_init_inputs) or a\n"
           "     model snippet (an nn.Module class or a function, with shapes from `# akg: x:\n"
           "     f32[8, 64]` comments, annotations or a sample call); end it with a blank line\n"
           "     or Ctrl-D. Or type a request: %s.\n"
           "     Ctrl-C stops a run or drops what is typed; Ctrl-D or `quit` leaves.\n",
           cli_request_help());
    fflush(stdout);
}

static int blank(const char *line)
{
    for (; *line; line++)
        if (*line != ' ' && *line != '\t' && *line != '\r')
            return 0;
    return 1;
}

/* One line from the terminal; NULL at Ctrl-D. */
static void on_line(session *s, char *line)
{
    if (s->ending)
        return;
    if (!line) {
        if (s->pasting) {
            pause_input(s);
            fputc('\n', stdout);
            finish_paste(s);
            if (!s->job)
                prompt(s);
        } else {
            end_session(s);
        }
        return;
    }
    if (s->ask_code) {
        while (*line == ' ' || *line == '\t')
            line++;
        answer_question(s, line);
        if (!s->job)
            prompt(s);
        return;
    }
    if (s->pasting) {
        if (s->blank_pending) { /* the blank line was inside the paste */
            uv_timer_stop(&s->paste_end);
            s->blank_pending = 0;
            akg_buf_puts(&s->paste, "\n");
        }
        if (blank(line)) {
            s->blank_pending = 1;
            uv_timer_start(&s->paste_end, on_paste_quiet, PASTE_QUIET_MS, 0);
            return;
        }
        akg_buf_puts(&s->paste, line);
        akg_buf_puts(&s->paste, "\n");
        return;
    }
    while (*line == ' ' || *line == '\t')
        line++;
    size_t n = strlen(line);
    while (n && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r'))
        line[--n] = '\0';
    if (!n)
        return;
    if (!strcmp(line, "quit") || !strcmp(line, "exit")) {
        end_session(s);
        return;
    }
    if (!strcmp(line, "help") || !strcmp(line, "?")) {
        print_help();
        return;
    }
    if (cli_request_looks_like_code(line)) {
        s->pasting = 1;
        akg_buf_puts(&s->paste, line);
        akg_buf_puts(&s->paste, "\n");
        prompt(s);
        return;
    }
#ifdef AKG_HAVE_READLINE
    add_history(line);
    if (s->history[0])
        write_history(s->history);
#endif
    handle_request(s, line);
}

static void on_signal(uv_signal_t *h, int signum)
{
    session *s = h->data;
    if (signum == SIGTERM) {
        end_session(s);
        return;
    }
    if (s->job) {
        fprintf(stderr, "[akg] cancelling...\n");
        akg_job_cancel(s->job);
        return;
    }
    if (s->ending)
        return;
    /* Ctrl-C at the prompt: drop the line, the paste or the question, as a shell does */
    free(s->ask_code);
    s->ask_code = NULL;
    if (s->pasting) {
        uv_timer_stop(&s->paste_end);
        s->pasting = s->blank_pending = 0;
        akg_buf_free(&s->paste);
        akg_buf_init(&s->paste, PASTE_LIMIT);
    }
    pause_input(s);
    fputs("^C\n", stdout);
    prompt(s);
}

static void history_path(char *buf, size_t n)
{
    const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    char err[512];
    buf[0] = '\0';
    if (state && *state)
        snprintf(buf, n, "%s/akg/history", state);
    else if (home && *home)
        snprintf(buf, n, "%s/.akg/history", home);
    if (!buf[0])
        return;
    char *dir = akg_strdup(buf);
    if (!dir || akg_mkdirs(dirname(dir), err, sizeof err))
        buf[0] = '\0'; /* no history kept: the session works without it */
    free(dir);
}

int cli_interactive(uv_loop_t *loop, const cli_session_options *opts)
{
    session *s = calloc(1, sizeof *s);
    if (!s) {
        fprintf(stderr, "akg_cli op: out of memory\n");
        akg_engine_close(opts->engine, NULL, NULL);
        uv_run(loop, UV_RUN_DEFAULT);
        return 1;
    }
    s->loop = loop;
    s->engine = opts->engine;
    s->base = *opts->job;
    s->quiet = opts->quiet;
    s->json = opts->json;
    akg_buf_init(&s->paste, PASTE_LIMIT);
    akg_buf_init(&s->plain, PASTE_LIMIT);
    s->stdin_flags = fcntl(STDIN_FILENO, F_GETFL);
    uv_poll_init(loop, &s->input, STDIN_FILENO);
    uv_timer_init(loop, &s->paste_end);
    uv_timer_init(loop, &s->drain);
    uv_signal_init(loop, &s->sigint);
    uv_signal_init(loop, &s->sigterm);
    s->input.data = s->paste_end.data = s->drain.data = s->sigint.data = s->sigterm.data = s;
    uv_signal_start(&s->sigint, on_signal, SIGINT);
    uv_signal_start(&s->sigterm, on_signal, SIGTERM);
    history_path(s->history, sizeof s->history);
#ifdef AKG_HAVE_READLINE
    rl_session = s;
    rl_readline_name = "akg";
    rl_catch_signals = 0;                              /* Ctrl-C is the loop's (on_signal) */
    rl_variable_bind("enable-bracketed-paste", "off"); /* a paste arrives line by line */
    rl_bind_key('\t', rl_insert);                      /* pasted code keeps its tabs */
    using_history();
    stifle_history(1000);
    if (s->history[0])
        read_history(s->history);
    const char *editing = "readline editing, history in ";
#else
    const char *editing = "plain line input (built without readline), no history; ";
#endif
    printf("akg interactive: %s/%s, %s provider. Paste a KernelBench reference or a model\n"
           "snippet (end it with a blank line or Ctrl-D), or type a request such as\n"
           "    softmax over the last dim of a 512x4096 float32 tensor\n"
           "`help` says what requests understand; Ctrl-D or `quit` leaves (%s%s).\n",
           s->base.backend ? s->base.backend : "cpu", s->base.dsl ? s->base.dsl : "cpp",
           s->base.provider ? s->base.provider : "builtin", editing,
           s->history[0] ? s->history : "none kept");
    fflush(stdout);
    prompt(s);
    uv_run(loop, UV_RUN_DEFAULT);
#ifdef AKG_HAVE_READLINE
    if (s->history[0])
        write_history(s->history);
    rl_session = NULL;
#endif
    if (s->stdin_flags >= 0)
        fcntl(STDIN_FILENO, F_SETFL, s->stdin_flags); /* the shell's terminal as it was */
    akg_buf_free(&s->paste);
    akg_buf_free(&s->plain);
    free(s->ask_code);
    free(s);
    return 0;
}
