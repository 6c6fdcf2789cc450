/*
 * config.h: settings, in the original AKG CLI's shape.
 *
 * - backends/<backend>/<dsl>/config.yaml: the seed's fields (agent_model_config,
 *   log_dir, default_workflow, profile_settings.run_times/warmup_times,
 *   verify_timeout, max_step) and the search workflows' evolve: and adaptive_search:
 *   sections, read with libyaml into cJSON.
 * - settings.json: model endpoints per level (complex/standard/fast), from the
 *   project's .akg/ then the user's ~/.akg/; the variables AKG_AGENTS_BASE_URL,
 *   AKG_AGENTS_API_KEY and AKG_AGENTS_MODEL_NAME override them. API keys are
 *   never logged or written anywhere.
 */
#ifndef AKG_CONFIG_H
#define AKG_CONFIG_H

#include <cjson/cJSON.h>

/* Parses a YAML file into cJSON (mappings -> objects, sequences -> arrays,
 * plain scalars that look numeric -> numbers, true/false -> bools). The caller
 * deletes the result. */
int akg_yaml_load(const char *path, cJSON **out, char *err, size_t errlen);
/* The same from text[0..len) (a Markdown file's YAML header); errors read "line N: ...", N
 * counted from the start of text. */
int akg_yaml_parse(const char *text, size_t len, cJSON **out, char *err, size_t errlen);

/* Looks up a dotted path ("profile_settings.run_times") in a cJSON object. */
const cJSON *akg_config_get(const cJSON *root, const char *dotted);
double akg_config_number(const cJSON *root, const char *dotted, double fallback);
const char *akg_config_string(const cJSON *root, const char *dotted, const char *fallback);

/* Loads backends/<backend>/<dsl>/config.yaml under akg_data_dir() and checks its evolve: and
 * adaptive_search: sections (each key's type and range); a bad value fails the load with
 * AKG_EINVAL and an error naming the file, the key, the value and the range that works. */
int akg_backend_config_load(const char *backend, const char *dsl, cJSON **out, char *err,
                            size_t errlen);

#endif
