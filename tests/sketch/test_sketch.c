/*
 * Unit tests of the sketch parser, checker and printer through the public
 * API in akg/sketch.h. Usage: test_sketch REPO_ROOT
 */
#include "akg/sketch.h"
#include "corpus_read.h"
#include "expect.h"
#include "invalid_cases.h"

#include <errno.h>


static const char *root;

static void dump_diags(const akg_sketch_diag_list *d) {
  for (size_t i = 0; i < akg_sketch_diag_count(d); i++) {
    char *s = akg_sketch_diag_format("  sketch", akg_sketch_diag_at(d, i));
    fprintf(stderr, "%s\n", s);
    free(s);
  }
}

/* parse -> print -> parse gives an equal IR, and printing is idempotent. */
static void round_trip(const char *name, const char *text) {
  akg_sketch_diag_list *d = akg_sketch_diag_list_new();
  akg_sketch **a = NULL, **b = NULL;
  size_t na = 0, nb = 0;
  int rc = akg_sketch_parse_all(text, strlen(text), &a, &na, d);
  EXPECT(rc == 0, "%s: does not parse", name);
  if (rc) dump_diags(d);
  for (size_t i = 0; rc == 0 && i < na; i++) {
    char *p1 = NULL, *p2 = NULL;
    EXPECT(akg_sketch_print(a[i], &p1) == 0, "%s: print failed", name);
    int rc2 = akg_sketch_parse_all(p1, strlen(p1), &b, &nb, d);
    EXPECT(rc2 == 0 && nb == 1, "%s: printed form does not parse:\n%s", name, p1);
    if (rc2 == 0 && nb == 1) {
      EXPECT(akg_sketch_equal(a[i], b[0]), "%s: round trip changed the IR:\n%s", name, p1);
      EXPECT(akg_sketch_print(b[0], &p2) == 0 && strcmp(p1, p2) == 0, "%s: printing is not idempotent", name);
      akg_sketch_free(b[0]);
      free(b);
    }
    free(p1);
    free(p2);
    akg_sketch_free(a[i]);
  }
  free(a);
  akg_sketch_diag_list_free(d);
}

static char *read_fixture(const char *rel) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  char *t = corpus_slurp(path, NULL);
  EXPECT(t != NULL, "cannot read %s", path);
  return t;
}

static const char *valid_fixtures[] = {
    "tests/sketch/fixtures/published/relu.sketch",    "tests/sketch/fixtures/published/matmul.sketch",
    "tests/sketch/fixtures/valid/designer_relu.sketch", "tests/sketch/fixtures/valid/designer_softmax.sketch",
    "tests/sketch/fixtures/valid/leaky_relu.sketch",  "tests/sketch/fixtures/valid/layernorm.sketch",
    "tests/sketch/fixtures/valid/matmul_tiled.sketch", "tests/sketch/fixtures/valid/conv2d.sketch",
    "tests/sketch/fixtures/valid/maxpool2d.sketch",   "tests/sketch/fixtures/valid/cumsum.sketch",
    "tests/sketch/fixtures/valid/bound_nll.sketch",
};

static void test_valid_fixtures(void) {
  for (size_t i = 0; i < sizeof valid_fixtures / sizeof valid_fixtures[0]; i++) {
    char *text = read_fixture(valid_fixtures[i]);
    if (!text) continue;
    round_trip(valid_fixtures[i], text);
    akg_sketch_diag_list *d = akg_sketch_diag_list_new();
    akg_sketch *s = NULL;
    EXPECT(akg_sketch_parse(text, strlen(text), &s, d) == 0, "%s does not parse", valid_fixtures[i]);
    if (s) {
      int errors = akg_sketch_check(s, d);
      EXPECT(errors == 0, "%s: %d checker errors", valid_fixtures[i], errors);
      /* the designer's sketches must be clean, warnings included */
      if (strstr(valid_fixtures[i], "/valid/"))
        EXPECT(akg_sketch_diag_count(d) == 0, "%s: unexpected diagnostics", valid_fixtures[i]);
      if (akg_sketch_diag_count(d) && strstr(valid_fixtures[i], "/valid/")) dump_diags(d);
      akg_sketch_free(s);
    }
    akg_sketch_diag_list_free(d);
    free(text);
  }
}

