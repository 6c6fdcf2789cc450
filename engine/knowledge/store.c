/*
 * store.c: the SQLite store (see akg/store.h).
 *
 * Schema migrations are numbered; PRAGMA user_version records the last one
 * applied, so an old file is brought forward on open and a newer one than we
 * know is refused rather than misread. Each migration is one transaction with
 * its version bump, so a process killed in the middle leaves the file at the
 * version before it. WAL lets the LSP server and akg_cli read while a job
 * writes. Every write is one short statement.
 *
 * Surviving SIGKILL. The journal is WAL with synchronous=NORMAL. A transaction
 * is committed once its commit frame has been written to the -wal file; that
 * write has returned before sqlite3_step does, and the data then lives in the
 * kernel's page cache, which a process's death does not discard. A transaction
 * cut short by the kill has no commit frame, and the next connection ignores
 * its frames (each frame carries the WAL's salt and a running checksum); the
 * -shm index is rebuilt from the -wal file by the next opener, and a
 * checkpoint cut short is simply run again from the WAL. NORMAL leaves out only
 * the fsync of each commit: what it risks is the last commits on a power loss
 * or kernel crash (rolled back, never corrupt: the WAL is synced before every
 * checkpoint), nothing on a process's death, so FULL would buy nothing against
 * SIGKILL and cost an fsync per row. On a file system without the shared
 * memory WAL needs, SQLite keeps the rollback journal, equally safe against a
 * process's death (a hot journal is rolled back by the next opener).
 *
 * Runs and their owners. A run is inserted "running" with its owner: the pid,
 * the boot id (/proc/sys/kernel/random/boot_id, so that a pid after a reboot
 * is not mistaken for the owner) and the owner's start time in clock ticks
 * after boot (so that a pid reused by another process is not either). Opening
 * the store turns the runs whose owner is gone into "interrupted"; the runs of
 * a live owner (another akg_cli, the language server) are left alone.
 */
#include <errno.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "akg/akg.h"
#include "akg/store.h"

struct akg_store {
    sqlite3 *db;
    char boot_id[64]; /* this boot's id, "" where /proc does not say */
};

static const char *migrations[] = {
    /* 1: runs and candidates */
    "CREATE TABLE runs ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  reference_path TEXT NOT NULL, content_hash TEXT NOT NULL, op TEXT,"
    "  backend TEXT, dsl TEXT, arch TEXT, workflow TEXT, provider TEXT, output_dir TEXT,"
    "  status TEXT NOT NULL DEFAULT 'running', speedup REAL, report TEXT,"
    "  stale INTEGER NOT NULL DEFAULT 0,"
    "  started_at TEXT NOT NULL, finished_at TEXT);"
    "CREATE INDEX runs_by_ref ON runs(reference_path, id DESC);"
    "CREATE TABLE candidates ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  step INTEGER, sketch TEXT, code TEXT, status TEXT, error_class TEXT, error_detail TEXT,"
    "  ref_ms REAL, kernel_ms REAL, created_at TEXT NOT NULL);"
    "CREATE INDEX candidates_by_run ON candidates(run_id);",
    /* 2: knowledge base for retrieval */
    "CREATE TABLE knowledge ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT, dsl TEXT, op TEXT, kind TEXT,"
    "  title TEXT, body TEXT NOT NULL, source_run INTEGER, created_at TEXT NOT NULL);"
    "CREATE INDEX knowledge_by_op ON knowledge(dsl, op);",
    /* 3: the owner of a run, so that only runs whose process is gone are recovered */
    "ALTER TABLE runs ADD COLUMN owner_pid INTEGER;"
    "ALTER TABLE runs ADD COLUMN owner_boot TEXT;"
    "ALTER TABLE runs ADD COLUMN owner_start INTEGER;",
    /* 4: the task fingerprint and the judge's version of runs and candidates (results cached
     * and searches resumed by task), and what a cached answer or a resumed best must give back
     * without running anything: model_new.py, the built library, the search's record. Older
     * rows keep NULL there and are simply never served. */
    "ALTER TABLE runs ADD COLUMN fingerprint TEXT;"
    "ALTER TABLE runs ADD COLUMN judge TEXT;"
    "ALTER TABLE candidates ADD COLUMN fingerprint TEXT;"
    "ALTER TABLE candidates ADD COLUMN judge TEXT;"
    "ALTER TABLE candidates ADD COLUMN model_new TEXT;"
    "ALTER TABLE candidates ADD COLUMN library BLOB;"
    "ALTER TABLE candidates ADD COLUMN info TEXT;"
    "CREATE INDEX candidates_by_fingerprint ON candidates(fingerprint, judge);"
    "CREATE INDEX runs_by_fingerprint ON runs(fingerprint, judge, status);",
};
#define SCHEMA_VERSION ((int)(sizeof migrations / sizeof migrations[0]))

