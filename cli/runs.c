/* runs.c: `akg_cli runs`, the recent runs in the store, newest first. Opening
 * the store marks the runs whose process died without ending them
 * "interrupted" (akg/store.h); the table says what that means when it shows
 * one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/store.h"
#include "cli.h"

int cli_runs(int argc, char **argv)
{
    const char *store_path = NULL, *limit = NULL, *reference = NULL;
    int help = 0, json = 0;
    cli_flag flags[] = {{"store", 1, &store_path, NULL}, {"limit", 1, &limit, NULL},
                        {"reference", 1, &reference, NULL}, {"json", 0, NULL, &json},
                        {"help", 0, NULL, &help}, {NULL, 0, NULL, NULL}};
    const char *pos[1];
    int npos;
    if (cli_parse("runs", argc, argv, flags, pos, 0, &npos))
        return 2;
    if (help) {
        printf("usage: akg_cli runs [--store FILE] [--limit N] [--reference FILE] [--json]\n");
        return 0;
    }
    char path[4096];
    if (!store_path) {
        const char *env = getenv("AKG_STORE");
        const char *home = getenv("HOME");
        if (env && *env)
            snprintf(path, sizeof path, "%s", env);
        else
            snprintf(path, sizeof path, "%s/.akg/akg.db", home ? home : ".");
        store_path = path;
    }
    akg_store *st;
    char err[512];
    if (akg_store_open(store_path, &st, err, sizeof err)) {
        fprintf(stderr, "akg_cli runs: %s\n", err);
        return 1;
    }
    char *abs = reference ? akg_abspath(reference) : NULL;
    cJSON *runs = akg_store_recent_runs(st, abs, limit ? atoi(limit) : 20);
    free(abs);
    if (json) {
        char *t = cJSON_Print(runs);
        printf("%s\n", t ? t : "[]");
        free(t);
    } else {
        printf("%-5s %-20s %-10s %-8s %-15s %-11s %8s  %s\n", "id", "started", "op", "target",
               "workflow", "status", "speedup", "reference");
        const cJSON *r;
        int interrupted = 0;
        cJSON_ArrayForEach(r, runs) {
            char target[64];
            snprintf(target, sizeof target, "%s/%s",
                     cJSON_GetStringValue(cJSON_GetObjectItem(r, "backend")),
                     cJSON_GetStringValue(cJSON_GetObjectItem(r, "dsl")));
            const cJSON *sp = cJSON_GetObjectItem(r, "speedup");
            char spb[32] = "-";
            if (cJSON_IsNumber(sp))
                snprintf(spb, sizeof spb, "%.2fx", sp->valuedouble);
            const cJSON *rep = cJSON_GetObjectItem(r, "report");
            const char *op = cJSON_GetStringValue(cJSON_GetObjectItem(rep, "op"));
            const char *ref = cJSON_GetStringValue(cJSON_GetObjectItem(r, "reference_path"));
            const char *base = ref ? strrchr(ref, '/') : NULL;
            printf("%-5.0f %-20s %-10s %-8s %-15s %-11s %8s  %s\n",
                   cJSON_GetObjectItem(r, "id")->valuedouble,
                   cJSON_GetStringValue(cJSON_GetObjectItem(r, "started_at")), op ? op : "-",
                   target, cJSON_GetStringValue(cJSON_GetObjectItem(r, "workflow")),
                   cJSON_GetStringValue(cJSON_GetObjectItem(r, "status")), spb,
                   base ? base + 1 : (ref ? ref : ""));
            const char *status = cJSON_GetStringValue(cJSON_GetObjectItem(r, "status"));
            interrupted |= status && strcmp(status, "interrupted") == 0;
        }
        if (interrupted)
            printf("\ninterrupted: the process running it ended without finishing it (killed, "
                   "crashed, or the machine restarted); run it again\n");
    }
    cJSON_Delete(runs);
    akg_store_close(st);
    return 0;
}
