/*
 * search_cache.c: task fingerprints, the judge's version, and answers from the store
 * (akg/search_cache.h).
 *
 * The fingerprint is the SHA-256 of the reference file's content hash with backend, arch and
 * DSL. The probe's op graph, shapes and dtypes are not in it: they are a function of the file
 * for a reference in KernelBench form (its get_inputs() builds the inputs), and hashing them
 * would mean starting a harness worker (seconds, to import torch) before a cached answer can
 * be given, where the file's hash costs microseconds. What the file's text does not hold (a
 * local module it imports, an environment variable it reads) is outside the fingerprint:
 * `--no-cache` runs the pipeline whatever the store holds.
 *
 * The judge version is the SHA-256 of the harness's Python sources (worker.py, child_main.py,
 * the .py files of akg_harness/, in name order) and the DSL config's verify_settings: a kernel
 * verified by other rules (another tolerance, another comparison) is never served, and a search
 * never resumes a candidate another judge passed.
 *
 * A cached answer is read, never run: the kept candidate of the fastest passing run of the
 * task (its row holds the sketch, the kernel source, model_new.py and the built library) is
 * written to the output folder with the run's report, marked "cached" and naming the run it
 * came from. No engine, no harness worker, no compiler.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "akg/akg.h"
#include "akg/backend.h"
#include "akg/config.h"
#include "akg/search_cache.h"
#include "akg/store.h"

void akg_task_fingerprint(const char *content_hash, const char *backend, const char *arch,
                          const char *dsl, char out[65])
{
    akg_buf b;
    akg_buf_init(&b, 4096);
    akg_buf_appendf(&b, "akg-task-1\n%s\n%s\n%s\n%s\n", content_hash ? content_hash : "",
                    backend ? backend : "", arch ? arch : "", dsl ? dsl : "");
    akg_sha256_hex(b.data ? b.data : "", b.data ? b.len : 0, out);
    akg_buf_free(&b);
}

static int py_file(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return n > 3 && strcmp(d->d_name + n - 3, ".py") == 0;
}

static int hash_file_into(akg_buf *b, const char *path, char *err, size_t errlen)
{
    char *data = NULL;
    size_t len = 0;
    if (akg_read_file(path, 16u << 20, &data, &len, err, errlen) != AKG_OK)
        return -1;
    char h[65];
    akg_sha256_hex(data, len, h);
    free(data);
    const char *name = strrchr(path, '/');
    akg_buf_appendf(b, "%s %s\n", name ? name + 1 : path, h);
    return 0;
}

int akg_judge_version(const cJSON *config, char out[65], char *err, size_t errlen)
{
    char dir[4096], path[4400];
    snprintf(dir, sizeof dir, "%s/backends/harness", akg_data_dir());
    akg_buf b;
    akg_buf_init(&b, 1u << 20);
    akg_buf_puts(&b, "akg-judge-1\n");
    int rc = 0;
    static const char *const top[] = {"worker.py", "child_main.py"};
    for (size_t i = 0; i < 2 && rc == 0; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, top[i]);
        rc = hash_file_into(&b, path, err, errlen);
    }
    struct dirent **names = NULL;
    snprintf(path, sizeof path, "%s/akg_harness", dir);
    int n = rc == 0 ? scandir(path, &names, py_file, alphasort) : 0;
    if (rc == 0 && n <= 0)
        rc = akg_fail(err, errlen, AKG_ENOTFOUND, "the harness's sources are not in %s", path);
    for (int i = 0; i < n; i++) {
        char file[4700];
        snprintf(file, sizeof file, "%s/akg_harness/%s", dir, names[i]->d_name);
        if (rc == 0)
            rc = hash_file_into(&b, file, err, errlen);
        free(names[i]);
    }
    free(names);
    const cJSON *vs = config ? akg_config_get(config, "verify_settings") : NULL;
    char *settings = vs ? cJSON_PrintUnformatted(vs) : NULL;
    akg_buf_appendf(&b, "verify_settings %s\n", settings ? settings : "{}");
    free(settings);
    if (rc == 0 && akg_buf_status(&b) != AKG_OK)
        rc = akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    if (rc == 0)
        akg_sha256_hex(b.data, b.len, out);
    else
        out[0] = '\0';
    akg_buf_free(&b);
    return rc == 0 ? 0 : -1;
}

/* A whole number of a JSON item, 0 where it is missing or not a number (a cast of NaN is
 * undefined). */
