/*
 * Differential test of the fast-path sketch parser (engine/sketch/sketch_fast.c)
 * against the tree-sitter path: wherever the fast path accepts a text, the
 * tree-sitter path must accept it too and build an identical IR (spans,
 * comments and derived fields included). The inputs: every grammar corpus
 * case, every fixture, every invalid case, the sketches the built-in
 * Designer writes, regression cases found by the fuzzer, and the printed
 * canonical form of each. The fast path must accept the Designer's sketches,
 * the benchmark's and every canonical form, so production really takes it.
 * Usage: test_sketch_fast REPO_ROOT
 */
#include "akg/akg.h"
#include "akg/design.h"
#include "akg/task.h"
#include "akg/sketch.h"
#include "corpus_read.h"
#include "expect.h"
#include "invalid_cases.h"
#include "sketch_internal.h"
#include "sketch_bench_text.h"

#include <errno.h>

static int compared, accepted, printed_checked;

static const char *root;

/* Parses text with both parsers; returns whether the fast path accepted. */
static bool differential(const char *name, const char *text, size_t len) {
  akg_sketch *fast = NULL;
  int frc = sketch_parse_fast(text, len, &fast);
  akg_sketch_diag_list *d = akg_sketch_diag_list_new();
  akg_sketch **ts = NULL;
  size_t nts = 0;
  int trc = sketch_parse_ts(text, len, &ts, &nts, d);
  compared++;
  if (frc == 0) {
    accepted++;
    EXPECT(trc == 0 && nts == 1, "%s: the fast path accepts what tree-sitter rejects (rc %d, %zu sketches):\n%s",
           name, trc, nts, text);
    if (trc == 0 && nts == 1) {
      char why[160];
      bool same = sketch_ir_identical(fast, ts[0], why, sizeof why);
      EXPECT(same, "%s: the fast path builds a different IR (%s):\n%s", name, why, text);
    }
  } else {
    EXPECT(fast == NULL, "%s: a declined parse stored a sketch", name);
  }
  akg_sketch_free(fast);
  for (size_t i = 0; i < nts; i++) akg_sketch_free(ts[i]);
  free(ts);
  akg_sketch_diag_list_free(d);
  return frc == 0;
}

/* The differential check on text and on the canonical form of each sketch
 * in it; the fast path must accept the canonical forms (and text itself
 * when must_accept). */
static void check_text(const char *name, const char *text, bool must_accept, bool canonical_must) {
  bool ok = differential(name, text, strlen(text));
  EXPECT(ok || !must_accept, "%s: the fast path declines it:\n%s", name, text);
  akg_sketch **list = NULL;
  size_t n = 0;
  if (sketch_parse_ts(text, strlen(text), &list, &n, NULL) != 0) return;
  for (size_t i = 0; i < n; i++) {
    char *printed = NULL;
    if (akg_sketch_print(list[i], &printed) == 0) {
      char pname[200];
      snprintf(pname, sizeof pname, "%s (printed #%zu)", name, i);
      bool pok = differential(pname, printed, strlen(printed));
      printed_checked++;
      EXPECT(pok || !canonical_must, "%s: the fast path declines the canonical form:\n%s", pname, printed);
    }
    free(printed);
    akg_sketch_free(list[i]);
  }
  free(list);
}

static void test_corpus(void) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/sketch-grammar/test/corpus", root);
  corpus_case *cases = NULL;
  size_t n = corpus_load_dir(dir, &cases);
  EXPECT(n >= 40, "expected at least 40 corpus cases, found %zu", n);
  for (size_t i = 0; i < n; i++) check_text(cases[i].name, cases[i].input, false, true);
  corpus_free(cases, n);
}

