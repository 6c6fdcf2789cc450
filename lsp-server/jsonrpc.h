/*
 * jsonrpc.h: JSON-RPC 2.0 messages over a byte stream with LSP's
 * `Content-Length` framing.
 *
 * Two layers:
 *  - akg_rpc_reader is pure: bytes in, whole message bodies (or framing
 *    errors) out through callbacks. It handles headers and bodies split across
 *    reads, caps every message, skips the body of an oversized message without
 *    storing it and resynchronises on the next header after garbage.
 *  - akg_rpc_transport reads stdin and writes stdout through libuv handles on
 *    the server's loop and feeds a reader.
 */
#ifndef AKG_LSP_JSONRPC_H
#define AKG_LSP_JSONRPC_H

#include <stddef.h>
#include <uv.h>

#include "akg/akg.h"

#define AKG_RPC_DEFAULT_MAX_MESSAGE ((size_t)64 << 20)
#define AKG_RPC_MAX_HEADER ((size_t)8192)

/* JSON-RPC and LSP error codes. */
enum {
    AKG_RPC_PARSE_ERROR = -32700,
    AKG_RPC_INVALID_REQUEST = -32600,
    AKG_RPC_METHOD_NOT_FOUND = -32601,
    AKG_RPC_INVALID_PARAMS = -32602,
    AKG_RPC_INTERNAL_ERROR = -32603,
    AKG_RPC_SERVER_NOT_INITIALIZED = -32002,
    AKG_RPC_REQUEST_FAILED = -32803,
    AKG_RPC_REQUEST_CANCELLED = -32800
};

/* A whole message body; body is valid only during the call. Returns how many
 * bytes of it were a message: len normally; less when the body did not parse
 * and a next header starts inside it (see akg_rpc_find_resync), and the
 * reader then reads again from there. */
typedef size_t (*akg_rpc_message_cb)(void *user, const char *body, size_t len);
/* A framing problem the peer should hear about (code is a JSON-RPC error
 * code, message one line); the reader has already resynchronised. */
typedef void (*akg_rpc_framing_cb)(void *user, int code, const char *message);

typedef struct {
    akg_buf pending;    /* bytes not yet consumed: part of a header or body */
    size_t max_message; /* body cap */
    size_t skip_left;   /* bytes of an oversized body still to discard */
    int failed;         /* the stream cannot be resynchronised; stop reading */
    akg_rpc_message_cb on_message;
    akg_rpc_framing_cb on_framing_error;
    void *user;
} akg_rpc_reader;

/* Initialises a reader; max_message 0 means AKG_RPC_DEFAULT_MAX_MESSAGE. The
 * reader owns its pending buffer; release with akg_rpc_reader_free. */
void akg_rpc_reader_init(akg_rpc_reader *r, size_t max_message, akg_rpc_message_cb on_message,
                         akg_rpc_framing_cb on_framing_error, void *user);
void akg_rpc_reader_free(akg_rpc_reader *r);
/* Feeds bytes; calls the callbacks for every complete message or error. */
void akg_rpc_reader_feed(akg_rpc_reader *r, const char *data, size_t len);
/* After a body that did not parse: if it holds the start of a next header
 * (a sender that lied about Content-Length), returns the offset of that
 * header inside the body, else len. */
size_t akg_rpc_find_resync(const char *body, size_t len);
/* Bytes held for an unfinished message (0 when the stream ended cleanly). */
size_t akg_rpc_reader_pending(const akg_rpc_reader *r);

/* 1 when s[0..len) is well-formed UTF-8 (no overlongs, surrogates, > U+10FFFF). */
int akg_rpc_utf8_valid(const char *s, size_t len);

typedef struct akg_rpc_transport akg_rpc_transport;

typedef void (*akg_rpc_eof_cb)(void *user);

/* Starts reading in_fd and writing out_fd on loop. Messages go to on_message;
 * framing errors to on_framing_error; on_eof runs once when the input ends or
 * fails. The caller owns the transport; close it with akg_rpc_transport_close,
 * which stops reading at once, gives queued writes up to half a second to
 * reach a peer that has stopped reading (then drops them), and calls close_cb
 * when every handle is closed (the transport's memory is freed just before). */
int akg_rpc_transport_new(uv_loop_t *loop, int in_fd, int out_fd, size_t max_message,
                          akg_rpc_message_cb on_message, akg_rpc_framing_cb on_framing_error,
                          akg_rpc_eof_cb on_eof, void *user, akg_rpc_transport **out, char *err,
                          size_t errlen);
/* Queues one message (the JSON text, without header). Fails with AKG_ENOMEM
 * when more than the output cap is waiting (a client that stopped reading). */
int akg_rpc_transport_send(akg_rpc_transport *t, const char *json, size_t len);
/* Bytes written but not yet accepted by the peer. */
size_t akg_rpc_transport_queued(const akg_rpc_transport *t);
void akg_rpc_transport_close(akg_rpc_transport *t, void (*close_cb)(void *user), void *user);

#endif