static void now_iso(char out[32])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---------- owners ---------- */

/* This boot's id into out ("" where the file cannot be read). */
static void read_boot_id(char *out, size_t outlen)
{
    out[0] = '\0';
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f)
        return;
    if (!fgets(out, (int)outlen, f))
        out[0] = '\0';
    fclose(f);
    out[strcspn(out, "\r\n")] = '\0';
}

/* The state letter and start time (clock ticks after boot) of process pid from
 * /proc/<pid>/stat; 0 on success, -1 where it cannot be read. */
static int proc_stat(long long pid, char *state, long long *start)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%lld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* the command name in parentheses may hold spaces and parentheses: fields count from the
     * last ')' (field 3 is the state, field 22 the start time) */
    char *p = strrchr(buf, ')');
    if (!p)
        return -1;
    p++;
    for (int field = 3; field <= 22; field++) {
        while (*p == ' ')
            p++;
        if (!*p)
            return -1;
        if (field == 3)
            *state = *p;
        if (field == 22) {
            *start = strtoll(p, NULL, 10);
            return 0;
        }
        while (*p && *p != ' ')
            p++;
    }
    return -1;
}

/* Whether the process that began a run is gone: another boot, no such pid, a zombie, or a pid
 * now held by a process started at another time. An unknown owner (a run begun before the
 * store recorded owners) counts as gone, as every leftover run did before. A pid that exists
 * but is not ours to signal (EPERM) lives. */
static int owner_gone(const akg_store *s, long long pid, const char *boot, long long start)
{
    if (pid <= 0 || pid > 0x7fffffffLL)
        return 1;
    if (boot && *boot && s->boot_id[0] && strcmp(boot, s->boot_id) != 0)
        return 1;
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
        return 1;
    char state = '?';
    long long started = 0;
    if (proc_stat(pid, &state, &started) == 0) {
        if (state == 'Z' || state == 'X')
            return 1;
        if (start > 0 && started != start)
            return 1;
    }
    return 0;
}