static double json_whole(const cJSON *v)
{
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* Sets obj[key] to item, whether or not obj had that key (cJSON_ReplaceItemInObject leaves a
 * missing key alone and the new item unowned). */
static void set_item(cJSON *obj, const char *key, cJSON *item)
{
    cJSON_DeleteItemFromObject(obj, key);
    if (!cJSON_AddItemToObject(obj, key, item))
        cJSON_Delete(item);
}

static const char *base_name(const char *p)
{
    const char *s = p ? strrchr(p, '/') : NULL;
    return s ? s + 1 : p;
}

static char *store_path_default(void)
{
    const char *env = getenv("AKG_STORE");
    if (env && *env)
        return akg_strdup(env);
    const char *home = getenv("HOME");
    char path[4096];
    snprintf(path, sizeof path, "%s/.akg/akg.db", home && *home ? home : ".");
    return akg_strdup(path);
}

/* The kept candidate's (run, step): the report's kept_step, or where a resumed candidate came
 * from. */
static int kept_candidate(const cJSON *report, long long run_id, long long *run, int *step)
{
    const cJSON *kept = cJSON_GetObjectItem(report, "kept_step");
    if (!cJSON_IsNumber(kept))
        return -1;
    *run = run_id;
    *step = kept->valueint;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(report, "candidates"))
    {
        const cJSON *st = cJSON_GetObjectItem(c, "step");
        const cJSON *from = cJSON_GetObjectItem(c, "resumed_from");
        if (cJSON_IsNumber(st) && st->valueint == *step && from) {
            *run = (long long)json_whole(cJSON_GetObjectItem(from, "run"));
            *step = (int)json_whole(cJSON_GetObjectItem(from, "step"));
        }
    }
    return 0;
}

static char *out_dir_for(const akg_cache_request *req)
{
    if (req->output_dir)
        return akg_abspath(req->output_dir);
    return akg_run_dir_path("akg_output", req->reference_path, req->dsl, "_cached");
}

/* Writes the candidate's files into dir under the names the source report used; rewrites the
 * report's paths. Returns 0 or -1 with err. */
static int write_cached_files(const char *dir, cJSON *report, const cJSON *cand, const void *lib,
                              size_t lib_len, char *err, size_t errlen)
{
    cJSON *paths = cJSON_GetObjectItem(report, "paths");
    static const char *const keys[] = {"sketch", "kernel", "model_new", "library"};
    for (size_t i = 0; i < 4; i++) {
        const char *old = cJSON_GetStringValue(cJSON_GetObjectItem(paths, keys[i]));
        const char *text = i == 0   ? cJSON_GetStringValue(cJSON_GetObjectItem(cand, "sketch"))
                           : i == 1 ? cJSON_GetStringValue(cJSON_GetObjectItem(cand, "code"))
                           : i == 2 ? cJSON_GetStringValue(cJSON_GetObjectItem(cand, "model_new"))
                                    : NULL;
        if (!old)
            continue;
        if (i < 3 && !text)
            return akg_fail(err, errlen, AKG_ENOTFOUND, "the store lacks its %s", keys[i]);
        if (i == 3 && !lib)
            return akg_fail(err, errlen, AKG_ENOTFOUND, "the store lacks its built library");
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, base_name(old));
        if (akg_write_file(path, i == 3 ? lib : text, i == 3 ? lib_len : strlen(text), err,
                           errlen) != AKG_OK)
            return -1;
        set_item(paths, keys[i], cJSON_CreateString(path));
    }
    set_item(paths, "dir", cJSON_CreateString(dir));
    return 0;
}

