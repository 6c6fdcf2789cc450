/* test_store.c: the SQLite store on a real file: migrations (also of a store
 * written before runs had owners), runs, candidates, latest results per target,
 * staleness, the recovery of runs whose owner is gone (dead, a zombie, another
 * boot, a reused pid) while a live owner's run is left alone, processes that
 * create one store at once. */
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "akg/akg.h"
#include "akg/store.h"
#include "check.h"

/* The value of one SQL query's first column as text (static buffer; "" for none or NULL). */
static const char *query_text(const char *path, const char *sql)
{
    static char out[256];
    out[0] = '\0';
    sqlite3 *db;
    sqlite3_stmt *st;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        return out;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
            snprintf(out, sizeof out, "%s", (const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return out;
}

static int exec_sql(const char *path, const char *sql)
{
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        return -1;
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK)
        fprintf(stderr, "sql: %s\n", msg ? msg : "?");
    sqlite3_free(msg);
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

static const char *run_status(const char *path, long long id)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT status FROM runs WHERE id=%lld", id);
    return query_text(path, sql);
}

static void boot_id(char *out, size_t n)
{
    out[0] = '\0';
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(out, (int)n, f))
            out[0] = '\0';
        fclose(f);
    }
    out[strcspn(out, "\n")] = '\0';
}

/* A store written by an akg before migration 3 (runs had no owner) is brought forward: the
 * columns are added, the finished run is untouched and the leftover running one, whose owner
 * cannot be known, is interrupted (as every leftover was cancelled before). */
static void test_migration_from_v2(const char *dir)
{
    char path[300];
    snprintf(path, sizeof path, "%s/v2.db", dir);
    CHECK(exec_sql(path,
                   "CREATE TABLE runs ("
                   "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
                   "  reference_path TEXT NOT NULL, content_hash TEXT NOT NULL, op TEXT,"
                   "  backend TEXT, dsl TEXT, arch TEXT, workflow TEXT, provider TEXT,"
                   "  output_dir TEXT, status TEXT NOT NULL DEFAULT 'running', speedup REAL,"
                   "  report TEXT, stale INTEGER NOT NULL DEFAULT 0,"
                   "  started_at TEXT NOT NULL, finished_at TEXT);"
                   "CREATE INDEX runs_by_ref ON runs(reference_path, id DESC);"
                   "CREATE TABLE candidates ("
                   "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
                   "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
                   "  step INTEGER, sketch TEXT, code TEXT, status TEXT, error_class TEXT,"
                   "  error_detail TEXT, ref_ms REAL, kernel_ms REAL, created_at TEXT NOT NULL);"
                   "CREATE INDEX candidates_by_run ON candidates(run_id);"
                   "CREATE TABLE knowledge ("
                   "  id INTEGER PRIMARY KEY AUTOINCREMENT, dsl TEXT, op TEXT, kind TEXT,"
                   "  title TEXT, body TEXT NOT NULL, source_run INTEGER, created_at TEXT NOT NULL);"
                   "CREATE INDEX knowledge_by_op ON knowledge(dsl, op);"
                   "INSERT INTO runs(reference_path, content_hash, status, speedup, started_at,"
                   " finished_at) VALUES('/w/relu.py', 'h', 'pass', 2.0, '2025-01-01T00:00:00Z',"
                   " '2025-01-01T00:01:00Z');"
                   "INSERT INTO runs(reference_path, content_hash, started_at)"
                   " VALUES('/w/tanh.py', 'h', '2025-01-02T00:00:00Z');"
                   "INSERT INTO candidates(run_id, step, status, created_at)"
                   " VALUES(2, 1, 'fail', '2025-01-02T00:00:42Z');"
                   "PRAGMA user_version=2;") == 0);
    akg_store *s = NULL;
    char err[256];
    CHECK(akg_store_open(path, &s, err, sizeof err) == AKG_OK);
    akg_store_close(s);
    CHECK_STR(query_text(path, "PRAGMA user_version"), "4"); /* every migration since */
    CHECK_STR(run_status(path, 1), "pass");
    CHECK_STR(query_text(path, "SELECT finished_at FROM runs WHERE id=1"), "2025-01-01T00:01:00Z");
    CHECK_STR(run_status(path, 2), "interrupted");
    /* its last sign of life: the candidate */
    CHECK_STR(query_text(path, "SELECT finished_at FROM runs WHERE id=2"), "2025-01-02T00:00:42Z");
    CHECK_STR(query_text(path, "SELECT COUNT(*) FROM pragma_table_info('runs') WHERE name IN"
                               " ('owner_pid', 'owner_boot', 'owner_start')"),
              "3");
    /* the migrated store takes new runs with owners */
    CHECK(akg_store_open(path, &s, err, sizeof err) == AKG_OK);
    long long id = 0;
    CHECK(akg_store_run_begin(s, "/w/relu.py", "h", "relu", "cpu", "cpp", "x86_64", "default",
                              "builtin", "/w/out", &id) == AKG_OK);
    CHECK(id == 3);
    akg_store_close(s);
    char want[32];
    snprintf(want, sizeof want, "%d", (int)getpid());
    CHECK_STR(query_text(path, "SELECT owner_pid FROM runs WHERE id=3"), want);
}

