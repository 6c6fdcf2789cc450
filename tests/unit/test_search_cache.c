/*
 * test_search_cache.c: the task fingerprint and the judge version (search_cache.c), and the
 * store's rows a cached answer and a resumed search read (store.c, migration 4): a candidate
 * with its fingerprint, judge, model_new, library and info comes back by task and judge only;
 * a cached answer is written from the store with "cached" and the run it came from, and is
 * refused for another judge or another reference text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "akg/akg.h"
#include "akg/config.h"
#include "akg/search_cache.h"
#include "akg/store.h"
#include "check.h"

static int is_hex64(const char *s)
{
    if (strlen(s) != 64)
        return 0;
    for (const char *p = s; *p; p++)
        if (!strchr("0123456789abcdef", *p))
            return 0;
    return 1;
}

static void test_fingerprint(void)
{
    char a[65], b[65], c[65], d[65];
    akg_task_fingerprint("h1", "cpu", "x86_64", "cpp", a);
    akg_task_fingerprint("h1", "cpu", "x86_64", "cpp", b);
    CHECK(is_hex64(a));
    CHECK_STR(a, b); /* stable */
    akg_task_fingerprint("h2", "cpu", "x86_64", "cpp", c);
    CHECK(strcmp(a, c) != 0); /* another reference text */
    akg_task_fingerprint("h1", "cpu", "aarch64", "cpp", d);
    CHECK(strcmp(a, d) != 0); /* another arch */
    akg_task_fingerprint("h1", "cuda", "x86_64", "cpp", d);
    CHECK(strcmp(a, d) != 0);
    /* the fields are separated: moving text from one to the next is another task */
    akg_task_fingerprint("h1c", "pu", "x86_64", "cpp", d);
    CHECK(strcmp(a, d) != 0);
}