static void test_fixtures(void) {
  static const char *const dirs[] = {"published", "valid", "invalid"};
  for (size_t k = 0; k < sizeof dirs / sizeof dirs[0]; k++) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tests/sketch/fixtures/%s", root, dirs[k]);
    DIR *dd = opendir(dir);
    if (!dd) continue;
    struct dirent *e;
    while ((e = readdir(dd))) {
      size_t l = strlen(e->d_name);
      if (l < 8 || strcmp(e->d_name + l - 7, ".sketch") != 0) continue;
      char path[2048];
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      char *text = corpus_slurp(path, NULL);
      EXPECT(text != NULL, "cannot read %s", path);
      /* the well-formed fixtures are what tools write: the fast path takes them */
      if (text) check_text(path, text, k < 2, true);
      free(text);
    }
    closedir(dd);
  }
}

static void test_invalid_cases(void) {
  for (size_t i = 0; i < sizeof invalid_cases / sizeof invalid_cases[0]; i++)
    check_text(invalid_cases[i].name, invalid_cases[i].text, false, true);
}

/* ---- the Designer's sketches ------------------------------------------------------------------ */

#define HDR "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
#define T(shape) "{\"kind\":\"tensor\",\"shape\":" shape ",\"dtype\":\"float32\"}"
#define I(v) "{\"kind\":\"scalar\",\"type\":\"int\",\"value\":" v "}"
#define F(v) "{\"kind\":\"scalar\",\"type\":\"float\",\"value\":" v "}"
#define MODEL(init, fwd) HDR "class Model(nn.Module):\n    def __init__(self" init "):\n        super().__init__()\n" fwd

typedef struct {
  const char *name;
  const char *source; /* inline reference, or NULL: tests/families/reductions/refs/NAME.py */
  const char *probe;
} designer_case;

static const designer_case designer_cases[] = {
    {"leaky_relu composite",
     MODEL(", slope", "        self.slope = slope\n    def forward(self, x):\n        y = F.leaky_relu(x, self.slope)\n"
                      "        return y / (1 + y.abs())\n"),
     "{\"inputs\":[" T("[8,16]") "],\"init_inputs\":[" F("0.25") "]}"},
    {"relu", MODEL("", "    def forward(self, x):\n        return torch.relu(x)\n"),
     "{\"inputs\":[" T("[8,16]") "],\"init_inputs\":[]}"},
    {"sigmoid", MODEL("", "    def forward(self, x):\n        return torch.sigmoid(x)\n"),
     "{\"inputs\":[" T("[8,16]") "],\"init_inputs\":[]}"},
    {"log_softmax", MODEL("", "    def forward(self, x):\n        return torch.log_softmax(x, dim=1)\n"),
     "{\"inputs\":[" T("[8,16]") "],\"init_inputs\":[]}"},
    {"softmax", MODEL("", "    def forward(self, x):\n        return torch.softmax(x, dim=-1)\n"),
     "{\"inputs\":[" T("[8,16]") "],\"init_inputs\":[]}"},
    {"matmul", MODEL("", "    def forward(self, a, b):\n        return torch.matmul(a, b)\n"),
     "{\"inputs\":[" T("[64,32]") "," T("[32,48]") "],\"init_inputs\":[]}"},
    {"add", MODEL("", "    def forward(self, a, b):\n        return a + b * 2\n"),
     "{\"inputs\":[" T("[64,32]") "," T("[64,32]") "],\"init_inputs\":[]}"},
    {"sum_dims", MODEL("", "    def forward(self, x):\n        return torch.sum(x, dim=(0, 2))\n"),
     "{\"inputs\":[" T("[4,5,6]") "],\"init_inputs\":[]}"},
    {"sum_keepdim", NULL, "{\"inputs\":[" T("[6,37,10]") "],\"init_inputs\":[" I("1") "]}"},
    {"argmin_last", NULL, "{\"inputs\":[" T("[33,45]") "],\"init_inputs\":[]}"},
    {"rms", NULL,
     "{\"inputs\":[" T("[5,7,24]") "],\"init_inputs\":[" I("24") "," F("1e-5") "],\"params\":[{\"name\":\"weight\","
     "\"shape\":[24],\"dtype\":\"float32\"}]}"},
    {"group_norm", NULL,
     "{\"inputs\":[" T("[3,12,5,7]") "],\"init_inputs\":[" I("12") "," I("4") "," F("1e-5") "],\"params\":[{\"name\":"
     "\"gn.weight\",\"shape\":[12]},{\"name\":\"gn.bias\",\"shape\":[12]}]}"},
    {"reverse_cumprod", NULL, "{\"inputs\":[" T("[30,17]") "],\"init_inputs\":[]}"},
    {"masked_exclusive_cumsum", NULL, "{\"inputs\":[" T("[8,100]") "],\"init_inputs\":[" I("-1") "]}"},
    {"cross_entropy", NULL,
     "{\"inputs\":[" T("[50,13]") ",{\"kind\":\"tensor\",\"shape\":[50],\"dtype\":\"int64\"}],\"init_inputs\":[]}"},
    {"huber", NULL, "{\"inputs\":[" T("[20,31]") "," T("[20,31]") "],\"init_inputs\":[" F("0.7") "]}"},
    {"layer_norm", NULL,
     "{\"inputs\":[" T("[6,4,30]") "],\"init_inputs\":[" I("4") "," I("30") "],\"params\":[{\"name\":\"ln.weight\","
     "\"shape\":[4,30]},{\"name\":\"ln.bias\",\"shape\":[4,30]}]}"},
};