static void test_corpus_round_trip(void) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/sketch-grammar/test/corpus", root);
  corpus_case *cases = NULL;
  size_t n = corpus_load_dir(dir, &cases);
  EXPECT(n >= 40, "expected at least 40 corpus cases, found %zu", n);
  for (size_t i = 0; i < n; i++) round_trip(cases[i].name, cases[i].input);
  corpus_free(cases, n);
}

static void test_invalid(void) {
  size_t n = sizeof invalid_cases / sizeof invalid_cases[0];
  EXPECT(n >= 40, "expected at least 40 invalid cases, found %zu", n);
  for (size_t i = 0; i < n; i++) {
    const invalid_case *c = &invalid_cases[i];
    akg_sketch_diag_list *d = akg_sketch_diag_list_new();
    akg_sketch *s = NULL;
    if (akg_sketch_parse(c->text, strlen(c->text), &s, d) == 0) {
      akg_sketch_check(s, d);
      akg_sketch_free(s);
    }
    bool found = false;
    for (size_t k = 0; k < akg_sketch_diag_count(d); k++) {
      const akg_sketch_diag *g = akg_sketch_diag_at(d, k);
      if (g->span.line + 1 == c->line && g->span.col + 1 == c->col && (int)g->severity == c->severity &&
          strstr(g->message, c->message))
        found = true;
    }
    EXPECT(found, "invalid case '%s': no %s at %u:%u containing \"%s\"", c->name,
           c->severity == 1 ? "error" : "warning", c->line, c->col, c->message);
    if (!found) dump_diags(d);
    if (c->severity == 1) EXPECT(akg_sketch_diag_error_count(d) > 0, "invalid case '%s' has no error", c->name);
    akg_sketch_diag_list_free(d);
  }
}

