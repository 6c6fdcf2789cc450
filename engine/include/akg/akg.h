/*
 * akg.h: the status codes and small utilities every module of libakg shares.
 *
 * Functions of the public API return an akg_status (0 on success, a negative
 * code on failure) and, where a person has to act on the failure, fill a
 * caller-provided message buffer (char *err, size_t errlen). Messages are one
 * line, without a trailing newline, and name the thing that failed.
 */
#ifndef AKG_AKG_H
#define AKG_AKG_H

#include <stddef.h>

#define AKG_VERSION "0.1.0"

typedef enum {
    AKG_OK = 0,
    AKG_EINVAL = -1,       /* bad argument or malformed input */
    AKG_ENOMEM = -2,       /* allocation failed or a capped buffer is full */
    AKG_EIO = -3,          /* a file or pipe could not be read or written */
    AKG_ENOTFOUND = -4,    /* a file, key or row does not exist */
    AKG_EUNSUPPORTED = -5, /* a backend, DSL, operator or option we do not handle */
    AKG_ESPAWN = -6,       /* a child process could not be started */
    AKG_ECANCELED = -7,    /* the operation was cancelled */
    AKG_ETIMEDOUT = -8,    /* the operation ran past its deadline */
    AKG_EDB = -9,          /* the SQLite store failed */
    AKG_EPARSE = -10,      /* a reference or sketch could not be parsed */
    AKG_EBUSY = -11        /* a bounded queue is full */
} akg_status;

/* A static, human-readable name for a status code. */
const char *akg_strerror(int status);

/* Writes a formatted one-line message into err (if err is non-NULL) and
 * returns status, so failures read `return akg_fail(err, len, AKG_EIO, ...)`. */
int akg_fail(char *err, size_t errlen, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/*
 * akg_buf: a growable byte buffer with a hard cap. Appending past the cap
 * fails with AKG_ENOMEM and leaves the buffer unchanged. Failures are sticky:
 * once an append failed, every later append fails too and akg_buf_failed()
 * says so, so a writer may append many pieces and check once at the end
 * (a partial text is never mistaken for a whole one). The data is always
 * NUL-terminated. Owned by whoever declared it; release with akg_buf_free.
 */
typedef struct {
    char *data;
    size_t len;
    size_t cap;   /* bytes allocated */
    size_t limit; /* hard cap on len; 0 means AKG_BUF_DEFAULT_LIMIT */
    int failed;   /* an append failed (out of memory or past the cap) */
} akg_buf;

#define AKG_BUF_DEFAULT_LIMIT ((size_t)64 << 20)

void akg_buf_init(akg_buf *b, size_t limit);
int akg_buf_append(akg_buf *b, const void *data, size_t len);
int akg_buf_appendf(akg_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int akg_buf_puts(akg_buf *b, const char *s);
void akg_buf_consume(akg_buf *b, size_t n); /* drop the first n bytes */
/* Whether an append failed since akg_buf_init (AKG_ENOMEM then, else AKG_OK). */
int akg_buf_status(const akg_buf *b);
/* Gives the data to the caller (free() it) and resets the buffer. */
char *akg_buf_steal(akg_buf *b);
/* The whole text for the caller (free() it), or NULL when an append failed (the buffer is
 * freed either way): a partial text is never taken for a whole one. */
char *akg_buf_take(akg_buf *b);
void akg_buf_free(akg_buf *b);

/* A bump allocator (engine/util/arena.c): zeroed, aligned allocations released all at once.
 * Zero-initialise; cap (bytes, 0: none) bounds the blocks it may hold. */
typedef struct {
    struct akg_arena_chunk *head;
    size_t total, cap;
} akg_arena;
/* n bytes, or NULL: *over_cap is 1 when the cap would be passed, else memory ran out. */
void *akg_arena_alloc(akg_arena *a, size_t n, int *over_cap);
void akg_arena_free(akg_arena *a);

/* Reads a whole file (at most limit bytes) into a malloc'd NUL-terminated
 * string; the caller frees it. */
int akg_read_file(const char *path, size_t limit, char **out, size_t *out_len, char *err,
                  size_t errlen);
/* Writes data to path atomically (temp file + rename). */
int akg_write_file(const char *path, const char *data, size_t len, char *err, size_t errlen);
/* mkdir -p. */
int akg_mkdirs(const char *path, char *err, size_t errlen);
/* Returns a malloc'd absolute, normalised form of path (the file need not exist). */
char *akg_abspath(const char *path);
/* A new run folder's absolute path: dir/<reference stem>_<dsl>_<local time YYYYmmdd-HHMMSS><suffix>
 * (suffix may be ""); malloc'd, NULL when out of memory. */
char *akg_run_dir_path(const char *dir, const char *reference_path, const char *dsl,
                       const char *suffix);
/* A malloc'd copy of s (NULL stays NULL). */
char *akg_strdup(const char *s);
/* Hex SHA-256 of data into out[65]. */
void akg_sha256_hex(const void *data, size_t len, char out[65]);
/* Milliseconds since an arbitrary epoch, monotonic. */
double akg_now_ms(void);

/* The folder holding the product's data (backends/, docspecs/): $AKG_HOME if
 * set, else the folder the build recorded. Static string, never freed. */
const char *akg_data_dir(void);

#endif