static void test_designer(void) {
  size_t designed = 0;
  for (size_t i = 0; i < sizeof designer_cases / sizeof designer_cases[0]; i++) {
    const designer_case *c = &designer_cases[i];
    char *src = NULL;
    if (c->source) {
      src = strdup(c->source);
    } else {
      char path[1024];
      snprintf(path, sizeof path, "%s/tests/families/reductions/refs/%s.py", root, c->name);
      src = corpus_slurp(path, NULL);
    }
    if (!src) {
      EXPECT(0, "designer case %s: no reference", c->name);
      continue;
    }
    akg_reference *ref = akg_reference_parse(src, strlen(src), "ref.py");
    cJSON *probe = cJSON_Parse(c->probe);
    akg_design *d = NULL;
    akg_range where;
    char err[1024];
    if (ref && probe && akg_designer_builtin(ref, probe, NULL, 1, &d, &where, err, sizeof err) == AKG_OK && d) {
      designed++;
      char name[160];
      snprintf(name, sizeof name, "designer %s", c->name);
      check_text(name, d->sketch_text, true, true);
    }
    akg_design_free(d);
    cJSON_Delete(probe);
    akg_reference_free(ref);
    free(src);
  }
  EXPECT(designed >= 12, "only %zu designer sketches were written", designed);
}

/* ---- the benchmark's sketch and edge cases ------------------------------------------------------ */

static void test_bench_sketch(void) {
  size_t n = 0;
  char *t = sketch_bench_text(200, &n);
  EXPECT(t != NULL, "out of memory");
  if (t) check_text("benchmark sketch", t, true, true);
  free(t);
}

/* Texts that exercise the fast path's edges: comments in every place the
 * builder files them, layout it declines, and cases the fuzzer found. Each
 * only has to agree with tree-sitter (or be declined). */
