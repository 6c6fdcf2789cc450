/*
 * Unit tests of the pure parts of akg-lsp: Content-Length framing (every
 * split of a stream, caps, resynchronisation), UTF-8 validation, and
 * document positions in the three encodings.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "documents.h"
#include "jsonrpc.h"

static int failures;
#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

typedef struct {
    char bodies[16][256];
    int n_bodies;
    int n_errors;
    int last_error;
} sink;

static size_t on_message(void *user, const char *body, size_t len)
{
    sink *s = user;
    if (s->n_bodies < 16 && len < 256) {
        memcpy(s->bodies[s->n_bodies], body, len);
        s->bodies[s->n_bodies][len] = '\0';
    }
    s->n_bodies++;
    /* Bodies that are not JSON objects hand the rest back, as the server does. */
    if (len == 0 || body[0] != '{')
        return akg_rpc_find_resync(body, len);
    return len;
}

static void on_error(void *user, int code, const char *message)
{
    (void)message;
    sink *s = user;
    s->n_errors++;
    s->last_error = code;
}

static void test_every_split(void)
{
    const char *stream =
        "Content-Length: 7\r\n\r\n{\"a\":1}content-length:   2\r\nContent-Type: x\r\n\r\n{}";
    size_t len = strlen(stream);
    for (size_t cut = 0; cut <= len; cut++) {
        for (size_t cut2 = cut; cut2 <= len; cut2 += 3) {
            sink s = {0};
            akg_rpc_reader r;
            akg_rpc_reader_init(&r, 0, on_message, on_error, &s);
            akg_rpc_reader_feed(&r, stream, cut);
            akg_rpc_reader_feed(&r, stream + cut, cut2 - cut);
            akg_rpc_reader_feed(&r, stream + cut2, len - cut2);
            CHECK(s.n_bodies == 2);
            CHECK(s.n_errors == 0);
            CHECK(strcmp(s.bodies[0], "{\"a\":1}") == 0);
            CHECK(strcmp(s.bodies[1], "{}") == 0);
            CHECK(akg_rpc_reader_pending(&r) == 0);
            akg_rpc_reader_free(&r);
        }
    }
}

static void test_cap_and_skip(void)
{
    sink s = {0};
    akg_rpc_reader r;
    akg_rpc_reader_init(&r, 16, on_message, on_error, &s);
    const char *big = "Content-Length: 39\r\n\r\n{\"x\":\"0123456789012345678901234567890\"}";
    akg_rpc_reader_feed(&r, big, strlen(big));
    CHECK(s.n_errors == 1 && s.last_error == AKG_RPC_INVALID_REQUEST);
    CHECK(s.n_bodies == 0);
    const char *next = "Content-Length: 2\r\n\r\n{}";
    akg_rpc_reader_feed(&r, next, strlen(next));
    CHECK(s.n_bodies == 1 && strcmp(s.bodies[0], "{}") == 0);
    akg_rpc_reader_free(&r);
}

static void test_garbage_and_resync(void)
{
    sink s = {0};
    akg_rpc_reader r;
    akg_rpc_reader_init(&r, 0, on_message, on_error, &s);
    const char *bad = "Hello: there\r\n\r\nContent-Length: x1\r\n\r\nContent-Length: 2\r\n\r\n{}";
    akg_rpc_reader_feed(&r, bad, strlen(bad));
    CHECK(s.n_errors == 2);
    CHECK(s.n_bodies == 1);
    /* A body that lies about its length swallows the next header; the
     * message callback hands the rest back and the next message survives. */
    s = (sink){0};
    const char *next = "Content-Length: 2\r\n\r\n{}";
    char lying[256];
    /* declares 5 bytes more than "[1," and the next message: the body
     * swallows the next message and the start of the one after. */
    snprintf(lying, sizeof lying, "Content-Length: %zu\r\n\r\n[1,%s%s", 3 + strlen(next) + 5, next,
             next);
    akg_rpc_reader_feed(&r, lying, strlen(lying));
    CHECK(s.n_bodies == 3);
    CHECK(strcmp(s.bodies[1], "{}") == 0 && strcmp(s.bodies[2], "{}") == 0);
    /* A header that never ends is dropped past the header cap. */
    s = (sink){0};
    char *junk = malloc(3 * AKG_RPC_MAX_HEADER);
    memset(junk, 'z', 3 * AKG_RPC_MAX_HEADER);
    akg_rpc_reader_feed(&r, junk, 3 * AKG_RPC_MAX_HEADER);
    CHECK(s.n_errors >= 1);
    CHECK(akg_rpc_reader_pending(&r) <= AKG_RPC_MAX_HEADER);
    akg_rpc_reader_feed(&r, "\r\n\r\nContent-Length: 2\r\n\r\n{}", 28);
    CHECK(s.n_bodies == 1);
    free(junk);
    akg_rpc_reader_free(&r);
}

