/*
 * akg-lsp: the akg language server. Speaks LSP over stdin/stdout.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "akg/akg.h"
#include "jsonrpc.h"
#include "log.h"
#include "server.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: akg-lsp [--stdio] [--log FILE] [--max-message BYTES]\n"
            "       akg-lsp --version | --help\n"
            "\n"
            "The akg language server: code actions that generate, verify and profile kernels\n"
            "for PyTorch reference operators, with results as diagnostics, hovers and lenses.\n"
            "It speaks the Language Server Protocol on stdin/stdout; start it from an editor.\n"
            "\n"
            "  --stdio              talk over stdin/stdout (the default and only transport)\n"
            "  --log FILE           append the server's log to FILE\n"
            "  --max-message BYTES  refuse messages larger than this (default %zu)\n"
            "  --version            print the version and exit\n"
            "  --help               print this help and exit\n"
            "\n"
            "Environment: AKG_PYTHON (harness interpreter), AKG_STORE (results database),\n"
            "AKG_HOME (product data folder).\n",
            (size_t)AKG_RPC_DEFAULT_MAX_MESSAGE);
}

int main(int argc, char **argv)
{
    const char *log_path = NULL;
    size_t max_message = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--stdio") == 0)
            continue;
        if (strcmp(a, "--version") == 0) {
            printf("akg-lsp %s\n", AKG_VERSION);
            return 0;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "--log") == 0 && i + 1 < argc) {
            log_path = argv[++i];
            continue;
        }
        if (strncmp(a, "--log=", 6) == 0) {
            log_path = a + 6;
            continue;
        }
        if (strcmp(a, "--max-message") == 0 && i + 1 < argc) {
            char *end;
            unsigned long long v = strtoull(argv[++i], &end, 10);
            if (*end || v < 1024) {
                fprintf(stderr, "akg-lsp: --max-message needs a number of bytes >= 1024\n");
                return 2;
            }
            max_message = (size_t)v;
            continue;
        }
        /* Clients add this; the server ends on end of input instead. */
        if (strncmp(a, "--clientProcessId", 17) == 0) {
            if (!strchr(a, '=') && i + 1 < argc)
                i++;
            continue;
        }
        fprintf(stderr, "akg-lsp: unknown argument %s\n", a);
        usage(stderr);
        return 2;
    }
    if (log_path && akg_lsp_log_open(log_path) != 0) {
        fprintf(stderr, "akg-lsp: cannot open log %s\n", log_path);
        return 2;
    }
    /* A client that goes away must not kill us mid-write. */
    signal(SIGPIPE, SIG_IGN);

    uv_loop_t loop;
    uv_loop_init(&loop);
    akg_lsp_server *server = NULL;
    char err[512];
    if (akg_lsp_server_new(&loop, 0, 1, max_message, &server, err, sizeof err) != AKG_OK) {
        fprintf(stderr, "akg-lsp: %s\n", err);
        uv_loop_close(&loop);
        return 2;
    }
    akg_lsp_log_info("akg-lsp %s started (pid %d)", AKG_VERSION, (int)uv_os_getpid());
    uv_run(&loop, UV_RUN_DEFAULT);
    int code = akg_lsp_server_exit_code(server);
    if (akg_lsp_server_exit_forced(server)) {
        /* Handles still open use the server's memory: leave without them. */
        akg_lsp_log_info("exit %d (forced)", code);
        akg_lsp_log_close();
        _exit(code);
    }
    akg_lsp_server_free(server);
    int rc = uv_loop_close(&loop);
    if (rc != 0)
        akg_lsp_log_error("loop closed with handles still open: %s", uv_strerror(rc));
    akg_lsp_log_info("exit %d", code);
    akg_lsp_log_close();
    return code;
}