static const char *const edge_cases[] = {
    /* comments everywhere (test_sketch.c's comment test) */
    "sketch s {  # c-brace\n  symbols: N;  # c-symbols\n  tensors: x[N]: f32; y[N]: f32;\n\n  # c-before-loop\n"
    "  for i in range(0, N, 4):\n    t = alloc([4])\n    load(x[i:i+4] -> t)\n\n\n    # c-after-blank\n"
    "    if i > 0:\n      t = relu(t)\n      # c-if-tail\n    # c-before-elif\n    elif i > 4:\n      t = neg(t)\n"
    "    # c-before-else\n    else:  # c-else-line\n      t = exp(t)\n      # c-else-tail\n    # c-after-if\n"
    "    store(t -> y[i:i+4])\n    # c-for-tail\n  # c-outer\n  u = 1\n  # c-body-tail\n}\n",
    "sketch s {\n  symbols: N;\n  tensors: x[N]: f32;\n\n  @llm_hint(\"parallel\", \"coreidx\")\n# c-under-decorator\n"
    "  for i in range(N):\n    @llm_hint(\"unroll\")\n\n    for j in range(N):\n      store(x -> x)\n}\n",
    "# above\n# above 2\nsketch s {\n}\n# after\n",
    "sketch s {\n}\n",
    "sketch s {\n  # only a comment\n}\n",
    "sketch s {\nx = 1\ny = 2\n}",
    "sketch s {\n    x = 1\n  }\n",
    "sketch s {\n  x = 1  # t\n  @h(\"a\")  # d\n  # e\n\n  y = 2;  # f\n}\n",
    "sketch s {\n  x = 1\n  @h(\"a\")\n  # e\n  y = 2\n}\n",
    "sketch s {\n  x = 1\n\n  @h(\"a\")\n  @g()\n  y = 2\n}\n",
    "sketch s {\n  if a:\n    x = 1\n\n# c0\n  # c1\n  elif b:\n    y = 2\n\n  # c2\n  elif c:  # c3\n    z = 1\n"
    "# c4\n  else:\n    # c5\n    w = 1\n  # c6\n  v = 1\n}\n",
    "sketch s {\n  for i in range(N):\n    for j in range(i, N):\n      x = 1;\n  # c\n\n}\n",
    "sketch s {\n  symbols: M, N,\n  tensors: a[M, N,]: f16; b[]: f32;\n  constexpr: A = 1; B, C = tune(1, 2,);\n"
    "  params: p: f32 = 1.5, q, r = -2\n  # before body\n  x = a[1:, :2, ::3, 1:2:3, :, ::, 1::]\n}\n",
    "sketch s {\n  x = -a ** -b ** c * not d + e\n}\n",
    "sketch s {\n  x = not a == b and c or not d < e | f ^ g & h << 1 >> 2 + 3 - 4 * 5 / 6 // 7 % 8 ** 9\n}\n",
    "sketch s {\n  x = ~a[0][1]\n  y = f(a)[0]\n  z = (a + b)[c]\n  w = [1, 2,][0]\n  v = \"s\"[0]\n}\n",
    "sketch s {\n  a, b = 1, 2\n  c += 1\n  d -= e\n  f *= (g)\n  h /= i\n  j = (alloc([4]))\n}\n",
    "sketch s {\n  t = alloc([4], f16, llm_hint=\"fast\")\n  u = alloc(shape=[4], dtype=\"f32\", llm_hint=[\"a\", 1, \"b\"])\n"
    "  v = alloc([4], dtype=bf16, llm_hint=[])\n  w = alloc()\n}\n",
    "sketch s {\n  load(a[i] -> t, mask=m, other=0,)\n  store(t -> a[i], llm_hint=[\"nontemporal\"])\n  pass\n}\n",
    "sketch s {\n  x = f(\n    a,\n\n    b=2,\n  )\n  y = [\n1]\n}\n",
    "sketch s {\n  x = f(a,  # c\n  b)\n}\n",
    "sketch s {\n  x = a +\n    b\n}\n",
    "sketch s {\n  x = 1\n    y = 2\n}\n",
    "sketch s {\n\tx = 1\n}\n",
    "sketch s {\r\n  x = 1\r\n}\r\n",
    "sketch s {\n  x = 1\n}\nsketch t {\n  y = 1\n}\n",
    "sketch s {\n  load = 1\n}\n",
    "sketch s {\n  x = load\n}\n",
    "sketch s {\n  for i in range(N):\n    symbols = 1\n}\n",
    "sketch s {\n  @llm_hint(x)\n  y = 1\n}\n",
    "sketch s {\n  @llm_hint(\"a\")\n}\n",
    "sketch s {\n  x = 99999999999999999999\n}\n",
    "sketch s {\n  x = 0x_ + 0XfF + 1_0 + 1. + .5 + 1e3 + 1.5E-3 + 1_0.0_1\n}\n",
    "sketch s {\n  x = 1e\n}\n",
    "sketch s {\n  x = \"a\\\"b\\n\\t\\\\\" + 'c\\'d'\n}\n",
    "sketch s {\n  x = \"caf\xc3\xa9\"  # na\xc3\xafve\n}\n",
    "sketch s {\n  x = \"bad \xff\"\n}\n",
    "sketch s {  x = 1\n}\n",
    "sketch s { x = 1 }\n",
    "sketch s\n{\n  x = 1\n}\n",
    "sketch s {\n  x = 1 }\n",
    "sketch s {\n  x = 1\n} y\n",
    "sketch s {\n  x = 1\n}  # end\n",
    "sketch s {\n  x = 1\n",
    "sketch s {\n  if a:\n    x = 1\n  else:\n    y = 1\n  else:\n    z = 1\n}\n",
    "sketch s {\n  for i in range(N):\n    if a:\n      x = 1\n  else:\n    y = 1\n}\n",
    "sketch s {\n  for i in range(N):\n      x = 1\n    y = 1\n}\n",
    "sketch s {\n  x = 1\n  symbols: N\n}\n",
    "sketch s {\n  symbols: M; N\n}\n",
    "sketch s {\n  tensors: a: f32, b: f32\n}\n",
    "sketch s {\n  x = y = 1\n}\n",
    "sketch s {\n  x = a, b,\n}\n",
    "sketch s {\n  f(a)(b)\n}\n",
    "sketch s {\n  x = a->b\n}\n",
    "sketch s {\n  x = a[]\n}\n",
    "sketch s {\n  x = (a, b)\n}\n",
    "sketch s {\n  x = f(a=1, 2, b=3)\n}\n",
    "sketch s {\n  @h(\n    \"a\",\n    \"b\",\n  )\n  x = 1\n}\n",
    "sketch s {\n  @h\n  x = 1\n}\n",
    "sketch s {\n  # a\n\n  # b\n  symbols: N  # c\n  # d\n\n  tensors: x[N]: f32\n  # e\n\n  @h()\n\n  x = 1\n}\n",
    "sketch s {\n  x = 1\n  # a\n\n  # b\n  y = 2\n\n\n  z = 3\n}\n",
    "sketch s {\n  for i in range(N):  # x\n    # y\n\n    a = 1\n    # z\n  # w\n# v\n  b = 2\n}\n",
    "sketch s {\n  if a:\n    if b:\n      x = 1\n    # c\n    elif c:\n      y = 1\n  # d\n  else:\n    z = 1\n}\n",
    /* bind: sections (from index 63 on), integer hint arguments, `bind` as a name */
    "sketch s {\n  symbols: B, S;\n  tensors: x[B * S]: f32;\n  bind: x = input(\"x\", [B, S]), y = output(0),\n"
    "  bind   : N = (B + 1) // 2;\n  bind: w = weight(\"a.0.b\")  # c1\n  # c2\n\n  t = 1\n}\n",
    "sketch s {\n  bind = alloc([4])\n  bind(x, bind)\n  y = bind + 1\n  bind += 1\n  for bind in range(4):\n    pass\n}\n",
    "sketch s {\n  # a\n  bind: x = input(0)\n  # b\n  symbols: N\n  bind: y = output(0)\n}\n",
    "sketch s {\n  @llm_hint(\"vectorize\", \"simd\", 8)\n  @llm_hint(\"unroll\", 4, \"4\")\n  @llm_hint(\"math\", \"fast\")\n"
    "  t = gather(x, i, 1)\n  load(w[0:4] -> t[0, 0:4])\n}\n",
    "sketch s {  # h\n  bind: x = input(0);\n}\n",
    "sketch s {\n  x = 1\n  bind: y = output(0)\n}\n",
    "sketch s {\n  for i in range(4):\n    bind: y = output(0)\n}\n",
    "sketch s {\n  bind:\n}\n",
    "sketch s {\n  bind: x = 1; y = 2\n}\n",
    "sketch s {\n  bind: x = 1,, y = 2\n}\n",
    "sketch s {\n  bind\t: x = 1\n}\n",
    "sketch s {\n  bind\n  : x = 1\n}\n",
    "sketch s {\n  bind: x\n}\n",
    "sketch s {\n  bind: for = 1\n}\n",
    "sketch s {\n  binder: x = 1\n}\n",
    "sketch s { bind: x = 1\n}\n",
    "sketch s {\n  @llm_hint(\"unroll\", 0x4)\n  for i in range(4):\n    pass\n}\n",
    "sketch s {\n  @llm_hint(\"unroll\", 1_0)\n  for i in range(4):\n    pass\n}\n",
    "sketch s {\n  @llm_hint(\"unroll\", -4)\n  for i in range(4):\n    pass\n}\n",
};