/* The walk API gives a code generator what it needs. */
static void test_walk_api(void) {
  char *text = read_fixture("tests/sketch/fixtures/valid/matmul_tiled.sketch");
  if (!text) return;
  akg_sketch *s = NULL;
  akg_sketch_diag_list *d = akg_sketch_diag_list_new();
  EXPECT(akg_sketch_parse(text, strlen(text), &s, d) == 0, "matmul does not parse");
  if (!s) return;
  EXPECT(akg_sketch_check(s, d) == 0, "matmul has errors");
  EXPECT(strcmp(akg_sketch_name(s), "matmul") == 0, "name");
  EXPECT(akg_sketch_symbol_count(s) == 3, "symbols");
  EXPECT(akg_sketch_tensor_count(s) == 3 && akg_sketch_tensor_dtype(s, 0) == AKG_DTYPE_F16 &&
             akg_sketch_tensor_rank(s, 2) == 2,
         "tensors");
  EXPECT(akg_sketch_tensor_is_loaded(s, 0) && akg_sketch_tensor_is_stored(s, 2) && !akg_sketch_tensor_is_stored(s, 0),
         "tensor use");
  EXPECT(akg_sketch_const_count(s) == 3 && akg_sketch_const_is_tunable(s, 0) &&
             akg_sketch_const_candidate_count(s, 0) == 2 && !akg_sketch_const_is_tunable(s, 2),
         "constexpr");
  int64_t v = 0;
  EXPECT(akg_sketch_const_int(s, 0, &v) == 0 && v == 64, "BM defaults to the first candidate");
  EXPECT(akg_sketch_const_choose(s, 0, 1) == 0 && akg_sketch_const_int(s, 0, &v) == 0 && v == 128, "choose BM=128");
  EXPECT(akg_sketch_const_choose(s, 0, 5) == -EINVAL, "bad candidate");
  const akg_sketch_stmt *fi = akg_sketch_body_at(s, 0);
  EXPECT(akg_sketch_stmt_get_kind(fi) == AKG_SKETCH_STMT_FOR && strcmp(akg_sketch_for_var(fi), "i") == 0, "for i");
  EXPECT(strcmp(akg_sketch_stmt_hint_value(fi, "parallel"), "grididx") == 0, "parallel hint");
  EXPECT(akg_sketch_for_step(fi) && strcmp(akg_sketch_expr_text(akg_sketch_for_step(fi)), "BM") == 0, "step BM");
  akg_sketch_binding bind[] = {{"M", 1000}};
  EXPECT(akg_sketch_expr_eval(s, akg_sketch_for_stop(fi), bind, 1, &v) == 0 && v == 1000, "eval stop");
  const akg_sketch_stmt *fj = akg_sketch_stmt_body_at(fi, 0, 0);
  const akg_sketch_stmt *acc = akg_sketch_stmt_body_at(fj, 0, 0);
  EXPECT(akg_sketch_stmt_get_kind(acc) == AKG_SKETCH_STMT_ALLOC && akg_sketch_alloc_tier(acc) == AKG_SKETCH_TIER_FASTEST &&
             akg_sketch_alloc_has_hint(acc, "accumulator") && akg_sketch_alloc_dtype(acc) == AKG_DTYPE_F32 &&
             akg_sketch_alloc_rank(acc) == 2,
         "accumulator alloc");
  const akg_sketch_stmt *fk = akg_sketch_stmt_body_at(fj, 0, 1);
  EXPECT(akg_sketch_stmt_get_kind(fk) == AKG_SKETCH_STMT_FOR && akg_sketch_stmt_hint_value(fk, "pipeline") &&
             akg_sketch_stmt_hint_value(fk, "parallel") == NULL,
         "pipeline loop");
  const akg_sketch_stmt *ld = akg_sketch_stmt_body_at(fk, 0, 2);
  EXPECT(akg_sketch_stmt_get_kind(ld) == AKG_SKETCH_STMT_LOAD &&
             akg_sketch_expr_get_kind(akg_sketch_move_source(ld)) == AKG_SKETCH_EXPR_SUBSCRIPT &&
             akg_sketch_expr_item_count(akg_sketch_move_source(ld)) == 2,
         "load A[...]");
  const akg_sketch_expr *sl = akg_sketch_expr_item(akg_sketch_move_source(ld), 0);
  char *txt = akg_sketch_expr_to_string(sl);
  EXPECT(txt && strcmp(txt, "i:i + BM") == 0, "slice text %s", txt ? txt : "(null)");
  free(txt);
  const akg_sketch_stmt *g = akg_sketch_stmt_body_at(fk, 0, 4);
  EXPECT(akg_sketch_stmt_get_kind(g) == AKG_SKETCH_STMT_ASSIGN &&
             strcmp(akg_sketch_expr_text(akg_sketch_assign_value(g)), "gemm") == 0,
         "gemm assign");
  long a = akg_sketch_value_find(s, "acc");
  EXPECT(a >= 0 && akg_sketch_value_is_tile(s, a) && akg_sketch_value_rank(s, a) == 2 &&
             akg_sketch_value_dtype(s, a) == AKG_DTYPE_F32,
         "inferred acc");
  akg_sketch_free(s);
  akg_sketch_diag_list_free(d);
  free(text);
}

/* bind: items through the public API, the printer's grouping of them, and
 * `bind` as an ordinary name. */
