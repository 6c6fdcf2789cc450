/*
 * Unit tests of the JSON form of a sketch (akg/sketch_json.h): every
 * declaration, statement kind and expression kind, through the public API.
 * Usage: test_sketch_json REPO_ROOT
 */
#include "akg/sketch.h"
#include "akg/sketch_json.h"
#include "expect.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char *root;

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  if (fseek(f, 0, SEEK_END) == 0) {
    long n = ftell(f);
    buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && (fseek(f, 0, SEEK_SET) != 0 || fread(buf, 1, (size_t)n, f) != (size_t)n)) {
      free(buf);
      buf = NULL;
    }
    if (buf) buf[n] = '\0';
  }
  fclose(f);
  return buf;
}

static const char every_kind[] =
    "sketch every_kind {\n"
    "  symbols: N, M;\n"
    "  tensors: x[N, M + 1]: f32; idx[N]: i32; y[N, M + 1]: f32;\n"
    "  constexpr: BLOCK = tune(32, 64), HALF = 16, SCALE = 0.5, BIG = 9007199254740993;\n"
    "  params: eps: f32 = 1e-5, slope = 0.01;\n"
    "  bind: M = init(\"m\"), x = input(\"x\", [N, M + 1]), idx = input(1)\n"
    "  bind: y = output(0), slope = attr(\"act.slope\")\n"
    "\n"
    "  @llm_hint(\"parallel\", \"coreidx\")\n"
    "  @llm_hint(\"unroll\", \"4\")\n"
    "  for i in range(0, N, BLOCK):\n"
    "    t = alloc([BLOCK, M + 1], dtype=f32, llm_hint=[\"fast\", \"init_zero\"])\n"
    "    load(x[i:i+BLOCK, ::2] -> t[:, 0:M // 2 + 1], other=0.0)\n"
    "    if i > 0:\n"
    "      t += 1.0\n"
    "    elif i == 0:\n"
    "      pass\n"
    "    else:\n"
    "      t = exp(t)\n"
    "    a, b = 1, HALF\n"
    "    s = reduce_sum(t, axis=[0, 1], keepdim=False)\n"
    "    relu(t, t)\n"
    "    store(t -> y[i:i+BLOCK, None, :], mask=t > eps)\n"
    "}\n";

static const cJSON *get(const cJSON *o, const char *key) { return cJSON_GetObjectItemCaseSensitive(o, key); }

static const char *str(const cJSON *o, const char *key) {
  const cJSON *v = get(o, key);
  return cJSON_IsString(v) ? v->valuestring : "";
}