static void test_edge_cases(void) {
  for (size_t i = 0; i < sizeof edge_cases / sizeof edge_cases[0]; i++) {
    char name[32];
    snprintf(name, sizeof name, "edge case %zu", i);
    check_text(name, edge_cases[i], false, false);
    if (getenv("SKETCH_FAST_VERBOSE")) {
      akg_sketch *f = NULL, **l = NULL;
      size_t n = 0;
      int frc = sketch_parse_fast(edge_cases[i], strlen(edge_cases[i]), &f);
      int trc = sketch_parse_ts(edge_cases[i], strlen(edge_cases[i]), &l, &n, NULL);
      printf("edge %zu: fast %s, tree-sitter %s\n", i, frc ? "declines" : "accepts", trc ? "rejects" : "accepts");
      akg_sketch_free(f);
      for (size_t j = 0; j < n; j++) akg_sketch_free(l[j]);
      free(l);
    }
  }
  /* a few the fast path must take: the common shapes of hand-written sketches */
  static const size_t must[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 63, 64, 65, 66, 67};
  for (size_t i = 0; i < sizeof must / sizeof must[0]; i++) {
    akg_sketch *s = NULL;
    EXPECT(sketch_parse_fast(edge_cases[must[i]], strlen(edge_cases[must[i]]), &s) == 0,
           "edge case %zu: the fast path declines it", must[i]);
    akg_sketch_free(s);
  }
}