/* The recovery rule, one row per kind of owner: only the runs of gone owners change. */
static void test_recovery_rule(const char *dir)
{
    char path[300];
    snprintf(path, sizeof path, "%s/owners.db", dir);
    akg_store *s = NULL;
    char err[256];
    CHECK(akg_store_open(path, &s, err, sizeof err) == AKG_OK);
    long long mine = 0, dead = 0, zombie = 0, reboot = 0, reused = 0, nobody = 0;
    const char *r = "/w/relu.py";
    CHECK(akg_store_run_begin(s, r, "h", NULL, "cpu", "cpp", "x86_64", "default", "builtin", NULL,
                              &mine) == AKG_OK);
    CHECK(akg_store_run_begin(s, r, "h", NULL, "cpu", "cpp", "x86_64", "default", "builtin", NULL,
                              &dead) == AKG_OK);
    CHECK(akg_store_run_begin(s, r, "h", NULL, "cpu", "cpp", "x86_64", "default", "builtin", NULL,
                              &zombie) == AKG_OK);
    CHECK(akg_store_run_begin(s, r, "h", NULL, "cpu", "cpp", "x86_64", "default", "builtin", NULL,
                              &reboot) == AKG_OK);
    CHECK(akg_store_run_begin(s, r, "h", NULL, "cpu", "cpp", "x86_64", "default", "builtin", NULL,
                              &reused) == AKG_OK);
    CHECK(akg_store_run_begin(s, r, "h", NULL, "cpu", "cpp", "x86_64", "default", "builtin", NULL,
                              &nobody) == AKG_OK);
    /* this process owns every row; the boot id and start time were recorded */
    char boot[64], sql[512];
    boot_id(boot, sizeof boot);
    if (boot[0]) {
        snprintf(sql, sizeof sql, "SELECT owner_boot FROM runs WHERE id=%lld", mine);
        CHECK_STR(query_text(path, sql), boot);
    }
    snprintf(sql, sizeof sql, "SELECT owner_start > 0 FROM runs WHERE id=%lld", mine);
    CHECK_STR(query_text(path, sql), "1");

    /* a child that exited and was reaped (its pid is free), and one that exited unreaped */
    pid_t gone = fork();
    if (gone == 0)
        _exit(0);
    CHECK(gone > 0 && waitpid(gone, NULL, 0) == gone);
    pid_t zomb = fork();
    if (zomb == 0)
        _exit(0);
    CHECK(zomb > 0);
    usleep(200 * 1000); /* it has exited: a zombie until waited for */
    snprintf(sql, sizeof sql,
             "UPDATE runs SET owner_pid=%d WHERE id=%lld;"
             "UPDATE runs SET owner_pid=%d, owner_start=NULL WHERE id=%lld;"
             "UPDATE runs SET owner_boot='00000000-0000-0000-0000-000000000000' WHERE id=%lld;"
             "UPDATE runs SET owner_start=owner_start+1 WHERE id=%lld;"
             "UPDATE runs SET owner_pid=NULL, owner_boot=NULL, owner_start=NULL WHERE id=%lld;",
             (int)gone, dead, (int)zomb, zombie, reboot, reused, nobody);
    CHECK(exec_sql(path, sql) == 0);
    CHECK(akg_store_candidate_add(s, dead, 1, NULL, NULL, "fail", "crash", "x", 0, 0) == AKG_OK);

    /* a live owner's run with no start time recorded (as another program might write it) */
    long long live_no_start = 0;
    CHECK(akg_store_run_begin(s, r, "h", NULL, "cpu", "cpp", "x86_64", "default", "builtin", NULL,
                              &live_no_start) == AKG_OK);
    snprintf(sql, sizeof sql, "UPDATE runs SET owner_start=NULL WHERE id=%lld", live_no_start);
    CHECK(exec_sql(path, sql) == 0);

    CHECK(akg_store_recover(s) == AKG_OK);
    CHECK_STR(run_status(path, mine), "running");
    CHECK_STR(run_status(path, live_no_start), "running");
    CHECK_STR(run_status(path, dead), "interrupted");
    CHECK_STR(run_status(path, zombie), "interrupted");
    CHECK_STR(run_status(path, reboot), "interrupted");
    CHECK_STR(run_status(path, reused), "interrupted");
    CHECK_STR(run_status(path, nobody), "interrupted");
    snprintf(sql, sizeof sql,
             "SELECT COUNT(*) FROM runs WHERE status='interrupted' AND finished_at IS NULL");
    CHECK_STR(query_text(path, sql), "0");
    /* the dead owner's finished_at is its candidate's time, the others' their start */
    snprintf(sql, sizeof sql,
             "SELECT r.finished_at = c.created_at FROM runs r JOIN candidates c ON c.run_id=r.id"
             " WHERE r.id=%lld",
             dead);
    CHECK_STR(query_text(path, sql), "1");
    snprintf(sql, sizeof sql, "SELECT finished_at = started_at FROM runs WHERE id=%lld", nobody);
    CHECK_STR(query_text(path, sql), "1");
    CHECK(waitpid(zomb, NULL, 0) == zomb);

    /* a run that ends normally afterwards keeps its own end; recovery is idempotent */
    CHECK(akg_store_run_end(s, mine, "pass", 1.5, NULL) == AKG_OK);
    CHECK(akg_store_recover(s) == AKG_OK);
    CHECK_STR(run_status(path, mine), "pass");
    CHECK_STR(run_status(path, dead), "interrupted");
    akg_store_close(s);

    /* opening recovers: a child process begins a run and dies without ending it (as under
     * SIGKILL); the parent's run stays "running" while the child's is interrupted */
    long long parent_run = live_no_start;
    pid_t kid = fork();
    if (kid == 0) {
        akg_store *c = NULL;
        char e[256];
        long long id = 0;
        if (akg_store_open(path, &c, e, sizeof e) != AKG_OK)
            _exit(1);
        int rc = akg_store_run_begin(c, r, "h", NULL, "cpu", "cpp", "x86_64", "default",
                                     "builtin", NULL, &id);
        raise(SIGKILL);
        _exit(rc == AKG_OK ? 0 : 1);
    }
    int status = 0;
    CHECK(kid > 0 && waitpid(kid, &status, 0) == kid);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    CHECK_STR(query_text(path, "SELECT status FROM runs ORDER BY id DESC LIMIT 1"), "running");
    CHECK(akg_store_open(path, &s, err, sizeof err) == AKG_OK);
    CHECK_STR(query_text(path, "SELECT status FROM runs ORDER BY id DESC LIMIT 1"), "interrupted");
    CHECK_STR(run_status(path, parent_run), "running");
    CHECK_STR(query_text(path, "PRAGMA integrity_check"), "ok");
    akg_store_close(s);
}

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

    /* reopening keeps everything; the run's owner (this process) lives: it stays running */
    CHECK(akg_store_open(path, &s, err, sizeof err) == AKG_OK);
    cJSON *runs = akg_store_recent_runs(s, NULL, 10);
    CHECK(cJSON_GetArraySize(runs) == 3);
    cJSON *newest = cJSON_GetArrayItem(runs, 0);
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(newest, "status")), "running");
    CHECK(cJSON_IsNumber(cJSON_GetObjectItem(newest, "owner_pid")));
    cJSON_Delete(runs);
    akg_store_close(s);
    /* its owner gone (no pid 0 process owns anything), reopening marks it interrupted */
    char sql[128];
    snprintf(sql, sizeof sql, "UPDATE runs SET owner_pid=0 WHERE id=%lld", r3);
    CHECK(exec_sql(path, sql) == 0);
    CHECK(akg_store_open(path, &s, err, sizeof err) == AKG_OK);
    runs = akg_store_recent_runs(s, NULL, 10);
    newest = cJSON_GetArrayItem(runs, 0);
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(newest, "status")), "interrupted");
    CHECK(cJSON_IsString(cJSON_GetObjectItem(newest, "finished_at")));
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

    test_migration_from_v2(dir);
    test_recovery_rule(dir);

    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    return check_summary();
}
