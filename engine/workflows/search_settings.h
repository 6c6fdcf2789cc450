/*
 * search_settings.h: the settings of the search workflows from a DSL's config.yaml.
 *
 * The config's `evolve:` and `adaptive_search:` sections hold the parameters of
 * akg_evolve_params and akg_adaptive_params (search_rules.h) under the same names, each one
 * optional; a key left out keeps the original AKG's default (akg_evolve_params_default,
 * akg_adaptive_params_default). akg_backend_config_load checks both sections when it loads a
 * backend's config, so a bad value fails the job before anything runs, with an error that names
 * the file, the key, the value and the range that works; the search workflows then read the
 * checked values, and a job's options (akg_cli op --max-rounds, --parallel-num, --num-islands,
 * --max-total-tasks) win over them. Engine-private, like search_rules.h.
 */
#ifndef AKG_SEARCH_SETTINGS_H
#define AKG_SEARCH_SETTINGS_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "akg/engine.h"
#include "search_rules.h"

/* Checks the evolve: and adaptive_search: sections of config (a parsed config.yaml; either may be
 * absent or empty). config_path names the file in errors. Returns AKG_OK, or AKG_EINVAL with err
 * reading "<config_path>: evolve.parallel_num is 0; it must be a whole number from 1 to 1000
 * (...)": a section that is not a mapping, a key that is not a setting of the section, or a
 * value of the wrong type or out of range. */
int akg_search_settings_check(const cJSON *config, const char *config_path, char *err,
                              size_t errlen);

/* Fills *ev and *ad: the defaults, then the config's sections, then each option of opts greater
 * than 0 (opts may be NULL). Checks as akg_search_settings_check does and returns its status;
 * on failure *ev and *ad hold the defaults. */
int akg_search_settings_read(const cJSON *config, const char *config_path,
                             const akg_search_options *opts, akg_evolve_params *ev,
                             akg_adaptive_params *ad, char *err, size_t errlen);

#endif
