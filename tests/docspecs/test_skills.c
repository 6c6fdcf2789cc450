/* test_skills.c: DocSpec skills (engine/providers/openai/skills.c): headers parsed and refused
 * with the file and line, selection (always first, relevance order, the token budget, the
 * agent, debugging skills only after a failure), every shipped skill folder loading, a new DSL
 * that has only a skills folder (in a temporary AKG_HOME) getting its skills into the Coder's
 * prompt, and {{skills}} filled in the shipped templates. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "akg/akg.h"
#include "check.h"
#include "prompt.h"
#include "skills.h"

static char home[256];

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* a skill file's text with the given level, families and keywords and a body of body_bytes */
static char *skill_text(const char *name, const char *dsl, const char *level, const char *families,
                        const char *keywords, const char *agents, size_t body_bytes)
{
    akg_buf b;
    akg_buf_init(&b, 0);
    akg_buf_appendf(&b, "---\nname: %s\ndescription: about %s\ndsl: %s\nlevel: %s\n", name, name,
                    dsl, level);
    if (families)
        akg_buf_appendf(&b, "families: %s\n", families);
    if (keywords)
        akg_buf_appendf(&b, "keywords: %s\n", keywords);
    if (agents)
        akg_buf_appendf(&b, "agents: %s\n", agents);
    akg_buf_puts(&b, "---\n");
    for (size_t i = 0; i < body_bytes; i++)
        akg_buf_puts(&b, i % 64 == 63 ? "\n" : "x");
    akg_buf_puts(&b, "\n");
    return akg_buf_take(&b);
}

static int parse(const char *text, akg_skill *s, char *err, size_t errlen)
{
    return akg_skill_parse("docspecs/cpp/t.md", text, "cpp", s, err, errlen);
}

static void test_header(void)
{
    char err[512];
    akg_skill s;
    char *t = skill_text("a", "cpp", "on_request", "[matmul, conv]", "[gemm, Tile]", NULL, 100);
    CHECK(parse(t, &s, err, sizeof err) == AKG_OK);
    CHECK_STR(s.name, "a");
    CHECK(s.level == AKG_SKILL_ON_REQUEST);
    CHECK(s.n_families == 2 && !strcmp(s.families[1], "conv"));
    CHECK(s.n_keywords == 2 && !strcmp(s.keywords[1], "tile")); /* lower case */
    CHECK(s.agents == (AKG_SKILL_FOR_DESIGNER | AKG_SKILL_FOR_CODER));
    CHECK(s.body && s.body[0] == 'x');
    CHECK(s.tokens >= 100 / 4 && s.tokens < 100 / 4 + 20);
    akg_skill_free(&s);
    free(t);

    /* the original's spellings of the levels */
    t = skill_text("a", "cpp", "when debugging", NULL, NULL, "[coder]", 10);
    CHECK(parse(t, &s, err, sizeof err) == AKG_OK && s.level == AKG_SKILL_DEBUGGING &&
          s.agents == AKG_SKILL_FOR_CODER);
    akg_skill_free(&s);
    free(t);

    /* malformed headers: the file and the line of the fault, and what would work */
    struct {
        const char *text, *want;
    } bad[] = {
        {"no header\n", "docspecs/cpp/t.md:1: error: a skill starts with a YAML header"},
        {"---\nname: a\n", "docspecs/cpp/t.md:1: error: the header opened here has no closing"},
        {"---\nname: a\ndescription: d\ndsl: cpp\nlevel: sometimes\n---\nbody\n",
         "docspecs/cpp/t.md:5: error: unknown level 'sometimes' (always, on_request or "
         "debugging)"},
        {"---\nname: a\ndescription: d\ndsl: cpp\nlevel: always\nfamilies: [a, [b]]\n---\n",
         "docspecs/cpp/t.md:6: error: `families` must be a word or a list of words"},
        {"---\nname: a\ndescription: d\ndsl: cpp\nlevel: always\nfamiles: [a]\n---\n",
         "docspecs/cpp/t.md:6: error: unknown header field 'familes'"},
        {"---\nname: a\ndescription: d\nlevel: always\n---\n",
         "docspecs/cpp/t.md:1: error: the header needs `dsl:`"},
        {"---\nname: a\ndescription: d\ndsl: cuda\nlevel: always\n---\n",
         "docspecs/cpp/t.md:4: error: `dsl: cuda` in the folder of DSL cpp"},
        {"---\nname: a\ndescription: d\ndsl: cpp\nlevel: always\nagents: [verifier]\n---\n",
         "docspecs/cpp/t.md:6: error: unknown agent 'verifier'"},
        {"---\nname: a\ndescription: [unclosed\ndsl: cpp\n---\n",
         "docspecs/cpp/t.md:4: error: the header is not valid YAML"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        int rc = parse(bad[i].text, &s, err, sizeof err);
        CHECK(rc == AKG_EPARSE);
        if (strncmp(err, bad[i].want, strlen(bad[i].want)) != 0)
            fprintf(stderr, "case %zu: got '%s'\n", i, err);
        CHECK(strncmp(err, bad[i].want, strlen(bad[i].want)) == 0);
    }
}

/* a set written to <home>/docspecs/<dsl>/ */
static void write_set(const char *dsl, const char *const *names, char *const *texts, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/docspecs", home);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/docspecs/%s", home, dsl);
    mkdir(path, 0700);
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/docspecs/%s/%s", home, dsl, names[i]);
        write_file(path, texts[i]);
    }
}