int akg_store_open(const char *path, akg_store **out, char *err, size_t errlen)
{
    *out = NULL;
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        int rc = akg_fail(err, errlen, AKG_EDB, "store %s: %s", path,
                          db ? sqlite3_errmsg(db) : "cannot open");
        sqlite3_close(db);
        return rc;
    }
    sqlite3_busy_timeout(db, 2000);
    char *msg = NULL;
    /* Switching a new file to WAL can answer SQLITE_BUSY at once, without the busy handler,
     * while another process opening the same new store holds its lock: try again for a while */
    int prc = SQLITE_BUSY;
    for (int attempt = 0; attempt < 100; attempt++) {
        sqlite3_free(msg);
        msg = NULL;
        prc = sqlite3_exec(db,
                           "PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; "
                           "PRAGMA synchronous=NORMAL;",
                           NULL, NULL, &msg);
        if (prc != SQLITE_BUSY && prc != SQLITE_LOCKED)
            break;
        sqlite3_sleep(50);
    }
    if (prc != SQLITE_OK) {
        int rc = akg_fail(err, errlen, AKG_EDB, "store %s: %s", path, msg ? msg : "pragma failed");
        sqlite3_free(msg);
        sqlite3_close(db);
        return rc;
    }
    /* Each migration runs in its own write transaction, and the version is read inside it:
     * two processes opening a new store at once take turns, and the second finds the work
     * done. */
    for (;;) {
        if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &msg) != SQLITE_OK) {
            int rc = akg_fail(err, errlen, AKG_EDB, "store %s: cannot lock it to migrate: %s", path,
                              msg ? msg : "?");
            sqlite3_free(msg);
            sqlite3_close(db);
            return rc;
        }
        sqlite3_stmt *st;
        int version = 0;
        if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK) {
            if (sqlite3_step(st) == SQLITE_ROW)
                version = sqlite3_column_int(st, 0);
            sqlite3_finalize(st);
        }
        if (version > SCHEMA_VERSION) {
            sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
            sqlite3_close(db);
            return akg_fail(err, errlen, AKG_EDB,
                            "store %s has schema version %d, newer than this akg (%d)", path,
                            version, SCHEMA_VERSION);
        }
        if (version == SCHEMA_VERSION) {
            sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
            break;
        }
        char pragma[64];
        snprintf(pragma, sizeof pragma, "PRAGMA user_version=%d;", version + 1);
        if (sqlite3_exec(db, migrations[version], NULL, NULL, &msg) != SQLITE_OK ||
            sqlite3_exec(db, pragma, NULL, NULL, &msg) != SQLITE_OK ||
            sqlite3_exec(db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
            int rc = akg_fail(err, errlen, AKG_EDB, "store %s: migration %d failed: %s", path,
                              version + 1, msg ? msg : "?");
            sqlite3_free(msg);
            sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
            sqlite3_close(db);
            return rc;
        }
    }
    akg_store *s = calloc(1, sizeof *s);
    if (!s) {
        sqlite3_close(db);
        return AKG_ENOMEM;
    }
    s->db = db;
    read_boot_id(s->boot_id, sizeof s->boot_id);
    /* Best effort: a store that cannot be written now (read-only file, a long lock) is
     * recovered by a later open, and its readers still see every run. */
    akg_store_recover(s);
    *out = s;
    return AKG_OK;
}

const char *akg_store_errmsg(akg_store *store)
{
    return store && store->db ? sqlite3_errmsg(store->db) : "the store is not open";
}

void akg_store_close(akg_store *store)
{
    if (!store)
        return;
    sqlite3_close(store->db);
    free(store);
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
    if (s)
        sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

int akg_store_run_begin(akg_store *store, const char *reference_path, const char *content_hash,
                        const char *op, const char *backend, const char *dsl, const char *arch,
                        const char *workflow, const char *provider, const char *output_dir,
                        long long *run_id)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store->db,
                           "INSERT INTO runs(reference_path, content_hash, op, backend, dsl, arch,"
                           " workflow, provider, output_dir, started_at, owner_pid, owner_boot,"
                           " owner_start) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK)
        return AKG_EDB;
    char now[32];
    now_iso(now);
    /* the owner is the calling process (looked up now, not at open: a process may fork) */
    long long pid = (long long)getpid(), started = 0;
    char state;
    if (proc_stat(pid, &state, &started) != 0)
        started = 0;
    bind_text(st, 1, reference_path);
    bind_text(st, 2, content_hash ? content_hash : "");
    bind_text(st, 3, op);
    bind_text(st, 4, backend);
    bind_text(st, 5, dsl);
    bind_text(st, 6, arch);
    bind_text(st, 7, workflow);
    bind_text(st, 8, provider);
    bind_text(st, 9, output_dir);
    bind_text(st, 10, now);
    sqlite3_bind_int64(st, 11, pid);
    bind_text(st, 12, store->boot_id[0] ? store->boot_id : NULL);
    if (started > 0)
        sqlite3_bind_int64(st, 13, started);
    else
        sqlite3_bind_null(st, 13);
    int rc = sqlite3_step(st) == SQLITE_DONE ? AKG_OK : AKG_EDB;
    sqlite3_finalize(st);
    if (rc == AKG_OK)
        *run_id = sqlite3_last_insert_rowid(store->db);
    return rc;
}