static void test_bindings(void) {
  static const char text[] = "sketch s {\n"
                             "  symbols: B, S, H;\n"
                             "  tensors: x[B * S, H]: f32; y[B * S, H]: f32;\n"
                             "  constexpr: DIM = 64\n"
                             "  bind: x = input(\"x\", [B, S, H]), y = output(0, [B, S, H]),\n"
                             "  bind   : DIM = init(\"dim\")  # specialised\n"
                             "  @llm_hint(\"vectorize\", \"simd\", 8)\n"
                             "  @llm_hint(\"math\", \"precise\")\n"
                             "  for r in range(B * S):\n"
                             "    t = alloc([2, H])\n"
                             "    load(x[r, :] -> t[0, :])\n"
                             "    load(x[r, :] -> t[1, :])\n"
                             "    store(t[0:1, :] -> y[r:r + 1, :])\n"
                             "}\n";
  static const char *const expected = "sketch s {\n"
                                      "  # specialised\n"
                                      "  symbols: B, S, H;\n"
                                      "  tensors: x[B * S, H]: f32; y[B * S, H]: f32;\n"
                                      "  constexpr: DIM = 64;\n"
                                      "  bind: x = input(\"x\", [B, S, H]), y = output(0, [B, S, H]);\n"
                                      "  bind: DIM = init(\"dim\");\n"
                                      "\n"
                                      "  @llm_hint(\"vectorize\", \"simd\", 8)\n"
                                      "  @llm_hint(\"math\", \"precise\")\n"
                                      "  for r in range(B * S):\n"
                                      "    t = alloc([2, H])\n"
                                      "    load(x[r, :] -> t[0, :])\n"
                                      "    load(x[r, :] -> t[1, :])\n"
                                      "    store(t[0:1, :] -> y[r:r + 1, :])\n"
                                      "}\n";
  round_trip("bindings", text);
  akg_sketch_diag_list *d = akg_sketch_diag_list_new();
  akg_sketch *s = NULL;
  int rc = akg_sketch_parse(text, strlen(text), &s, d);
  EXPECT(rc == 0, "bindings: does not parse");
  if (rc == 0) {
    EXPECT(akg_sketch_has_binding(s) && akg_sketch_bind_count(s) == 3, "bindings: %zu items",
           akg_sketch_bind_count(s));
    EXPECT(strcmp(akg_sketch_bind_name(s, 0), "x") == 0 && strcmp(akg_sketch_bind_name(s, 2), "DIM") == 0,
           "bindings: names in source order");
    const akg_sketch_expr *v = akg_sketch_bind_value(s, 1);
    EXPECT(v && akg_sketch_expr_get_kind(v) == AKG_SKETCH_EXPR_CALL && strcmp(akg_sketch_expr_text(v), "output") == 0 &&
               akg_sketch_expr_item_count(v) == 2,
           "bindings: the source of y");
    akg_sketch_span sp = akg_sketch_bind_span(s, 2);
    EXPECT(sp.line == 5 && sp.col == 11 && sp.end_line == 5 && sp.end_col == 28, "bindings: span %u:%u-%u:%u",
           sp.line, sp.col, sp.end_line, sp.end_col);
    EXPECT(akg_sketch_bind_name(s, 3) == NULL && akg_sketch_bind_value(s, 3) == NULL, "bindings: out of range");
    EXPECT(akg_sketch_check(s, d) == 0, "bindings: checker errors");
    if (akg_sketch_diag_count(d)) dump_diags(d);
    const akg_sketch_stmt *loop = akg_sketch_body_at(s, 0);
    EXPECT(akg_sketch_stmt_hint_count(loop) == 2 && strcmp(akg_sketch_stmt_hint_arg(loop, 0, 2), "8") == 0 &&
               strcmp(akg_sketch_stmt_hint_value(loop, "math"), "precise") == 0,
           "bindings: vector width and math mode");
    char *out = NULL;
    EXPECT(akg_sketch_print(s, &out) == 0 && strcmp(out, expected) == 0, "bindings: printed\n%s\nexpected\n%s",
           out ? out : "", expected);
    free(out);
  }
  akg_sketch_free(s);
  akg_sketch_diag_list_free(d);

  /* `bind` stays an ordinary name wherever no section can start */
  static const char name[] = "sketch s {\n  tensors: x[4]: f32;\n  bind = alloc([4])\n  load(x[:] -> bind)\n"
                             "  for i in range(1):\n    bind = relu(bind)\n  store(bind -> x[:])\n}\n";
  d = akg_sketch_diag_list_new();
  s = NULL;
  rc = akg_sketch_parse(name, strlen(name), &s, d);
  EXPECT(rc == 0 && !akg_sketch_has_binding(s) && akg_sketch_bind_count(s) == 0 && akg_sketch_check(s, d) == 0,
         "bind as a name");
  if (akg_sketch_diag_count(d)) dump_diags(d);
  akg_sketch_free(s);
  akg_sketch_diag_list_free(d);
  round_trip("bind as a name", name);
}

