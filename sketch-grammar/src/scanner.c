/*
 * External scanner for the Unified Sketch grammar: NEWLINE, INDENT, DEDENT,
 * and the keyword of a `bind:` header section.
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
 *
 * `bind` opens a header section only where a section may start and a ':'
 * follows it on the same line (spaces and tabs between); everywhere else it
 * is an ordinary identifier, as it was before the section existed. A keyword
 * of the internal lexer could not do that: it would be a keyword at the start
 * of every statement, and `bind = alloc([4])` would no longer parse.
 */
#include "tree_sitter/parser.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum sketch_token { SKETCH_NEWLINE, SKETCH_INDENT, SKETCH_DEDENT, SKETCH_ERROR_SENTINEL, SKETCH_BIND };

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

static bool sketch_is_word_char(int32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* At the first character of a token: `bind` followed by optional spaces or
 * tabs and ':' is the section keyword (the token is the word alone). The
 * characters read past the word are lookahead; on a mismatch the internal
 * lexer starts over from the token's first character. */
static bool sketch_scan_bind(TSLexer *lexer, const bool *valid) {
  if (!valid[SKETCH_BIND] || lexer->lookahead != 'b') return false;
  static const char word[] = "bind";
  for (const char *w = word; *w; w++) {
    if (lexer->eof(lexer) || lexer->lookahead != *w) return false;
    lexer->advance(lexer, false);
  }
  if (!lexer->eof(lexer) && sketch_is_word_char(lexer->lookahead)) return false;
  lexer->mark_end(lexer);
  while (!lexer->eof(lexer) && (lexer->lookahead == ' ' || lexer->lookahead == '\t')) lexer->advance(lexer, false);
  if (lexer->eof(lexer) || lexer->lookahead != ':') return false;
  return sketch_emit(lexer, SKETCH_BIND);
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

  if (!found_eol || lexer->lookahead == '#') return sketch_scan_bind(lexer, valid);

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
  return sketch_scan_bind(lexer, valid);
}
