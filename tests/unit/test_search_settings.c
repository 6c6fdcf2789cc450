/*
 * test_search_settings.c: the evolve: and adaptive_search: sections of a DSL config
 * (engine/workflows/search_settings.c). A config with both sections gives their values to the
 * search's parameters and a job's options win over them; a config without them gives the
 * original AKG's defaults, and so does every backend's config.yaml in the tree; a bad value
 * fails the config's load (and so a job's start) with the file, the key, the value and the
 * range that works.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "../../engine/workflows/search_settings.h"
#include "akg/akg.h"
#include "akg/backend.h"
#include "akg/config.h"
#include "akg/engine.h"
#include "check.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-12)

static cJSON *parse(const char *yaml)
{
    cJSON *cfg = NULL;
    char err[256];
    if (akg_yaml_parse(yaml, strlen(yaml), &cfg, err, sizeof err) != AKG_OK)
        fprintf(stderr, "yaml: %s\n", err);
    return cfg;
}

/* the values of the original AKG, written out so that a changed default is seen */
static void check_defaults(const akg_evolve_params *ev, const akg_adaptive_params *ad)
{
    CHECK(ev->max_rounds == 3 && ev->parallel_num == 4 && ev->num_islands == 2);
    CHECK(ev->migration_interval == 2 && ev->elite_size == 5);
    CHECK(NEAR(ev->parent_selection_prob, 0.5));
    CHECK(ad->max_total_tasks == 12 && ad->initial_task_count == 4);
    CHECK(NEAR(ad->exploration_coef, 1.414) && NEAR(ad->random_factor, 0.01));
    CHECK(ad->convergence_window == 5 && NEAR(ad->convergence_threshold, 0.02));
    CHECK(ad->patience == 3);
}

static void test_sections_reach_parameters(void)
{
    cJSON *cfg = parse("max_step: 4\n"
                       "evolve:\n  max_rounds: 6\n  parallel_num: 3\n  num_islands: 4\n"
                       "  migration_interval: 0\n  elite_size: 7\n  parent_selection_prob: 0.25\n"
                       "adaptive_search:\n  max_total_tasks: 30\n  initial_task_count: 6\n"
                       "  exploration_coef: 0\n  random_factor: 0.5\n  convergence_window: 9\n"
                       "  convergence_threshold: 0.1\n  patience: 2\n");
    CHECK(cfg != NULL);
    akg_evolve_params ev;
    akg_adaptive_params ad;
    char err[512] = "";
    CHECK(akg_search_settings_read(cfg, "c.yaml", NULL, &ev, &ad, err, sizeof err) == AKG_OK);
    CHECK(ev.max_rounds == 6 && ev.parallel_num == 3 && ev.num_islands == 4);
    CHECK(ev.migration_interval == 0 && ev.elite_size == 7);
    CHECK(NEAR(ev.parent_selection_prob, 0.25));
    CHECK(ad.max_total_tasks == 30 && ad.initial_task_count == 6);
    CHECK(NEAR(ad.exploration_coef, 0) && NEAR(ad.random_factor, 0.5));
    CHECK(ad.convergence_window == 9 && NEAR(ad.convergence_threshold, 0.1));
    CHECK(ad.patience == 2);

    /* the job's options (akg_cli op's flags) win; an option of 0 leaves the config's value */
    akg_search_options o = {0};
    o.max_rounds = 1;
    o.num_islands = 1;
    o.max_total_tasks = 3;
    CHECK(akg_search_settings_read(cfg, "c.yaml", &o, &ev, &ad, err, sizeof err) == AKG_OK);
    CHECK(ev.max_rounds == 1 && ev.num_islands == 1 && ad.max_total_tasks == 3);
    CHECK(ev.parallel_num == 3 && ev.elite_size == 7 && ad.patience == 2);
    cJSON_Delete(cfg);

    /* a key left out keeps its default */
    cfg = parse("evolve:\n  elite_size: 2\nadaptive_search: {patience: 8}\n");
    CHECK(akg_search_settings_read(cfg, "c.yaml", NULL, &ev, &ad, err, sizeof err) == AKG_OK);
    CHECK(ev.elite_size == 2 && ev.max_rounds == 3 && NEAR(ev.parent_selection_prob, 0.5));
    CHECK(ad.patience == 8 && ad.max_total_tasks == 12);
    cJSON_Delete(cfg);
}

