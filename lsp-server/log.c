/* log.c: see log.h. */
#include "log.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static FILE *log_file;
static akg_lsp_log_level log_file_level = AKG_LSP_LOG_INFO;
static akg_lsp_log_sink log_sink;
static void *log_sink_user;
static int log_sink_level;
static int log_in_sink; /* the sink may log while writing; do not recurse */

int akg_lsp_log_open(const char *path)
{
    akg_lsp_log_close();
    if (!path)
        return 0;
    log_file = fopen(path, "a");
    if (!log_file)
        return -1;
    setvbuf(log_file, NULL, _IOLBF, 0);
    return 0;
}

void akg_lsp_log_close(void)
{
    if (log_file)
        fclose(log_file);
    log_file = NULL;
}

void akg_lsp_log_set_file_level(akg_lsp_log_level level)
{
    log_file_level = level;
}

void akg_lsp_log_set_sink(akg_lsp_log_sink sink, void *user, int max_level)
{
    log_sink = sink;
    log_sink_user = user;
    log_sink_level = max_level;
}

void akg_lsp_log_set_sink_level(int max_level)
{
    log_sink_level = max_level;
}

static const char *level_name(akg_lsp_log_level level)
{
    switch (level) {
    case AKG_LSP_LOG_ERROR:
        return "error";
    case AKG_LSP_LOG_WARN:
        return "warn";
    case AKG_LSP_LOG_INFO:
        return "info";
    default:
        return "debug";
    }
}

void akg_lsp_log(akg_lsp_log_level level, const char *fmt, ...)
{
    int to_file = log_file && level <= log_file_level;
    int to_sink = log_sink && !log_in_sink && (int)level <= log_sink_level;
    if (!to_file && !to_sink)
        return;

    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* One line per entry: newlines inside a message would split it. */
    for (char *p = line; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';

    if (to_file) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        struct tm tm;
        gmtime_r(&ts.tv_sec, &tm);
        fprintf(log_file, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %-5s %s\n", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
                level_name(level), line);
    }
    if (to_sink) {
        log_in_sink = 1;
        log_sink(level, line, log_sink_user);
        log_in_sink = 0;
    }
}