static void test_judge_version(void)
{
    char a[65], b[65], c[65], err[256];
    cJSON *cfg = cJSON_Parse("{\"verify_settings\":{\"trials\":5}}");
    CHECK(akg_judge_version(cfg, a, err, sizeof err) == 0);
    CHECK(is_hex64(a));
    CHECK(akg_judge_version(cfg, b, err, sizeof err) == 0);
    CHECK_STR(a, b);
    cJSON *other = cJSON_Parse("{\"verify_settings\":{\"trials\":5,\"atol\":0.1}}");
    CHECK(akg_judge_version(other, c, err, sizeof err) == 0);
    CHECK(strcmp(a, c) != 0); /* other tolerances: another judge */
    cJSON_Delete(cfg);
    cJSON_Delete(other);
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static char *slurp(const char *path)
{
    char *data = NULL;
    size_t len = 0;
    if (akg_read_file(path, 1 << 20, &data, &len, NULL, 0) != AKG_OK)
        return NULL;
    return data;
}

static void test_store_and_answer(const char *dir)
{
    char db[300], ref[300], out[300], err[512];
    snprintf(db, sizeof db, "%s/akg.db", dir);
    snprintf(ref, sizeof ref, "%s/relu.py", dir);
    snprintf(out, sizeof out, "%s/cached", dir);
    put(ref, "# a reference\n");
    char *src = slurp(ref);
    char hash[65], fp[65], judge[65];
    akg_sha256_hex(src, strlen(src), hash);
    free(src);
    akg_task_fingerprint(hash, "cpu", "x86_64", "cpp", fp);
    cJSON *config = NULL;
    CHECK(akg_backend_config_load("cpu", "cpp", &config, err, sizeof err) == AKG_OK);
    CHECK(akg_judge_version(config, judge, err, sizeof err) == 0);
    cJSON_Delete(config);

    /* no store yet: nothing served */
    akg_cache_request req = {
        .store_path = db, .reference_path = ref, .backend = "cpu", .dsl = "cpp", .output_dir = out};
    cJSON *report = NULL;
    CHECK(akg_cache_answer(&req, &report, err, sizeof err) == 0);

    akg_store *s = NULL;
    CHECK(akg_store_open(db, &s, err, sizeof err) == AKG_OK);
    long long run = 0, other = 0;
    CHECK(akg_store_run_begin(s, ref, hash, "relu", "cpu", "cpp", "x86_64", "evolve", "builtin",
                              "/w/out", &run) == AKG_OK);
    CHECK(akg_store_run_set_key(s, run, fp, judge) == AKG_OK);
    cJSON *info = cJSON_Parse("{\"workflow\":\"evolve\",\"genome\":[1],\"speedup\":2.5}");
    static const char lib[] = {'\x7f', 'E', 'L', 'F', 0, 1, 2};
    akg_store_cand c = {.step = 2,
                        .sketch = "sketch relu {}",
                        .code = "// kernel",
                        .model_new = "# model_new",
                        .status = "pass",
                        .ref_ms = 1.0,
                        .kernel_ms = 0.4,
                        .fingerprint = fp,
                        .judge = judge,
                        .library = lib,
                        .library_len = sizeof lib,
                        .info = info};
    CHECK(akg_store_candidate_record(s, run, &c) == AKG_OK);
    /* a candidate of another judge is never read back for this one */
    c.step = 3;
    c.judge = "another";
    CHECK(akg_store_candidate_record(s, run, &c) == AKG_OK);
    cJSON_Delete(info);
    /* an old row without fingerprint (written before migration 4) is never read back either */
    CHECK(akg_store_candidate_add(s, run, 4, "sketch relu {}", "x", "pass", NULL, NULL, 1, 1) ==
          AKG_OK);

    cJSON *rows = akg_store_task_candidates(s, fp, judge, 0, 100);
    CHECK(cJSON_GetArraySize(rows) == 1);
    const cJSON *row = cJSON_GetArrayItem(rows, 0);
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(row, "step")) == 2);
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(row, "info"), "speedup")) ==
          2.5);
    cJSON_Delete(rows);
    rows = akg_store_task_candidates(s, fp, judge, run, 100); /* the run's own: left out */
    CHECK(cJSON_GetArraySize(rows) == 0);
    cJSON_Delete(rows);

    void *blob = NULL;
    size_t blob_len = 0;
    cJSON *full = akg_store_candidate_get(s, run, 2, &blob, &blob_len);
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(full, "model_new")), "# model_new");
    CHECK(blob_len == sizeof lib && blob && memcmp(blob, lib, sizeof lib) == 0);
    cJSON_Delete(full);
    free(blob);

    /* the run passes with candidate 2 kept: the task is answered from the store */
    char rep_text[1024];
    snprintf(rep_text, sizeof rep_text,
             "{\"op\":\"relu\",\"status\":\"pass\",\"kept_step\":2,\"perf\":{\"speedup\":2.5},"
             "\"paths\":{\"dir\":\"/w/out\",\"sketch\":\"/w/out/sketch.sketch\",\"kernel\":"
             "\"/w/out/kernel.cpp\",\"model_new\":\"/w/out/model_new.py\",\"library\":"
             "\"/w/out/kernel_x.so\"},\"candidates\":[{\"step\":2,\"status\":\"pass\"}]}");
    cJSON *rep = cJSON_Parse(rep_text);
    CHECK(akg_store_run_end(s, run, "pass", 2.5, rep) == AKG_OK);
    cJSON_Delete(rep);
    /* a faster run of another judge is not the answer */
    CHECK(akg_store_run_begin(s, ref, hash, "relu", "cpu", "cpp", "x86_64", "default", "builtin",
                              "/w/other", &other) == AKG_OK);
    CHECK(akg_store_run_set_key(s, other, fp, "another") == AKG_OK);
    rep = cJSON_Parse("{\"status\":\"pass\",\"kept_step\":3,\"paths\":{}}");
    CHECK(akg_store_run_end(s, other, "pass", 9.0, rep) == AKG_OK);
    cJSON_Delete(rep);
    akg_store_close(s);

    CHECK(akg_cache_answer(&req, &report, err, sizeof err) == 1);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(report, "cached")));
    const cJSON *from = cJSON_GetObjectItem(report, "cached_from");
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(from, "run_id")) == (double)run);
    char path[400];
    snprintf(path, sizeof path, "%s/model_new.py", out);
    char *text = slurp(path);
    CHECK_STR(text, "# model_new");
    free(text);
    snprintf(path, sizeof path, "%s/kernel_x.so", out);
    struct stat st;
    CHECK(stat(path, &st) == 0 && st.st_size == (off_t)sizeof lib);
    snprintf(path, sizeof path, "%s/report.json", out);
    text = slurp(path);
    CHECK_CONTAINS(text, "\"cached\":\ttrue");
    free(text);
    cJSON_Delete(report);
    report = NULL;

    /* another reference text: another task, nothing served */
    put(ref, "# a reference, edited\n");
    CHECK(akg_cache_answer(&req, &report, err, sizeof err) == 0);
    CHECK(report == NULL);
    CHECK_CONTAINS(err, "no verified kernel of this task");
}

int main(void)
{
    char dir[] = "/tmp/akg-cache-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    test_fingerprint();
    test_judge_version();
    test_store_and_answer(dir);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    return check_summary();
}
