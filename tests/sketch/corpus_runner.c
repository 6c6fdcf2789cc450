/*
 * Field labels ("name: ") are dropped from both trees, as `tree-sitter test`
 * does when the expected tree has none.
 *
 * Checks sketch-grammar/test/corpus without the tree-sitter CLI: parses each
 * case with the generated parser and compares ts_node_string() with the
 * expected S-expression, whitespace normalised.
 * Usage: corpus_runner CORPUS_DIR
 */
#include "corpus_read.h"

#include <ctype.h>
#include <tree_sitter/api.h>

const TSLanguage *tree_sitter_sketch(void);

static char *normalise(const char *s) {
  size_t n = strlen(s);
  char *out = malloc(n + 1);
  size_t k = 0;
  bool space = false;
  for (size_t i = 0; i < n; i++) {
    if (isspace((unsigned char)s[i])) {
      space = true;
      continue;
    }
    size_t j = i;
    while (j < n && (islower((unsigned char)s[j]) || s[j] == '_')) j++;
    if (j > i && j < n && s[j] == ':') { /* a field label */
      i = j;
      continue;
    }
    if (space && k && out[k - 1] != '(' && s[i] != ')') out[k++] = ' ';
    space = false;
    out[k++] = s[i];
  }
  out[k] = '\0';
  return out;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: corpus_runner CORPUS_DIR\n");
    return 2;
  }
  corpus_case *cases = NULL;
  size_t n = corpus_load_dir(argv[1], &cases);
  if (n == 0) {
    fprintf(stderr, "no corpus cases found in %s\n", argv[1]);
    return 1;
  }
  TSParser *parser = ts_parser_new();
  ts_parser_set_language(parser, tree_sitter_sketch());
  size_t failed = 0;
  for (size_t i = 0; i < n; i++) {
    TSTree *tree = ts_parser_parse_string(parser, NULL, cases[i].input, (uint32_t)strlen(cases[i].input));
    char *got = ts_node_string(ts_tree_root_node(tree));
    char *a = normalise(got), *b = normalise(cases[i].expected);
    if (strcmp(a, b) != 0) {
      failed++;
      fprintf(stderr, "FAIL %s\n  expected: %s\n  got:      %s\n", cases[i].name, b, a);
    }
    free(a);
    free(b);
    free(got);
    ts_tree_delete(tree);
  }
  ts_parser_delete(parser);
  printf("%zu corpus cases, %zu failed\n", n, failed);
  corpus_free(cases, n);
  return failed ? 1 : 0;
}