int akg_cache_answer(const akg_cache_request *req, cJSON **report, char *err, size_t errlen)
{
    *report = NULL;
    double t0 = akg_now_ms();
    char *store_path = req->store_path ? akg_strdup(req->store_path) : store_path_default();
    struct stat st;
    if (!store_path || stat(store_path, &st) != 0) {
        free(store_path);
        snprintf(err, errlen, "no store yet");
        return 0;
    }
    const akg_backend *be = akg_backend_find(req->backend, req->dsl);
    const char *arch = req->arch ? req->arch : be ? be->default_arch : "";
    char *src = NULL;
    size_t len = 0;
    char hash[65], fp[65], judge[65];
    int rc = akg_read_file(req->reference_path, 16 << 20, &src, &len, err, errlen);
    if (rc != AKG_OK) {
        free(store_path);
        return rc;
    }
    akg_sha256_hex(src, len, hash);
    free(src);
    akg_task_fingerprint(hash, req->backend, arch, req->dsl, fp);
    cJSON *config = NULL;
    if (akg_backend_config_load(req->backend, req->dsl, &config, err, errlen) != AKG_OK ||
        akg_judge_version(config, judge, err, errlen) != 0) {
        cJSON_Delete(config);
        free(store_path);
        return 0; /* no judge version: nothing is served; err says why */
    }
    cJSON_Delete(config);
    akg_store *store = NULL;
    rc = akg_store_open(store_path, &store, err, errlen);
    free(store_path);
    if (rc != AKG_OK)
        return rc;
    cJSON *runs = akg_store_cached_runs(store, fp, judge, 8);
    const cJSON *run;
    int found = 0;
    snprintf(err, errlen, "no verified kernel of this task (fingerprint %.12s) by this judge", fp);
    cJSON_ArrayForEach(run, runs)
    {
        const cJSON *rep = cJSON_GetObjectItem(run, "report");
        long long run_id = (long long)json_whole(cJSON_GetObjectItem(run, "id"));
        long long from_run;
        int from_step;
        if (!cJSON_IsObject(rep) || kept_candidate(rep, run_id, &from_run, &from_step) != 0)
            continue;
        void *lib = NULL;
        size_t lib_len = 0;
        cJSON *cand = akg_store_candidate_get(store, from_run, from_step, &lib, &lib_len);
        if (!cand) {
            free(lib);
            continue;
        }
        cJSON *r = cJSON_Duplicate(rep, 1);
        char *dir = out_dir_for(req);
        char werr[512] = "out of memory";
        int ok = r && dir && akg_mkdirs(dir, werr, sizeof werr) == AKG_OK &&
                 write_cached_files(dir, r, cand, lib, lib_len, werr, sizeof werr) == 0;
        if (ok) {
            char path[4400];
            snprintf(path, sizeof path, "%s/report.json", dir);
            set_item(cJSON_GetObjectItem(r, "paths"), "report", cJSON_CreateString(path));
            cJSON_DeleteItemFromObject(r, "cached");
            cJSON_AddBoolToObject(r, "cached", 1);
            cJSON *from = cJSON_AddObjectToObject(r, "cached_from");
            cJSON_AddNumberToObject(from, "run_id", (double)run_id);
            cJSON_AddStringToObject(from, "workflow",
                                    cJSON_GetStringValue(cJSON_GetObjectItem(run, "workflow")));
            const char *od = cJSON_GetStringValue(cJSON_GetObjectItem(run, "output_dir"));
            if (!od)
                od = cJSON_GetStringValue(
                    cJSON_GetObjectItem(cJSON_GetObjectItem(rep, "paths"), "dir"));
            if (od)
                cJSON_AddStringToObject(from, "output_dir", od);
            const char *fin = cJSON_GetStringValue(cJSON_GetObjectItem(run, "finished_at"));
            if (fin)
                cJSON_AddStringToObject(from, "finished_at", fin);
            cJSON_AddNumberToObject(from, "candidate_run", (double)from_run);
            cJSON_AddNumberToObject(from, "candidate_step", from_step);
            cJSON_AddStringToObject(from, "fingerprint", fp);
            cJSON_AddStringToObject(from, "judge", judge);
            set_item(r, "reference", cJSON_CreateString(req->reference_path));
            set_item(r, "elapsed_s", cJSON_CreateNumber((akg_now_ms() - t0) / 1000.0));
            char *text = cJSON_Print(r);
            ok = text && akg_write_file(path, text, strlen(text), werr, sizeof werr) == AKG_OK;
            free(text);
        }
        if (!ok)
            snprintf(err, errlen, "run %lld's kernel could not be written out: %s", run_id, werr);
        free(dir);
        free(lib);
        cJSON_Delete(cand);
        if (ok) {
            *report = r;
            found = 1;
            break;
        }
        cJSON_Delete(r);
    }
    cJSON_Delete(runs);
    akg_store_close(store);
    return found;
}