static void test_no_sections_gives_defaults(void)
{
    akg_evolve_params ev;
    akg_adaptive_params ad;
    char err[512] = "";
    const char *texts[] = {"max_step: 4\n", "evolve:\nadaptive_search:\n",
                           "evolve: {}\nadaptive_search: {}\n"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        cJSON *cfg = parse(texts[i]);
        CHECK(cfg != NULL);
        memset(&ev, 0, sizeof ev);
        memset(&ad, 0, sizeof ad);
        CHECK(akg_search_settings_read(cfg, "c.yaml", NULL, &ev, &ad, err, sizeof err) == AKG_OK);
        check_defaults(&ev, &ad);
        cJSON_Delete(cfg);
    }

    /* every backend's config.yaml in the tree writes the defaults out, and they load */
    setenv("AKG_HOME", getenv("AKG_SOURCE_DIR"), 1);
    int backends = 0;
    for (const akg_backend *const *b = akg_backend_list(); *b; b++, backends++) {
        cJSON *cfg = NULL;
        int rc = akg_backend_config_load((*b)->name, (*b)->dsl, &cfg, err, sizeof err);
        CHECK(rc == AKG_OK);
        if (rc) {
            fprintf(stderr, "%s/%s: %s\n", (*b)->name, (*b)->dsl, err);
            continue;
        }
        CHECK(cJSON_IsObject(cJSON_GetObjectItem(cfg, "evolve")));
        CHECK(cJSON_IsObject(cJSON_GetObjectItem(cfg, "adaptive_search")));
        CHECK(akg_search_settings_read(cfg, "c.yaml", NULL, &ev, &ad, err, sizeof err) == AKG_OK);
        check_defaults(&ev, &ad);
        cJSON_Delete(cfg);
    }
    CHECK(backends >= 5);
}

static void write_text(const char *path, const char *text)
{
    CHECK(akg_write_file(path, text, strlen(text), NULL, 0) == AKG_OK);
}

/* Writes the config of cpu/cpp under home and loads it as a job would; returns the status. */
static int load_with(const char *home, const char *sections, char *err, size_t errlen)
{
    char path[600], text[2048];
    snprintf(path, sizeof path, "%s/backends/cpu/cpp/config.yaml", home);
    snprintf(text, sizeof text, "default_workflow: default\nmax_step: 2\n%s", sections);
    write_text(path, text);
    cJSON *cfg = NULL;
    err[0] = '\0';
    int rc = akg_backend_config_load("cpu", "cpp", &cfg, err, errlen);
    CHECK((rc == AKG_OK) == (cfg != NULL));
    cJSON_Delete(cfg);
    return rc;
}

static void on_closed(void *user)
{
    (*(int *)user)++;
}

static void on_event(const akg_event *ev, void *user)
{
    (void)ev;
    (void)user;
}