int akg_store_run_end(akg_store *store, long long run_id, const char *status, double speedup,
                      const cJSON *report)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store->db,
                           "UPDATE runs SET status=?, speedup=?, report=?, finished_at=?,"
                           " op=COALESCE(?, op) WHERE id=?",
                           -1, &st, NULL) != SQLITE_OK)
        return AKG_EDB;
    char now[32];
    now_iso(now);
    char *rep = report ? cJSON_PrintUnformatted(report) : NULL;
    bind_text(st, 1, status);
    if (speedup > 0)
        sqlite3_bind_double(st, 2, speedup);
    else
        sqlite3_bind_null(st, 2);
    bind_text(st, 3, rep);
    bind_text(st, 4, now);
    const char *op = report ? cJSON_GetStringValue(cJSON_GetObjectItem(report, "op")) : NULL;
    bind_text(st, 5, op && *op ? op : NULL);
    sqlite3_bind_int64(st, 6, run_id);
    int rc = sqlite3_step(st) == SQLITE_DONE ? AKG_OK : AKG_EDB;
    sqlite3_finalize(st);
    free(rep);
    return rc;
}

int akg_store_candidate_add(akg_store *store, long long run_id, int step, const char *sketch,
                            const char *code, const char *status, const char *error_class,
                            const char *error_detail, double ref_ms, double kernel_ms)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(
            store->db,
            "INSERT INTO candidates(run_id, step, sketch, code, status, error_class,"
            " error_detail, ref_ms, kernel_ms, created_at) VALUES(?,?,?,?,?,?,?,?,?,?)",
            -1, &st, NULL) != SQLITE_OK)
        return AKG_EDB;
    char now[32];
    now_iso(now);
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int(st, 2, step);
    bind_text(st, 3, sketch);
    bind_text(st, 4, code);
    bind_text(st, 5, status);
    bind_text(st, 6, error_class);
    bind_text(st, 7, error_detail);
    if (ref_ms > 0)
        sqlite3_bind_double(st, 8, ref_ms);
    else
        sqlite3_bind_null(st, 8);
    if (kernel_ms > 0)
        sqlite3_bind_double(st, 9, kernel_ms);
    else
        sqlite3_bind_null(st, 9);
    bind_text(st, 10, now);
    int rc = sqlite3_step(st) == SQLITE_DONE ? AKG_OK : AKG_EDB;
    sqlite3_finalize(st);
    return rc;
}

int akg_store_candidate_record(akg_store *store, long long run_id, const akg_store_cand *c)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(
            store->db,
            "INSERT INTO candidates(run_id, step, sketch, code, status, error_class,"
            " error_detail, ref_ms, kernel_ms, created_at, fingerprint, judge, model_new,"
            " library, info) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            -1, &st, NULL) != SQLITE_OK)
        return AKG_EDB;
    char now[32];
    now_iso(now);
    char *info = c->info ? cJSON_PrintUnformatted(c->info) : NULL;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int(st, 2, c->step);
    bind_text(st, 3, c->sketch);
    bind_text(st, 4, c->code);
    bind_text(st, 5, c->status);
    bind_text(st, 6, c->error_class);
    bind_text(st, 7, c->error_detail);
    if (c->ref_ms > 0)
        sqlite3_bind_double(st, 8, c->ref_ms);
    else
        sqlite3_bind_null(st, 8);
    if (c->kernel_ms > 0)
        sqlite3_bind_double(st, 9, c->kernel_ms);
    else
        sqlite3_bind_null(st, 9);
    bind_text(st, 10, now);
    bind_text(st, 11, c->fingerprint);
    bind_text(st, 12, c->judge);
    bind_text(st, 13, c->model_new);
    if (c->library && c->library_len)
        sqlite3_bind_blob(st, 14, c->library, (int)c->library_len, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, 14);
    bind_text(st, 15, info);
    int rc = sqlite3_step(st) == SQLITE_DONE ? AKG_OK : AKG_EDB;
    sqlite3_finalize(st);
    free(info);
    return rc;
}

