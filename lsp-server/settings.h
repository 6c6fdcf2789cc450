/*
 * settings.h: the `akg` settings section.
 *
 * Read from initializationOptions, from workspace/configuration answers and
 * from workspace/didChangeConfiguration. Unknown keys are ignored; a key of
 * the wrong type is ignored with a warning in the log, so one bad value does
 * not throw away the rest.
 */
#ifndef AKG_LSP_SETTINGS_H
#define AKG_LSP_SETTINGS_H

#include <cjson/cJSON.h>

typedef struct {
    cJSON *targets;          /* array of {"backend","dsl","arch"?}; never NULL after init */
    char *provider;          /* "builtin" */
    int devices;             /* harness workers; 0: the engine's default */
    char *python;            /* harness interpreter; NULL: the engine's default */
    char *store_path;        /* NULL: the engine's default */
    int max_jobs;            /* 0: the engine's default */
    int auto_probe;          /* run a design-only job when a reference without results opens */
    double verify_timeout_s; /* per-verification limit; 0: the backend's verify_timeout */
    char *trace;             /* "off", "messages", "verbose" */
} akg_lsp_settings;

/* Fills defaults (one target: cpu/cpp). The settings own their strings;
 * release with akg_lsp_settings_free. */
void akg_lsp_settings_init(akg_lsp_settings *s);
void akg_lsp_settings_free(akg_lsp_settings *s);
/* Merges a settings object: either the section itself or an object holding
 * it under "akg". Returns a bitmask of AKG_LSP_SETTINGS_* that changed. */
int akg_lsp_settings_apply(akg_lsp_settings *s, const cJSON *obj);

#define AKG_LSP_SETTINGS_ENGINE 1 /* python, storePath, devices, maxJobs */
#define AKG_LSP_SETTINGS_TARGETS 2
#define AKG_LSP_SETTINGS_TRACE 4

/* Parses one target, "cpu/cpp" or {"backend","dsl","arch"}, into a new
 * object the caller owns; NULL when malformed. */
cJSON *akg_lsp_target_parse(const cJSON *item);

#endif