static void test_bad_values(const char *dir)
{
    char home[300], path[700], err[1024];
    snprintf(home, sizeof home, "%s/home", dir);
    snprintf(path, sizeof path, "%s/backends/cpu/cpp", home);
    CHECK(akg_mkdirs(path, NULL, 0) == AKG_OK);
    /* the engine wants a worker script in its data dir (never started here) */
    snprintf(path, sizeof path, "%s/backends/harness", home);
    CHECK(akg_mkdirs(path, NULL, 0) == AKG_OK);
    snprintf(path, sizeof path, "%s/backends/harness/worker.py", home);
    write_text(path, "raise SystemExit(3)\n");
    setenv("AKG_HOME", home, 1);
    char file[700];
    snprintf(file, sizeof file, "%s/backends/cpu/cpp/config.yaml", home);

    CHECK(load_with(home,
                    "evolve:\n  max_rounds: 1000\n  parent_selection_prob: 1\n"
                    "adaptive_search:\n  exploration_coef: 25\n  convergence_threshold: 0\n",
                    err, sizeof err) == AKG_OK);

    static const struct {
        const char *yaml, *message;
    } bad[] = {
        {"evolve:\n  parallel_num: 0\n",
         "evolve.parallel_num is 0; it must be a whole number from 1 to 1000 (the candidates a "
         "round)"},
        {"evolve:\n  max_rounds: 2.5\n",
         "evolve.max_rounds is 2.5; it must be a whole number from 1 to 1000 (the rounds of the "
         "search)"},
        {"evolve:\n  num_islands: 65\n",
         "evolve.num_islands is 65; it must be a whole number from 1 to 64 (the islands)"},
        {"evolve:\n  elite_size: -1\n", "evolve.elite_size is -1; it must be a whole number from "
                                        "1 to 64 (the best candidates an island keeps)"},
        {"evolve:\n  parent_selection_prob: 1.5\n",
         "evolve.parent_selection_prob is 1.5; it must be a number from 0 to 1 (the probability "
         "of a parent from its own island)"},
        {"evolve:\n  max_rounds: \"3\"\n", "evolve.max_rounds is \"3\"; it must be a whole number"},
        {"evolve:\n  max_rounds:\n", "evolve.max_rounds is null; it must be a whole number"},
        {"adaptive_search:\n  exploration_coef: -0.5\n",
         "adaptive_search.exploration_coef is -0.5; it must be a number of at least 0 (UCB's "
         "exploration weight)"},
        {"adaptive_search:\n  exploration_coef: .inf\n",
         "adaptive_search.exploration_coef is \".inf\"; it must be a number of at least 0"},
        {"adaptive_search:\n  convergence_threshold: 2\n",
         "adaptive_search.convergence_threshold is 2; it must be a number from 0 to 1"},
        {"adaptive_search:\n  random_factor: true\n",
         "adaptive_search.random_factor is true; it must be a number from 0 to 1"},
        {"adaptive_search:\n  convergence_window: 65\n",
         "adaptive_search.convergence_window is 65; it must be a whole number from 1 to 64"},
        {"adaptive_search:\n  max_total_tasks: 0\n",
         "adaptive_search.max_total_tasks is 0; it must be a whole number from 1 to 4096"},
        {"adaptive_search:\n  patience: 0\n",
         "adaptive_search.patience is 0; it must be a whole number from 1 to 4096"},
        {"evolve:\n  rounds: 3\n",
         "evolve.rounds is not an evolve setting; the settings are max_rounds, parallel_num, "
         "num_islands, migration_interval, elite_size and parent_selection_prob"},
        {"adaptive_search:\n  max_rounds: 3\n",
         "adaptive_search.max_rounds is not an adaptive_search setting; the settings are "
         "max_total_tasks, initial_task_count, exploration_coef, random_factor, "
         "convergence_window, convergence_threshold and patience"},
        {"evolve: 3\n", "evolve must be a mapping of settings (max_rounds, parallel_num, "
                        "num_islands, migration_interval, elite_size and parent_selection_prob), "
                        "such as evolve: {max_rounds: 3}"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(load_with(home, bad[i].yaml, err, sizeof err) == AKG_EINVAL);
        char want[1200];
        snprintf(want, sizeof want, "%s: %s", file, bad[i].message);
        CHECK_CONTAINS(err, want);
    }

    /* a job on that config is refused when it starts, with the same message */
    load_with(home, "evolve:\n  parallel_num: 0\n", err, sizeof err);
    uv_loop_t loop;
    uv_loop_init(&loop);
    akg_engine_options eo = {0};
    eo.python = "/nonexistent/akg-python";
    char store[400];
    snprintf(store, sizeof store, "%s/akg.db", dir);
    eo.store_path = store;
    akg_engine *e = NULL;
    CHECK(akg_engine_new(&loop, &eo, &e, err, sizeof err) == AKG_OK);
    if (!e)
        fprintf(stderr, "akg_engine_new: %s\n", err);
    if (e) {
        char ref[4096];
        snprintf(ref, sizeof ref, "%s/tests/fixtures/refs/relu.py", getenv("AKG_SOURCE_DIR"));
        akg_job_options jo = {0};
        jo.reference_path = ref;
        jo.workflow = "evolve";
        jo.search.parallel_num = 2; /* a flag for another setting does not hide the bad one */
        err[0] = '\0';
        CHECK(akg_job_start(e, &jo, on_event, NULL, NULL, err, sizeof err) == AKG_EINVAL);
        CHECK_CONTAINS(err, "evolve.parallel_num is 0; it must be a whole number from 1 to 1000");
        int closed = 0;
        akg_engine_close(e, on_closed, &closed);
        uv_run(&loop, UV_RUN_DEFAULT);
        CHECK(closed == 1);
    }
    CHECK(uv_loop_close(&loop) == 0);
    setenv("AKG_HOME", getenv("AKG_SOURCE_DIR"), 1);
}

int main(void)
{
    char dir[] = "/tmp/akg-unit-search-settings-XXXXXX";
    if (!mkdtemp(dir))
        return 2;
    test_sections_reach_parameters();
    test_no_sections_gives_defaults();
    test_bad_values(dir);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        return 1;
    return check_summary();
}
