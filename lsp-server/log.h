/*
 * log.h: the server's own log.
 *
 * Lines go to the file given with --log (if any) and, when the client asked
 * for it with $/setTrace (or the `akg.trace` setting), to window/logMessage
 * through a sink the server installs. The log never writes to stdout: that is
 * the protocol stream.
 */
#ifndef AKG_LSP_LOG_H
#define AKG_LSP_LOG_H

#include <stdarg.h>

typedef enum {
    AKG_LSP_LOG_ERROR = 1,
    AKG_LSP_LOG_WARN = 2,
    AKG_LSP_LOG_INFO = 3,
    AKG_LSP_LOG_DEBUG = 4
} akg_lsp_log_level;

/* Where window/logMessage lines go; set by the server once it can write. */
typedef void (*akg_lsp_log_sink)(akg_lsp_log_level level, const char *line, void *user);

/* Opens path for appending; returns 0 or -1 (errno set). NULL closes the file. */
int akg_lsp_log_open(const char *path);
void akg_lsp_log_close(void);
/* The most verbose level written to the file (default INFO; DEBUG when tracing). */
void akg_lsp_log_set_file_level(akg_lsp_log_level level);
/* The most verbose level sent to the sink; 0 sends nothing ($/setTrace off). */
void akg_lsp_log_set_sink(akg_lsp_log_sink sink, void *user, int max_level);
void akg_lsp_log_set_sink_level(int max_level);

void akg_lsp_log(akg_lsp_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define akg_lsp_log_error(...) akg_lsp_log(AKG_LSP_LOG_ERROR, __VA_ARGS__)
#define akg_lsp_log_warn(...) akg_lsp_log(AKG_LSP_LOG_WARN, __VA_ARGS__)
#define akg_lsp_log_info(...) akg_lsp_log(AKG_LSP_LOG_INFO, __VA_ARGS__)
#define akg_lsp_log_debug(...) akg_lsp_log(AKG_LSP_LOG_DEBUG, __VA_ARGS__)

#endif