static void test_limits(void) {
  /* deep nesting is refused with a diagnostic, not a stack overflow */
  size_t depth = 5000;
  char *t = malloc(depth * 2 + 64);
  size_t k = (size_t)sprintf(t, "sketch k {\n  a = ");
  for (size_t i = 0; i < depth; i++) t[k++] = '(';
  t[k++] = '1';
  for (size_t i = 0; i < depth; i++) t[k++] = ')';
  k += (size_t)sprintf(t + k, "\n}\n");
  akg_sketch *s = NULL;
  akg_sketch_diag_list *d = akg_sketch_diag_list_new();
  int rc = akg_sketch_parse(t, k, &s, d);
  EXPECT(rc == -EINVAL && s == NULL && akg_sketch_diag_error_count(d) >= 1, "deep nesting rc=%d", rc);
  akg_sketch_free(s);
  akg_sketch_diag_list_free(d);
  free(t);
  /* NUL bytes are rejected with a position */
  d = akg_sketch_diag_list_new();
  const char nul[] = "sketch k {\n  a\0 = 1\n}\n";
  rc = akg_sketch_parse(nul, sizeof nul - 1, &s, d);
  EXPECT(rc == -EINVAL && akg_sketch_diag_count(d) == 1 && akg_sketch_diag_at(d, 0)->span.line == 1, "NUL byte");
  akg_sketch_diag_list_free(d);
}

/* print(parse(text)) keeps every comment where it was written: at the outer
 * indentation before a dedented statement, between an if block and its
 * else/elif, after the header and at the end of an else block (comments on
 * the header's lines move above the sections); one blank line is kept
 * between statements that were separated by blank lines. */