int akg_store_run_set_key(akg_store *store, long long run_id, const char *fingerprint,
                          const char *judge)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store->db, "UPDATE runs SET fingerprint=?, judge=? WHERE id=?", -1, &st,
                           NULL) != SQLITE_OK)
        return AKG_EDB;
    bind_text(st, 1, fingerprint);
    bind_text(st, 2, judge);
    sqlite3_bind_int64(st, 3, run_id);
    int rc = sqlite3_step(st) == SQLITE_DONE ? AKG_OK : AKG_EDB;
    sqlite3_finalize(st);
    return rc;
}

int akg_store_mark_stale(akg_store *store, const char *reference_path, const char *content_hash)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store->db,
                           "UPDATE runs SET stale=1 WHERE reference_path=? AND content_hash<>?", -1,
                           &st, NULL) != SQLITE_OK)
        return AKG_EDB;
    bind_text(st, 1, reference_path);
    bind_text(st, 2, content_hash);
    int rc = sqlite3_step(st) == SQLITE_DONE ? AKG_OK : AKG_EDB;
    sqlite3_finalize(st);
    return rc;
}

#define RECOVER_BATCH 64

/* Whether any run is "running" (a read: most opens find none and take no write lock). */
static int any_running(akg_store *store)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store->db, "SELECT 1 FROM runs WHERE status='running' LIMIT 1", -1, &st,
                           NULL) != SQLITE_OK)
        return -1;
    int step = sqlite3_step(st);
    sqlite3_finalize(st);
    return step == SQLITE_ROW ? 1 : step == SQLITE_DONE ? 0 : -1;
}