static double num(const cJSON *o, const char *key) {
  const cJSON *v = get(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const cJSON *at(const cJSON *arr, int i) { return cJSON_GetArrayItem(arr, i); }

static cJSON *json_of(const char *text, akg_sketch **out) {
  akg_sketch_diag_list *d = akg_sketch_diag_list_new();
  akg_sketch *s = NULL;
  EXPECT(akg_sketch_parse(text, strlen(text), &s, d) == 0, "does not parse");
  cJSON *j = NULL;
  if (s) {
    int errors = akg_sketch_check(s, d);
    EXPECT(errors == 0, "%d checker errors", errors);
    for (size_t i = 0; i < akg_sketch_diag_count(d); i++) {
      char *m = akg_sketch_diag_format("  sketch", akg_sketch_diag_at(d, i));
      fprintf(stderr, "%s\n", m);
      free(m);
    }
    j = akg_sketch_to_json(s);
    EXPECT(j != NULL, "akg_sketch_to_json returned NULL");
  }
  akg_sketch_diag_list_free(d);
  *out = s;
  return j;
}

static void test_header(const cJSON *j) {
  EXPECT(strcmp(str(j, "format"), "akg-sketch") == 0 && num(j, "version") == AKG_SKETCH_JSON_VERSION, "format");
  EXPECT(strcmp(str(j, "name"), "every_kind") == 0, "name");
  const cJSON *syms = get(j, "symbols");
  EXPECT(cJSON_GetArraySize(syms) == 2 && strcmp(at(syms, 1)->valuestring, "M") == 0, "symbols");
  const cJSON *x = at(get(j, "tensors"), 0);
  EXPECT(strcmp(str(x, "name"), "x") == 0 && strcmp(str(x, "dtype"), "f32") == 0, "tensor x");
  const cJSON *d1 = at(get(x, "dims"), 1);
  EXPECT(strcmp(str(d1, "kind"), "binary") == 0 && strcmp(str(d1, "op"), "+") == 0 &&
             strcmp(str(at(get(d1, "items"), 0), "value"), "M") == 0 && num(at(get(d1, "items"), 1), "value") == 1,
         "dimension M + 1 as a tree");
  EXPECT(cJSON_IsTrue(get(x, "loaded")) && cJSON_IsFalse(get(x, "stored")), "x is loaded, not stored");
  EXPECT(cJSON_IsTrue(get(at(get(j, "tensors"), 2), "stored")), "y is stored");

  const cJSON *consts = get(j, "constexprs");
  const cJSON *block = at(consts, 0);
  EXPECT(num(block, "value") == 32 && cJSON_IsTrue(get(block, "tunable")) && num(block, "choice") == 0, "BLOCK");
  EXPECT(cJSON_GetArraySize(get(block, "candidates")) == 2 && at(get(block, "candidates"), 1)->valuedouble == 64,
         "BLOCK candidates");
  EXPECT(strcmp(str(get(block, "expr"), "callee"), "tune") == 0, "BLOCK expr is the tune() call");
  EXPECT(num(at(consts, 1), "value") == 16 && cJSON_IsFalse(get(at(consts, 1), "tunable")), "HALF");
  EXPECT(num(at(consts, 2), "value") == 0.5, "float constexpr SCALE");
  const cJSON *big = get(at(consts, 3), "value");
  EXPECT(cJSON_IsRaw(big) && strcmp(big->valuestring, "9007199254740993") == 0, "integer beyond 2^53 kept exact");

  const cJSON *eps = at(get(j, "params"), 0), *slope = at(get(j, "params"), 1);
  EXPECT(strcmp(str(eps, "dtype"), "f32") == 0 && num(get(eps, "default"), "value") == 1e-5 &&
             strcmp(str(get(eps, "default"), "text"), "1e-5") == 0,
         "param eps");
  EXPECT(cJSON_IsNull(get(slope, "dtype")), "param without a dtype");

  EXPECT(cJSON_IsTrue(get(j, "has_binding")), "has_binding");
  const cJSON *binds = get(j, "bind");
  EXPECT(cJSON_GetArraySize(binds) == 5, "5 bind items across two sections");
  EXPECT(strcmp(str(at(binds, 0), "name"), "M") == 0 && num(at(binds, 0), "line") == 6 && num(at(binds, 0), "col") == 9,
         "bind M at 6:9");
  const cJSON *b1 = at(binds, 1);
  EXPECT(strcmp(str(b1, "name"), "x") == 0 && num(b1, "line") == 6 && num(b1, "col") == 24, "bind x at 6:24");
  const cJSON *src = get(b1, "source");
  EXPECT(strcmp(str(src, "callee"), "input") == 0 && strcmp(str(at(get(src, "items"), 0), "value"), "x") == 0 &&
             strcmp(str(at(get(src, "items"), 1), "kind"), "list") == 0,
         "input(\"x\", [N, M + 1])");
  EXPECT(num(at(get(get(at(binds, 2), "source"), "items"), 0), "value") == 1, "input(1)");
  EXPECT(strcmp(str(at(binds, 4), "name"), "slope") == 0, "bind order");
}

static void test_body(const cJSON *j) {
  const cJSON *body = get(j, "body");
  EXPECT(cJSON_GetArraySize(body) == 1, "one top-level statement");
  const cJSON *loop = at(body, 0);
  EXPECT(strcmp(str(loop, "kind"), "for") == 0 && num(loop, "line") == 11 && num(loop, "col") == 3, "for at 11:3");
  EXPECT(strcmp(str(loop, "var"), "i") == 0 && num(get(loop, "start"), "value") == 0 &&
             strcmp(str(get(loop, "step"), "value"), "BLOCK") == 0,
         "range(0, N, BLOCK)");
  const cJSON *hints = get(loop, "hints");
  EXPECT(cJSON_GetArraySize(hints) == 2 && strcmp(at(at(hints, 0), 1)->valuestring, "coreidx") == 0 &&
             strcmp(at(at(hints, 1), 0)->valuestring, "unroll") == 0,
         "hints");
  const cJSON *in = get(loop, "body");
  EXPECT(cJSON_GetArraySize(in) == 7, "loop body has 7 statements, got %d", cJSON_GetArraySize(in));

  const cJSON *al = at(in, 0);
  EXPECT(strcmp(str(al, "kind"), "alloc") == 0 && strcmp(str(al, "name"), "t") == 0 &&
             strcmp(str(al, "dtype"), "f32") == 0 && cJSON_GetArraySize(get(al, "dims")) == 2 &&
             strcmp(at(get(al, "mem_hints"), 1)->valuestring, "init_zero") == 0,
         "alloc");

  const cJSON *ld = at(in, 1);
  EXPECT(strcmp(str(ld, "kind"), "load") == 0, "load");
  const cJSON *sl = at(get(get(ld, "source"), "items"), 1);
  EXPECT(strcmp(str(sl, "kind"), "slice") == 0 && cJSON_IsNull(get(sl, "start")) && cJSON_IsNull(get(sl, "stop")) &&
             num(get(sl, "step"), "value") == 2,
         "slice ::2");
  EXPECT(strcmp(str(get(get(ld, "target"), "base"), "value"), "t") == 0, "load into a region of t");
  EXPECT(num(get(get(ld, "options"), "other"), "value") == 0 && !get(get(ld, "options"), "mask"), "other=, no mask");

  const cJSON *cond = at(in, 2);
  EXPECT(strcmp(str(cond, "kind"), "if") == 0 && strcmp(str(get(cond, "cond"), "op"), ">") == 0, "if i > 0");
  const cJSON *aug = at(get(cond, "then"), 0);
  EXPECT(strcmp(str(aug, "kind"), "assign") == 0 && strcmp(str(aug, "op"), "+=") == 0, "t += 1.0");
  const cJSON *elif = at(get(cond, "else"), 0);
  EXPECT(strcmp(str(elif, "kind"), "if") == 0 && strcmp(str(at(get(elif, "then"), 0), "kind"), "pass") == 0 &&
             strcmp(str(get(at(get(elif, "else"), 0), "value"), "callee"), "exp") == 0,
         "elif as an if in else");

  const cJSON *tup = at(in, 3);
  EXPECT(cJSON_GetArraySize(get(tup, "targets")) == 2 && strcmp(str(get(tup, "value"), "kind"), "tuple") == 0,
         "a, b = 1, HALF");
  const cJSON *red = get(at(in, 4), "value");
  EXPECT(strcmp(str(red, "callee"), "reduce_sum") == 0 &&
             strcmp(str(get(get(red, "kwargs"), "axis"), "kind"), "list") == 0 &&
             cJSON_IsFalse(get(get(get(red, "kwargs"), "keepdim"), "value")),
         "reduce_sum kwargs");
  const cJSON *call = at(in, 5);
  EXPECT(strcmp(str(call, "kind"), "call") == 0 && cJSON_GetArraySize(get(get(call, "call"), "items")) == 2,
         "relu(t, t) call statement");
  const cJSON *st = at(in, 6);
  const cJSON *target_items = get(get(st, "target"), "items");
  EXPECT(strcmp(str(st, "kind"), "store") == 0 && strcmp(str(at(target_items, 1), "kind"), "none") == 0 &&
             strcmp(str(get(get(st, "options"), "mask"), "op"), ">") == 0,
         "store with None axis and mask");
}

static void test_every_kind(void) {
  akg_sketch *s = NULL;
  cJSON *j = json_of(every_kind, &s);
  if (j) {
    test_header(j);
    test_body(j);
    /* the printed form is one JSON document that parses back */
    char *text = cJSON_PrintUnformatted(j);
    cJSON *back = text ? cJSON_Parse(text) : NULL;
    EXPECT(back != NULL, "printed JSON does not parse");
    cJSON_Delete(back);
    free(text);
  }
  cJSON_Delete(j);
  /* choosing another candidate changes the value in force */
  if (s) {
    EXPECT(akg_sketch_const_choose(s, 0, 1) == 0, "choose BLOCK=64");
    cJSON *k = akg_sketch_to_json(s);
    const cJSON *block = k ? at(get(k, "constexprs"), 0) : NULL;
    EXPECT(block && num(block, "value") == 64 && num(block, "choice") == 1, "BLOCK=64 after choosing");
    cJSON_Delete(k);
  }
  akg_sketch_free(s);
}

/* Every valid fixture converts, and the tree mentions every body statement. */
static void test_fixtures(void) {
  static const char *const fixtures[] = {
      "tests/sketch/fixtures/valid/conv2d.sketch",     "tests/sketch/fixtures/valid/cumsum.sketch",
      "tests/sketch/fixtures/valid/layernorm.sketch",  "tests/sketch/fixtures/valid/matmul_tiled.sketch",
      "tests/sketch/fixtures/valid/maxpool2d.sketch",  "tests/sketch/fixtures/valid/leaky_relu.sketch",
  };
  for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, fixtures[i]);
    char *text = slurp(path);
    EXPECT(text != NULL, "cannot read %s", path);
    if (!text) continue;
    akg_sketch *s = NULL;
    cJSON *j = json_of(text, &s);
    EXPECT(j && cJSON_GetArraySize(get(j, "body")) == (int)akg_sketch_body_count(s), "%s: body", fixtures[i]);
    EXPECT(j && cJSON_IsFalse(get(j, "has_binding")), "%s: no binding", fixtures[i]);
    cJSON_Delete(j);
    akg_sketch_free(s);
    free(text);
  }
}

int main(int argc, char **argv) {
  root = argc > 1 ? argv[1] : ".";
  test_every_kind();
  test_fixtures();
  if (failures) fprintf(stderr, "%d failure(s)\n", failures);
  return failures != 0;
}