static size_t pick(const akg_skill_set *set, unsigned agent, const char *task, int debugging,
                   size_t budget, size_t *order, char *names, size_t len)
{
    akg_skill_query q = {
        .agent = agent, .task_text = task, .debugging = debugging, .budget_tokens = budget};
    size_t n = akg_skills_select(set, &q, order);
    size_t used = 0, at = 0;
    names[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        used += set->items[order[i]].tokens;
        at +=
            (size_t)snprintf(names + at, len - at, "%s%s", i ? " " : "", set->items[order[i]].name);
    }
    CHECK(used <= budget);
    return n;
}

static void test_select(void)
{
    static const char *const files[] = {"a_always.md", "b_gemm.md", "c_softmax.md",
                                        "d_debug.md",  "e_big.md",  "f_designer.md",
                                        "g_conv.md"};
    char *texts[] = {
        skill_text("always", "sel", "always", "[any]", NULL, NULL, 800),
        skill_text("gemm", "sel", "on_request", "[matmul]", "[gemm, tile, pack]", NULL, 400),
        skill_text("softmax", "sel", "on_request", "[norm]", "[softmax, exp]", NULL, 400),
        skill_text("debug", "sel", "debugging", "[any]", "[crash]", NULL, 400),
        skill_text("big", "sel", "on_request", "[matmul]", "[gemm, tile, pack, matmul]", NULL,
                   8000),
        skill_text("designonly", "sel", "on_request", "[matmul]", NULL, "[designer]", 400),
        skill_text("conv", "sel", "on_request", "[conv]", "[im2col]", NULL, 400),
    };
    size_t n_files = sizeof files / sizeof files[0];
    write_set("sel", files, texts, n_files);
    for (size_t i = 0; i < n_files; i++)
        free(texts[i]);
    akg_skill_set set;
    char err[512], names[512], root[300];
    snprintf(root, sizeof root, "%s/docspecs", home);
    CHECK(akg_skills_load(root, "sel", &set, err, sizeof err) == AKG_OK);
    CHECK(set.n == n_files);
    size_t order[16];
    const char *task_mm = "{\"op\": \"matmul\"} gemm tile";

    /* always first, then by relevance; an unrelated on_request skill is left out; the budget
     * leaves the big one out although it scores highest */
    pick(&set, AKG_SKILL_FOR_CODER, task_mm, 0, 400, order, names, sizeof names);
    CHECK_STR(names, "always gemm");
    pick(&set, AKG_SKILL_FOR_CODER, task_mm, 0, 2500, order, names, sizeof names);
    CHECK_STR(names, "always big gemm");
    /* a budget too small for the always skill: the relevant ones that fit still come */
    pick(&set, AKG_SKILL_FOR_CODER, task_mm, 0, 120, order, names, sizeof names);
    CHECK_STR(names, "gemm");
    CHECK(pick(&set, AKG_SKILL_FOR_CODER, task_mm, 0, 10, order, names, sizeof names) == 0);
    /* the agent: designer-only skills reach the Designer only */
    pick(&set, AKG_SKILL_FOR_CODER, task_mm, 0, 600, order, names, sizeof names);
    CHECK_STR(names, "always gemm");
    pick(&set, AKG_SKILL_FOR_DESIGNER, task_mm, 0, 600, order, names, sizeof names);
    CHECK_STR(names, "always gemm designonly");
    pick(&set, AKG_SKILL_FOR_DESIGNER, task_mm, 0, 2500, order, names, sizeof names);
    CHECK_STR(names, "always big gemm designonly");
    /* debugging skills only in a debugging round, and first among the relevant there */
    pick(&set, AKG_SKILL_FOR_CODER, "softmax", 0, 100000, order, names, sizeof names);
    CHECK_STR(names, "always softmax");
    pick(&set, AKG_SKILL_FOR_CODER, "softmax", 1, 100000, order, names, sizeof names);
    CHECK_STR(names, "always debug softmax");
    /* the family from the op graph's words (conv2d names the conv family) */
    pick(&set, AKG_SKILL_FOR_CODER, "{\"op\":\"conv2d\"}", 0, 100000, order, names, sizeof names);
    CHECK_STR(names, "always conv");
    char fam[128];
    akg_skills_task_families("\"op\":\"layer_norm\" \"op\":\"add\"", fam, sizeof fam);
    CHECK_STR(fam, "norm elementwise");
    /* clamp's attributes are named min and max: no reduction in that */
    akg_skills_task_families("\"op\":\"clamp\",\"attrs\":{\"min\":0,\"max\":6}", fam, sizeof fam);
    CHECK_STR(fam, "elementwise");
    akg_skills_task_families("addmm_like sum_of", fam, sizeof fam); /* whole words only */
    CHECK_STR(fam, "");

    /* the rendering names what did not fit */
    akg_skill_query q = {.agent = AKG_SKILL_FOR_CODER, .task_text = task_mm, .budget_tokens = 400};
    size_t n = akg_skills_select(&set, &q, order);
    char *text = akg_skills_render(&set, order, n, &q);
    CHECK(text && strstr(text, "## always: about always\n") &&
          strstr(text, "## gemm: about gemm\n"));
    CHECK(text && strstr(text, "(Left out to fit the prompt: big.)"));
    CHECK(text && strlen(text) / 4 <= 400 + 20);
    free(text);
    akg_skill_set_free(&set);

    /* a malformed file fails the whole load, naming itself */
    static const char *const badf[] = {"z_bad.md"};
    char *bt[] = {akg_strdup("---\nname: z\ndescription: d\ndsl: sel\nlevel: often\n---\n")};
    write_set("sel", badf, bt, 1);
    free(bt[0]);
    CHECK(akg_skills_load(root, "sel", &set, err, sizeof err) == AKG_EPARSE);
    CHECK(strstr(err, "/docspecs/sel/z_bad.md:5: error: unknown level 'often'") != NULL);
    CHECK(set.n == 0);

    /* a DSL with no folder has no skills, and that is no error */
    CHECK(akg_skills_load(root, "nofolder", &set, err, sizeof err) == AKG_OK && set.n == 0);
    CHECK(akg_skills_load(root, "../x", &set, err, sizeof err) == AKG_EINVAL);
}