int akg_store_recover(akg_store *store)
{
    int running = any_running(store);
    if (running <= 0)
        return running == 0 ? AKG_OK : AKG_EDB;
    /* One write transaction: runs begun meanwhile by other processes wait for it, and two
     * processes opening the store at once recover each run once. */
    if (sqlite3_exec(store->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return AKG_EDB;
    sqlite3_stmt *sel = NULL, *upd = NULL;
    int rc = AKG_OK;
    if (sqlite3_prepare_v2(store->db,
                           "SELECT id, owner_pid, owner_boot, owner_start FROM runs"
                           " WHERE status='running' AND id>? ORDER BY id LIMIT ?",
                           -1, &sel, NULL) != SQLITE_OK ||
        /* when it ended is not known: finished_at is the last sign of life, its last
         * candidate or else its start */
        sqlite3_prepare_v2(store->db,
                           "UPDATE runs SET status='interrupted', finished_at=COALESCE("
                           "(SELECT MAX(created_at) FROM candidates WHERE run_id=runs.id),"
                           " started_at) WHERE id=? AND status='running'",
                           -1, &upd, NULL) != SQLITE_OK)
        rc = AKG_EDB;
    long long after = 0;
    while (rc == AKG_OK) {
        /* decide a batch, then write it: no update runs while the select still steps */
        long long gone[RECOVER_BATCH];
        int ngone = 0, seen = 0, step;
        sqlite3_reset(sel);
        sqlite3_bind_int64(sel, 1, after);
        sqlite3_bind_int(sel, 2, RECOVER_BATCH);
        while ((step = sqlite3_step(sel)) == SQLITE_ROW) {
            long long id = sqlite3_column_int64(sel, 0);
            long long pid =
                sqlite3_column_type(sel, 1) == SQLITE_NULL ? 0 : sqlite3_column_int64(sel, 1);
            const char *boot = (const char *)sqlite3_column_text(sel, 2);
            long long start = sqlite3_column_int64(sel, 3);
            if (owner_gone(store, pid, boot, start))
                gone[ngone++] = id;
            after = id;
            seen++;
        }
        if (step != SQLITE_DONE) {
            rc = AKG_EDB;
            break;
        }
        for (int i = 0; i < ngone && rc == AKG_OK; i++) {
            sqlite3_reset(upd);
            sqlite3_bind_int64(upd, 1, gone[i]);
            if (sqlite3_step(upd) != SQLITE_DONE)
                rc = AKG_EDB;
        }
        if (seen < RECOVER_BATCH)
            break;
    }
    sqlite3_finalize(sel);
    sqlite3_finalize(upd);
    if (rc == AKG_OK && sqlite3_exec(store->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        rc = AKG_EDB;
    if (rc != AKG_OK)
        sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

static cJSON *row_json(sqlite3_stmt *st)
{
    cJSON *o = cJSON_CreateObject();
    int n = sqlite3_column_count(st);
    for (int i = 0; i < n; i++) {
        const char *name = sqlite3_column_name(st, i);
        switch (sqlite3_column_type(st, i)) {
        case SQLITE_INTEGER:
            cJSON_AddNumberToObject(o, name, (double)sqlite3_column_int64(st, i));
            break;
        case SQLITE_FLOAT:
            cJSON_AddNumberToObject(o, name, sqlite3_column_double(st, i));
            break;
        case SQLITE_TEXT: {
            const char *t = (const char *)sqlite3_column_text(st, i);
            if (strcmp(name, "report") == 0) {
                cJSON *r = cJSON_Parse(t);
                if (r) {
                    cJSON_AddItemToObject(o, name, r);
                    break;
                }
            }
            cJSON_AddStringToObject(o, name, t);
            break;
        }
        default:
            cJSON_AddNullToObject(o, name);
        }
    }
    return o;
}

cJSON *akg_store_recent_runs(akg_store *store, const char *reference_path, int limit)
{
    sqlite3_stmt *st;
    const char *sql = reference_path
                          ? "SELECT * FROM runs WHERE reference_path=? ORDER BY id DESC LIMIT ?"
                          : "SELECT * FROM runs ORDER BY id DESC LIMIT ?";
    if (sqlite3_prepare_v2(store->db, sql, -1, &st, NULL) != SQLITE_OK)
        return NULL;
    int i = 1;
    if (reference_path)
        bind_text(st, i++, reference_path);
    sqlite3_bind_int(st, i, limit > 0 ? limit : 20);
    cJSON *arr = cJSON_CreateArray();
    while (sqlite3_step(st) == SQLITE_ROW)
        cJSON_AddItemToArray(arr, row_json(st));
    sqlite3_finalize(st);
    return arr;
}

cJSON *akg_store_latest_by_target(akg_store *store, const char *reference_path,
                                  const char *content_hash)
{
    sqlite3_stmt *st;
    const char *sql = "SELECT r.* FROM runs r JOIN (SELECT backend, dsl, MAX(id) AS id FROM runs"
                      " WHERE reference_path=? AND status<>'running' AND workflow<>'design_only'"
                      " GROUP BY backend, dsl) l ON r.id=l.id ORDER BY r.backend, r.dsl";
    if (sqlite3_prepare_v2(store->db, sql, -1, &st, NULL) != SQLITE_OK)
        return NULL;
    bind_text(st, 1, reference_path);
    cJSON *arr = cJSON_CreateArray();
    while (sqlite3_step(st) == SQLITE_ROW) {
        cJSON *o = row_json(st);
        const char *h = cJSON_GetStringValue(cJSON_GetObjectItem(o, "content_hash"));
        int stale = content_hash && h && strcmp(h, content_hash) != 0;
        cJSON *s = cJSON_GetObjectItem(o, "stale");
        if (cJSON_IsNumber(s) && s->valueint)
            stale = 1;
        cJSON_DeleteItemFromObject(o, "stale");
        cJSON_AddBoolToObject(o, "stale", stale);
        cJSON_AddItemToArray(arr, o);
    }
    sqlite3_finalize(st);
    return arr;
}

/* A candidate row as JSON: its columns (info parsed; the library as its length and the bytes
 * in *lib, malloc'd, when lib is given). */
static cJSON *cand_row(sqlite3_stmt *st)
{
    cJSON *o = cJSON_CreateObject();
    int n = sqlite3_column_count(st);
    for (int i = 0; o && i < n; i++) {
        const char *name = sqlite3_column_name(st, i);
        if (strcmp(name, "library") == 0) {
            if (sqlite3_column_type(st, i) == SQLITE_BLOB)
                cJSON_AddNumberToObject(o, "library_bytes", sqlite3_column_bytes(st, i));
            continue;
        }
        switch (sqlite3_column_type(st, i)) {
        case SQLITE_INTEGER:
            cJSON_AddNumberToObject(o, name, (double)sqlite3_column_int64(st, i));
            break;
        case SQLITE_FLOAT:
            cJSON_AddNumberToObject(o, name, sqlite3_column_double(st, i));
            break;
        case SQLITE_TEXT: {
            const char *t = (const char *)sqlite3_column_text(st, i);
            cJSON *parsed = strcmp(name, "info") == 0 ? cJSON_Parse(t) : NULL;
            if (parsed)
                cJSON_AddItemToObject(o, name, parsed);
            else
                cJSON_AddStringToObject(o, name, t);
            break;
        }
        default:
            break;
        }
    }
    return o;
}

/* Every row st answers, each made by row, as an array (NULL when out of memory); finalizes st. */
static cJSON *all_rows(sqlite3_stmt *st, cJSON *(*row)(sqlite3_stmt *))
{
    cJSON *arr = cJSON_CreateArray();
    while (arr && sqlite3_step(st) == SQLITE_ROW)
        cJSON_AddItemToArray(arr, row(st));
    sqlite3_finalize(st);
    return arr;
}

cJSON *akg_store_task_candidates(akg_store *store, const char *fingerprint, const char *judge,
                                 long long exclude_run, int limit)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store->db,
                           "SELECT id, run_id, step, sketch, status, error_class, error_detail,"
                           " ref_ms, kernel_ms, info FROM candidates WHERE fingerprint=? AND"
                           " judge=? AND run_id<>? AND status IN ('pass','fail') ORDER BY id"
                           " LIMIT ?",
                           -1, &st, NULL) != SQLITE_OK)
        return NULL;
    bind_text(st, 1, fingerprint);
    bind_text(st, 2, judge);
    sqlite3_bind_int64(st, 3, exclude_run);
    sqlite3_bind_int(st, 4, limit > 0 ? limit : 4096);
    return all_rows(st, cand_row);
}

cJSON *akg_store_candidate_get(akg_store *store, long long run_id, int step, void **library,
                               size_t *library_len)
{
    sqlite3_stmt *st;
    *library = NULL;
    *library_len = 0;
    if (sqlite3_prepare_v2(store->db,
                           "SELECT id, run_id, step, sketch, code, model_new, status, ref_ms,"
                           " kernel_ms, fingerprint, judge, info, library FROM candidates WHERE"
                           " run_id=? AND step=? AND status='pass' ORDER BY id DESC LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        return NULL;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int(st, 2, step);
    cJSON *o = NULL;
    if (sqlite3_step(st) == SQLITE_ROW) {
        o = cand_row(st);
        int len = sqlite3_column_bytes(st, 12);
        const void *blob = sqlite3_column_blob(st, 12);
        if (o && blob && len > 0 && (*library = malloc((size_t)len)) != NULL) {
            memcpy(*library, blob, (size_t)len);
            *library_len = (size_t)len;
        }
    }
    sqlite3_finalize(st);
    return o;
}

cJSON *akg_store_cached_runs(akg_store *store, const char *fingerprint, const char *judge,
                             int limit)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store->db,
                           "SELECT id, workflow, speedup, report, output_dir, finished_at FROM runs"
                           " WHERE fingerprint=? AND judge=? AND status='pass' AND"
                           " workflow NOT IN ('verifier_only','kernelgen_only','design_only')"
                           " ORDER BY speedup DESC, id DESC LIMIT ?",
                           -1, &st, NULL) != SQLITE_OK)
        return NULL;
    bind_text(st, 1, fingerprint);
    bind_text(st, 2, judge);
    sqlite3_bind_int(st, 3, limit > 0 ? limit : 8);
    return all_rows(st, row_json);
}
