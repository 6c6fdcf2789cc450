/*
 * External scanner for the Unified Sketch grammar: NEWLINE, INDENT, DEDENT.
 *
 * Statements end at a line break unless the parser is inside brackets or an
 * unfinished expression (then NEWLINE is not a valid symbol and the break is
 * plain whitespace). Blocks open when a line is indented deeper than the
 * enclosing one and close when it is shallower. Full-line comments never
 * decide indentation: the decision waits for the next line of code. A closing
 * brace ends the open statement and every open block, whatever its column.
 *
 * Layout tokens are zero-width. INDENT, DEDENT and a NEWLINE followed by a
 * change of indentation sit at the end of their line, so blocks end where
 * their last statement ends; a NEWLINE followed by a line at the same
 * indentation sits at the start of that line (see the end of scan()).
 */
#include "tree_sitter/parser.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum sketch_token { SKETCH_NEWLINE, SKETCH_INDENT, SKETCH_DEDENT, SKETCH_ERROR_SENTINEL };

/* Deeper nesting than this is not a kernel design; the scanner stops
 * opening blocks and the parser reports the unexpected indentation. */
#define SKETCH_MAX_DEPTH 64

typedef struct {
  uint8_t depth; /* number of entries in indents, always >= 1 */
  uint16_t indents[SKETCH_MAX_DEPTH];
} sketch_scanner;

static void sketch_skip(TSLexer *lexer) { lexer->advance(lexer, true); }

static bool sketch_emit(TSLexer *lexer, enum sketch_token token) {
  lexer->result_symbol = (TSSymbol)token;
  return true;
}

void *tree_sitter_sketch_external_scanner_create(void) {
  sketch_scanner *s = calloc(1, sizeof *s);
  if (s) {
    s->depth = 1;
    s->indents[0] = 0;
  }
  return s;
}

void tree_sitter_sketch_external_scanner_destroy(void *payload) { free(payload); }

unsigned tree_sitter_sketch_external_scanner_serialize(void *payload, char *buffer) {
  sketch_scanner *s = payload;
  size_t size = 1 + (size_t)s->depth * sizeof(uint16_t);
  if (size > TREE_SITTER_SERIALIZATION_BUFFER_SIZE) return 0;
  buffer[0] = (char)s->depth;
  memcpy(buffer + 1, s->indents, (size_t)s->depth * sizeof(uint16_t));
  return (unsigned)size;
}

void tree_sitter_sketch_external_scanner_deserialize(void *payload, const char *buffer, unsigned length) {
  sketch_scanner *s = payload;
  s->depth = 1;
  s->indents[0] = 0;
  if (length == 0) return;
  uint8_t depth = (uint8_t)buffer[0];
  if (depth < 1 || depth > SKETCH_MAX_DEPTH || length < 1 + (unsigned)depth * sizeof(uint16_t)) return;
  s->depth = depth;
  memcpy(s->indents, buffer + 1, (size_t)depth * sizeof(uint16_t));
}

bool tree_sitter_sketch_external_scanner_scan(void *payload, TSLexer *lexer, const bool *valid) {
  sketch_scanner *s = payload;

  /* Every external token is valid only during error recovery; let the
   * internal lexer skip ahead instead of inventing layout tokens. */
  if (valid[SKETCH_ERROR_SENTINEL]) return false;

  /* Layout tokens are zero-width: they end where the whitespace starts. */
  lexer->mark_end(lexer);

  bool found_eol = false;
  uint32_t indent = 0;
  for (;;) {
    int32_t c = lexer->lookahead;
    if (c == '\n') {
      found_eol = true;
      indent = 0;
    } else if (c == ' ') {
      indent++;
    } else if (c == '\t') {
      indent = (indent / 8 + 1) * 8;
    } else if (c == '\r' || c == '\f') {
      /* part of a CRLF or a form feed: neither changes the column */
    } else {
      break;
    }
    if (lexer->eof(lexer)) break;
    sketch_skip(lexer);
  }

  bool at_close = !lexer->eof(lexer) && lexer->lookahead == '}';
  if (lexer->eof(lexer) || at_close) {
    if (valid[SKETCH_NEWLINE]) return sketch_emit(lexer, SKETCH_NEWLINE);
    if (valid[SKETCH_DEDENT] && s->depth > 1) {
      s->depth--;
      return sketch_emit(lexer, SKETCH_DEDENT);
    }
    return false;
  }

  if (!found_eol || lexer->lookahead == '#') return false;

  uint16_t current = s->indents[s->depth - 1];
  if (indent > current && valid[SKETCH_INDENT] && s->depth < SKETCH_MAX_DEPTH) {
    s->indents[s->depth++] = (uint16_t)(indent > UINT16_MAX ? UINT16_MAX : indent);
    return sketch_emit(lexer, SKETCH_INDENT);
  }
  if (indent < current && valid[SKETCH_DEDENT] && s->depth > 1) {
    s->depth--;
    return sketch_emit(lexer, SKETCH_DEDENT);
  }
  if (valid[SKETCH_NEWLINE]) {
    /* The common case: the next line stays at this indentation, so no INDENT
     * or DEDENT follows. Ending the token after the indentation makes the
     * line break and the indentation its padding, so neither this scanner
     * nor the internal lexer walks over them again for the next token. */
    if (indent == current) lexer->mark_end(lexer);
    return sketch_emit(lexer, SKETCH_NEWLINE);
  }
  return false;
}