static void test_comments_kept(void) {
  static const char text[] =
      "sketch s {  # c-brace\n"
      "  symbols: N;  # c-symbols\n"
      "  tensors: x[N]: f32; y[N]: f32;\n"
      "\n"
      "  # c-before-loop\n"
      "  for i in range(0, N, 4):\n"
      "    t = alloc([4])\n"
      "    load(x[i:i+4] -> t)\n"
      "\n"
      "\n"
      "    # c-after-blank\n"
      "    if i > 0:\n"
      "      t = relu(t)\n"
      "      # c-if-tail\n"
      "    # c-before-elif\n"
      "    elif i > 4:\n"
      "      t = neg(t)\n"
      "    # c-before-else\n"
      "    else:  # c-else-line\n"
      "      t = exp(t)\n"
      "      # c-else-tail\n"
      "    # c-after-if\n"
      "    store(t -> y[i:i+4])\n"
      "    # c-for-tail\n"
      "  # c-outer\n"
      "  u = 1\n"
      "  # c-body-tail\n"
      "}\n";
  static const char *const expected =
      "sketch s {\n"
      "  # c-brace\n"
      "  # c-symbols\n"
      "  symbols: N;\n"
      "  tensors: x[N]: f32; y[N]: f32;\n"
      "\n"
      "  # c-before-loop\n"
      "  for i in range(0, N, 4):\n"
      "    t = alloc([4])\n"
      "    load(x[i:i + 4] -> t)\n"
      "\n"
      "    # c-after-blank\n"
      "    if i > 0:\n"
      "      t = relu(t)\n"
      "      # c-if-tail\n"
      "    # c-before-elif\n"
      "    elif i > 4:\n"
      "      t = neg(t)\n"
      "    # c-before-else\n"
      "    else:\n"
      "      # c-else-line\n"
      "      t = exp(t)\n"
      "      # c-else-tail\n"
      "    # c-after-if\n"
      "    store(t -> y[i:i + 4])\n"
      "    # c-for-tail\n"
      "  # c-outer\n"
      "  u = 1\n"
      "  # c-body-tail\n"
      "}\n";
  round_trip("comments", text);
  akg_sketch_diag_list *d = akg_sketch_diag_list_new();
  akg_sketch *s = NULL;
  int rc = akg_sketch_parse(text, strlen(text), &s, d);
  EXPECT(rc == 0, "comments: does not parse");
  char *out = NULL;
  if (rc == 0 && akg_sketch_print(s, &out) == 0) {
    EXPECT(strcmp(out, expected) == 0, "comments: printed\n%s\nexpected\n%s", out, expected);
    /* every comment of the input is in the output, once */
    for (const char *c = strstr(text, "# "); c; c = strstr(c + 1, "# ")) {
      char word[32];
      size_t n = strcspn(c + 2, "\n");
      snprintf(word, sizeof word, "# %.*s\n", (int)(n < 20 ? n : 20), c + 2);
      const char *hit = strstr(out, word);
      EXPECT(hit && !strstr(hit + 1, word), "comments: '%.*s' is not printed exactly once", (int)n, c + 2);
    }
  } else {
    EXPECT(0, "comments: print failed");
  }
  free(out);
  akg_sketch_free(s);
  akg_sketch_diag_list_free(d);

  /* found by the fuzzer: a comment line under a decorator (read before the
   * decorator's line break) and a blank line between a decorator and the
   * first statement of a block; both printed differently the second time */
  static const char under_decorator[] = "sketch s {\n"
                                        "  symbols: N;\n"
                                        "  tensors: x[N]: f32;\n"
                                        "\n"
                                        "  @llm_hint(\"parallel\", \"coreidx\")\n"
                                        "# c-under-decorator\n"
                                        "  for i in range(N):\n"
                                        "    @llm_hint(\"unroll\")\n"
                                        "\n"
                                        "    for j in range(N):\n"
                                        "      store(x -> x)\n"
                                        "}\n";
  round_trip("comment under a decorator", under_decorator);
  /* found by the fuzzer: in a sketch without sections, the comment on the `sketch NAME {` line
   * (a header comment) was printed on a line of its own, where it reads back as the body's */
  round_trip("header comment without sections", "sketch s {   # head\n    # two\n\n    # three\n}\n");

  /* found by the fuzzer: the checker's linear forms of extents wrapped on overflow (undefined
   * behaviour, caught by UBSan); an extent past 64 bits is now unknown */
  static const char huge[] = "sketch k {\n  symbols: N;\n  tensors: x[N]: f32; y[N]: f32;\n"
                             "  t = alloc([22222222222222*22222222222-222222221, 4])\n"
                             "  u = alloc([N])\n  load(x[0:N] -> u)\n  store(u -> y[0:N])\n}\n";
  d = akg_sketch_diag_list_new();
  s = NULL;
  rc = akg_sketch_parse(huge, strlen(huge), &s, d);
  EXPECT(rc == 0 && akg_sketch_check(s, d) == 0, "an extent past 64 bits: parse and check");
  akg_sketch_free(s);
  akg_sketch_diag_list_free(d);
  d = akg_sketch_diag_list_new();
  s = NULL;
  out = NULL;
  rc = akg_sketch_parse(under_decorator, strlen(under_decorator), &s, d);
  EXPECT(rc == 0 && akg_sketch_print(s, &out) == 0 && strstr(out, "# c-under-decorator\n"),
         "comment under a decorator is dropped");
  free(out);
  akg_sketch_free(s);
  akg_sketch_diag_list_free(d);
}

int main(int argc, char **argv) {
  root = argc > 1 ? argv[1] : ".";
  test_valid_fixtures();
  test_corpus_round_trip();
  test_comments_kept();
  test_invalid();
  test_walk_api();
  test_bindings();
  test_limits();
  if (failures) {
    fprintf(stderr, "%d failures\n", failures);
    return 1;
  }
  printf("sketch tests passed\n");
  return 0;
}
