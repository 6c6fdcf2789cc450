/* test_store.c: the SQLite store on a real file: migrations, runs, candidates,
 * latest results per target, staleness, recovery after a crash, processes that
 * create one store at once. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "akg/akg.h"
#include "akg/store.h"
#include "check.h"

int main(void)
{
    char dir[] = "/tmp/akg-store-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/akg.db", dir);
    akg_store *s = NULL;
    char err[256];
    CHECK(akg_store_open(path, &s, err, sizeof err) == AKG_OK);

    long long r1 = 0, r2 = 0, r3 = 0;
    CHECK(akg_store_run_begin(s, "/w/relu.py", "h1", "relu", "cpu", "cpp", "x86_64", "default",
                              "builtin", "/w/out1", &r1) == AKG_OK);
    CHECK(r1 > 0);
    CHECK(akg_store_candidate_add(s, r1, 1, "sketch relu {}", "code", "fail", "build_error",
                                  "boom", 0, 0) == AKG_OK);
    cJSON *rep = cJSON_Parse("{\"op\":\"relu\",\"perf\":{\"speedup\":1.5}}");
    CHECK(akg_store_run_end(s, r1, "pass", 1.5, rep) == AKG_OK);
    cJSON_Delete(rep);
    CHECK(akg_store_run_begin(s, "/w/relu.py", "h2", "relu", "cpu", "cpp", "x86_64", "default",
                              "builtin", "/w/out2", &r2) == AKG_OK);
    CHECK(akg_store_run_end(s, r2, "fail", 0, NULL) == AKG_OK);
    /* a run left "running" by a process that died */
    CHECK(akg_store_run_begin(s, "/w/tanh.py", "h3", "tanh", "cpu", "cpp", "x86_64", "default",
                              "builtin", "/w/out3", &r3) == AKG_OK);
    akg_store_close(s);

    /* reopening keeps everything; recovery marks the orphan cancelled */
    CHECK(akg_store_open(path, &s, err, sizeof err) == AKG_OK);
    CHECK(akg_store_recover(s) == AKG_OK);
    cJSON *runs = akg_store_recent_runs(s, NULL, 10);
    CHECK(cJSON_GetArraySize(runs) == 3);
    cJSON *newest = cJSON_GetArrayItem(runs, 0);
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(newest, "status")), "cancelled");
    cJSON_Delete(runs);

    /* latest per target: the newest finished run, stale when the hash moved */
    cJSON *latest = akg_store_latest_by_target(s, "/w/relu.py", "h2");
    CHECK(cJSON_GetArraySize(latest) == 1);
    cJSON *l0 = cJSON_GetArrayItem(latest, 0);
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(l0, "status")), "fail");
    CHECK(cJSON_IsFalse(cJSON_GetObjectItem(l0, "stale")));
    cJSON_Delete(latest);
    latest = akg_store_latest_by_target(s, "/w/relu.py", "h-new");
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(latest, 0), "stale")));
    cJSON_Delete(latest);
    CHECK(akg_store_mark_stale(s, "/w/relu.py", "h-new") == AKG_OK);
    runs = akg_store_recent_runs(s, "/w/relu.py", 10);
    CHECK(cJSON_GetArraySize(runs) == 2);
    /* the report round-trips as JSON */
    cJSON *older = cJSON_GetArrayItem(runs, 1);
    CHECK(cJSON_IsObject(cJSON_GetObjectItem(older, "report")));
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(older, "op")), "relu");
    cJSON_Delete(runs);
    akg_store_close(s);

    /* the schema version is recorded; a newer file is refused */
    sqlite3 *db;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, "PRAGMA user_version=99", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
    CHECK(akg_store_open(path, &s, err, sizeof err) == AKG_EDB);
    CHECK_CONTAINS(err, "newer than this akg");

    /* processes that open one new store at once all succeed: the migrations take turns */
    for (int round = 0; round < 5; round++) {
        char fresh[300];
        snprintf(fresh, sizeof fresh, "%s/race%d.db", dir, round);
        pid_t kids[6];
        for (int k = 0; k < 6; k++) {
            kids[k] = fork();
            if (kids[k] == 0) {
                akg_store *c = NULL;
                char e[256];
                int rc = akg_store_open(fresh, &c, e, sizeof e);
                if (rc == AKG_OK)
                    akg_store_close(c);
                else
                    fprintf(stderr, "store race: %s\n", e);
                _exit(rc == AKG_OK ? 0 : 1);
            }
        }
        for (int k = 0; k < 6; k++) {
            int st = 0;
            CHECK(kids[k] > 0 && waitpid(kids[k], &st, 0) == kids[k]);
            CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        }
    }

    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    return check_summary();
}