/* every shipped folder loads, holds 3 to 6 skills, one of them `always` */
static void test_shipped(const char *source)
{
    static const char *const dsls[] = {"cpp", "triton_cuda", "cuda", "tilelang_cuda",
                                       "triton_ascend"};
    char root[512], err[512];
    snprintf(root, sizeof root, "%s/docspecs", source);
    for (size_t i = 0; i < sizeof dsls / sizeof dsls[0]; i++) {
        akg_skill_set set;
        int rc = akg_skills_load(root, dsls[i], &set, err, sizeof err);
        if (rc != AKG_OK)
            fprintf(stderr, "%s: %s\n", dsls[i], err);
        CHECK(rc == AKG_OK);
        CHECK(set.n >= 3 && set.n <= 6);
        int always = 0;
        for (size_t k = 0; k < set.n; k++)
            always += set.items[k].level == AKG_SKILL_ALWAYS;
        CHECK(always >= 1);
        akg_skill_set_free(&set);
    }
}

/* A new DSL for the LLM path: only a skills folder under the data dir. The Coder's template,
 * rendered for that DSL, carries its skill; the cpp template for a matmul task carries the
 * cpp GEMM skill and not the cpp debugging one until a failure. */
static void test_templates(const char *source)
{
    char path[512];
    static const char *const f[] = {"contract.md"};
    char *t[] = {skill_text("newdsl-contract", "newdsl", "always", "[any]", NULL, NULL, 40)};
    write_set("newdsl", f, t, 1);
    free(t[0]);
    /* the templates come from the data dir too: link the source's prompts folder */
    snprintf(path, sizeof path, "%s/engine", home);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/engine/providers", home);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/engine/providers/openai", home);
    mkdir(path, 0700);
    char target[512];
    snprintf(target, sizeof target, "%s/engine/providers/openai/prompts", source);
    snprintf(path, sizeof path, "%s/engine/providers/openai/prompts", home);
    CHECK(symlink(target, path) == 0);
    snprintf(path, sizeof path, "%s/docspecs/cpp", home);
    snprintf(target, sizeof target, "%s/docspecs/cpp", source);
    CHECK(symlink(target, path) == 0);
    setenv("AKG_HOME", home, 1);

    char err[512], *sys = NULL, *user = NULL;
    akg_prompt_var nv[] = {{"dsl", "newdsl"}, {"backend", "nodevice"}, {"sketch", "relu"}};
    CHECK(akg_prompt_render("coder", nv, 3, &sys, &user, err, sizeof err) == AKG_OK);
    CHECK(sys && strstr(sys, "## newdsl-contract: about newdsl-contract"));
    CHECK(sys && !strstr(sys, "{{skills}}"));
    free(sys);
    free(user);

    akg_prompt_var cv[] = {
        {"dsl", "cpp"}, {"backend", "cpu"}, {"sketch", "c = gemm(a, b, c)"}, {"debugging", ""}};
    CHECK(akg_prompt_render("coder", cv, 4, &sys, &user, err, sizeof err) == AKG_OK);
    CHECK(sys && strstr(sys, "cpp-kernel-contract") && strstr(sys, "cpp-gemm-tiling"));
    CHECK(sys && !strstr(sys, "cpp-debugging") && !strstr(sys, "cpp-row-reductions"));
    free(sys);
    free(user);
    cv[3].value = "yes";
    CHECK(akg_prompt_render("coder", cv, 4, &sys, &user, err, sizeof err) == AKG_OK);
    CHECK(sys && strstr(sys, "cpp-debugging"));
    free(sys);
    free(user);
    /* the Designer does not get the coder-only contract */
    akg_prompt_var dv[] = {{"dsl", "cpp"}, {"backend", "cpu"}, {"probe", "\"op\": \"softmax\""}};
    CHECK(akg_prompt_render("designer", dv, 3, &sys, &user, err, sizeof err) == AKG_OK);
    CHECK(sys && strstr(sys, "cpp-row-reductions") && !strstr(sys, "cpp-kernel-contract"));
    free(sys);
    free(user);

    /* the budget from the new DSL's config.yaml (skills_token_budget) */
    const char *dirs[] = {"backends", "backends/nodevice", "backends/nodevice/newdsl"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", home, dirs[i]);
        mkdir(path, 0700);
    }
    snprintf(path, sizeof path, "%s/backends/nodevice/newdsl/config.yaml", home);
    write_file(path, "default_workflow: default\nskills_token_budget: 5\n");
    CHECK(akg_prompt_render("coder", nv, 3, &sys, &user, err, sizeof err) == AKG_OK);
    CHECK(sys && !strstr(sys, "## newdsl-contract"));
    CHECK(sys && strstr(sys, "(Left out to fit the prompt: newdsl-contract.)"));
    free(sys);
    free(user);

    /* a broken skill stops the prompt with the file and line */
    static const char *const bf[] = {"broken.md"};
    char *bt[] = {akg_strdup("---\nname: b\ndescription: d\ndsl: newdsl\nlevel: x\n---\n")};
    write_set("newdsl", bf, bt, 1);
    free(bt[0]);
    CHECK(akg_prompt_render("coder", nv, 3, &sys, &user, err, sizeof err) != AKG_OK);
    CHECK(strstr(err, "docspecs/newdsl/broken.md:5: error: unknown level 'x'") != NULL);
    CHECK(sys == NULL && user == NULL);
}

int main(void)
{
    const char *source = getenv("AKG_SOURCE_DIR");
    const char *tmp = getenv("TMPDIR");
    snprintf(home, sizeof home, "%s/akg-skills-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(home)) {
        perror("mkdtemp");
        return 1;
    }
    test_header();
    test_select();
    if (source) {
        test_shipped(source);
        test_templates(source);
    } else {
        fprintf(stderr, "AKG_SOURCE_DIR not set: the shipped skills are not checked\n");
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", home);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", home);
    return check_summary();
}