static void test_utf8(void)
{
    CHECK(akg_rpc_utf8_valid("plain", 5));
    CHECK(akg_rpc_utf8_valid("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9));
    CHECK(!akg_rpc_utf8_valid("\xc0\xaf", 2));         /* overlong */
    CHECK(!akg_rpc_utf8_valid("\xed\xa0\x80", 3));     /* surrogate */
    CHECK(!akg_rpc_utf8_valid("\xf4\x90\x80\x80", 4)); /* > U+10FFFF */
    CHECK(!akg_rpc_utf8_valid("\xe2\x82", 2));         /* truncated */
    CHECK(!akg_rpc_utf8_valid("\xff", 1));
    CHECK(!akg_rpc_utf8_valid("\xe0\x80\x80", 3)); /* overlong 3-byte */
}

static void test_positions(void)
{
    akg_lsp_documents docs = {0};
    akg_lsp_document *doc = NULL;
    char err[256];
    /* Line 1: "aé😀b" -- é is 2 bytes / 1 UTF-16 unit, 😀 4 bytes / 2 units. */
    const char *text = "x\na\xc3\xa9\xf0\x9f\x98\x80"
                       "b\r\nlast";
    CHECK(akg_lsp_doc_open(&docs, "file:///t.py", "python", 1, text, strlen(text), &doc, err,
                           sizeof err) == AKG_OK);
    CHECK(doc->n_lines == 3);
    size_t b_off = 2 + 1 + 2 + 4;
    CHECK(akg_lsp_doc_offset(doc, AKG_LSP_UTF16, 1, 4) == b_off);
    CHECK(akg_lsp_doc_offset(doc, AKG_LSP_UTF8, 1, 7) == b_off);
    CHECK(akg_lsp_doc_offset(doc, AKG_LSP_UTF32, 1, 3) == b_off);
    /* Inside the surrogate pair: snaps to the character's start. */
    CHECK(akg_lsp_doc_offset(doc, AKG_LSP_UTF16, 1, 3) == 2 + 1 + 2);
    /* Past the end of the line (before \r\n): clamped. */
    CHECK(akg_lsp_doc_offset(doc, AKG_LSP_UTF16, 1, 99) == b_off + 1);
    CHECK(akg_lsp_doc_offset(doc, AKG_LSP_UTF16, 9, 0) == strlen(text));
    unsigned line, ch;
    akg_lsp_doc_position(doc, AKG_LSP_UTF16, b_off, &line, &ch);
    CHECK(line == 1 && ch == 4);
    akg_lsp_doc_position(doc, AKG_LSP_UTF8, b_off, &line, &ch);
    CHECK(line == 1 && ch == 7);

    /* Incremental edit: replace "é😀" (UTF-16 1..4) with "Z". */
    cJSON *change = cJSON_Parse("{\"range\":{\"start\":{\"line\":1,\"character\":1},"
                                "\"end\":{\"line\":1,\"character\":4}},\"text\":\"Z\"}");
    CHECK(akg_lsp_doc_apply_change(doc, AKG_LSP_UTF16, change, err, sizeof err) == AKG_OK);
    CHECK(strcmp(doc->text.data, "x\naZb\r\nlast") == 0);
    cJSON_Delete(change);
    change = cJSON_Parse("{\"range\":{\"start\":{\"line\":1,\"character\":3},"
                         "\"end\":{\"line\":1,\"character\":1}},\"text\":\"\"}");
    CHECK(akg_lsp_doc_apply_change(doc, AKG_LSP_UTF16, change, err, sizeof err) == AKG_EINVAL);
    CHECK(strcmp(doc->text.data, "x\naZb\r\nlast") == 0);
    cJSON_Delete(change);
    change = cJSON_Parse("{\"text\":\"new\\nlines\\n\"}");
    CHECK(akg_lsp_doc_apply_change(doc, AKG_LSP_UTF16, change, err, sizeof err) == AKG_OK);
    CHECK(doc->n_lines == 3);
    cJSON_Delete(change);
    CHECK(akg_lsp_doc_close(&docs, "file:///t.py") == AKG_OK);
    CHECK(akg_lsp_doc_close(&docs, "file:///t.py") == AKG_ENOTFOUND);
    akg_lsp_docs_free(&docs);
}

int main(void)
{
    test_every_split();
    test_cap_and_skip();
    test_garbage_and_resync();
    test_utf8();
    test_positions();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("unit_framing: all checks passed\n");
    return 0;
}