/* Deep nesting: the builder's limit is reported by the tree-sitter path. */
static void test_nesting(void) {
  for (size_t depth = 150; depth <= 260; depth += 10) {
    char *t = malloc(depth * 4 + 64);
    size_t k = (size_t)sprintf(t, "sketch k {\n  a = ");
    for (size_t i = 0; i < depth; i++) t[k++] = '(';
    t[k++] = '1';
    for (size_t i = 0; i < depth; i++) t[k++] = ')';
    k += (size_t)sprintf(t + k, "\n}\n");
    t[k] = '\0';
    differential("nested parentheses", t, k);
    k = (size_t)sprintf(t, "sketch k {\n  a = 1");
    for (size_t i = 0; i < depth; i++) k += (size_t)sprintf(t + k, "+1");
    k += (size_t)sprintf(t + k, "\n}\n");
    differential("long sum", t, k);
    free(t);
  }
  akg_sketch *s = NULL;
  akg_sketch_diag_list *d = akg_sketch_diag_list_new();
  const char deep[] = "sketch k {\n  a = ((((1))))\n}\n";
  EXPECT(akg_sketch_parse(deep, strlen(deep), &s, d) == 0, "shallow nesting parses");
  akg_sketch_free(s);
  akg_sketch_diag_list_free(d);
}

int main(int argc, char **argv) {
  root = argc > 1 ? argv[1] : ".";
  test_corpus();
  test_fixtures();
  test_invalid_cases();
  test_designer();
  test_bench_sketch();
  test_edge_cases();
  test_nesting();
  printf("fast path: %d texts compared, %d accepted, %d canonical forms\n", compared, accepted, printed_checked);
  if (failures) {
    fprintf(stderr, "%d failures\n", failures);
    return 1;
  }
  printf("sketch fast-path tests passed\n");
  return 0;
}
