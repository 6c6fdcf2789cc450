/*
 * test_openai_prompt.c: the openai provider's prompts and answer extraction (prompt.c).
 *
 * Templates are the shipped ones under AKG_HOME (every placeholder of the Designer's prompt
 * filled, the system/user split); the sketch reference is trimmed by whole sections with the
 * left-out ones named; answers as models write them (chatter, several fences, ~~~, an
 * unclosed fence, a <think> part) split into their blocks, and a sketch found inside chatter
 * with its comments.
 */
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "check.h"
#include "prompt.h"

static void test_render(void)
{
    char *sys = NULL, *user = NULL, err[1024] = "";
    akg_prompt_var vars[] = {
        {"backend", "cpu"},        {"dsl", "cpp"},          {"arch", "x86_64"},
        {"attempt", "2"},          {"op_name", "relu"},     {"grammar", "GRAMMAR-TEXT"},
        {"reference", "REF-TEXT"}, {"probe", "PROBE-TEXT"}, {"feedback", "FEEDBACK-TEXT"},
    };
    CHECK(akg_prompt_render("designer", vars, sizeof vars / sizeof vars[0], &sys, &user, err,
                            sizeof err) == AKG_OK);
    CHECK_CONTAINS(sys, "GRAMMAR-TEXT");
    CHECK_CONTAINS(sys, "lowered to cpp for cpu");
    CHECK(sys && !strstr(sys, "REF-TEXT")); /* the task is the user's part */
    CHECK_CONTAINS(user, "operator `relu`, target cpu/cpp (x86_64), attempt 2");
    CHECK_CONTAINS(user, "REF-TEXT");
    CHECK_CONTAINS(user, "PROBE-TEXT");
    CHECK_CONTAINS(user, "FEEDBACK-TEXT");
    CHECK(user && !strstr(user, "{{") && sys && !strstr(sys, "{{"));
    free(sys);
    free(user);

    /* an unknown placeholder stays as written; a missing template names its file */
    akg_prompt_var few[] = {{"which", ""}};
    CHECK(akg_prompt_render("designer_repair", few, 1, &sys, &user, err, sizeof err) == AKG_OK);
    CHECK_CONTAINS(user, "{{diagnostics}}");
    CHECK_STR(sys, "");
    free(sys);
    free(user);
    CHECK(akg_prompt_render("no_such_agent", NULL, 0, &sys, &user, err, sizeof err) != AKG_OK);
    CHECK_CONTAINS(err, "prompts/no_such_agent.md");
    CHECK(sys == NULL && user == NULL);
}

static void test_grammar(void)
{
    char err[1024] = "";
    char *g = akg_prompt_grammar(22000, err, sizeof err);
    CHECK(g != NULL);
    CHECK(g && strlen(g) < 22000 + 200);
    CHECK_CONTAINS(g, "## Syntax");
    CHECK_CONTAINS(g, "## Binding");
    CHECK_CONTAINS(g, "## Examples");
    CHECK_CONTAINS(g, "Left out to fit the prompt: ");
    CHECK_CONTAINS(g, "## Performance");
    free(g);
    /* a small model's budget: the syntax and a worked example before the binding and the
     * semantics */
    g = akg_prompt_grammar(8000, err, sizeof err);
    CHECK(g && strlen(g) < 8000 + 400);
    CHECK_CONTAINS(g, "## Syntax");
    CHECK_CONTAINS(g, "## Examples");
    CHECK(g && !strstr(g, "\n## Semantics (every"));
    CHECK_CONTAINS(g, "Left out to fit the prompt: ");
    free(g);
    /* a budget too small for any section keeps none and names them all */
    g = akg_prompt_grammar(100, err, sizeof err);
    CHECK(g && !strstr(g, "sketch NAME {"));
    CHECK_CONTAINS(g, "## Syntax; ");
    free(g);
}

static void test_trim(void)
{
    char *t = akg_prompt_trim("line one\nline two\nline three\n", 12);
    CHECK_STR(t, "line one\n[... 20 more bytes left out]\n");
    free(t);
    t = akg_prompt_trim("short", 12);
    CHECK_STR(t, "short");
    free(t);
}

static void test_split(void)
{
    const char *answer = "<think>first a plan</think>\n"
                         "Sure! Here it is:\n"
                         "```sketch\n"
                         "sketch a {\n}\n"
                         "```\n"
                         "and another one\n"
                         "  ~~~python extra words\n"
                         "x = 1\n"
                         "  ~~~\n"
                         "```\n"
                         "cut here";
    akg_answer_parts p;
    CHECK(akg_answer_split(answer, &p) == AKG_OK);
    CHECK(p.n_blocks == 3);
    if (p.n_blocks == 3) {
        CHECK_STR(p.blocks[0].tag, "sketch");
        CHECK_STR(p.blocks[0].body, "sketch a {\n}\n");
        CHECK_STR(p.blocks[1].tag, "python");
        CHECK_STR(p.blocks[1].body, "x = 1\n");
        CHECK_STR(p.blocks[2].tag, "");
        CHECK_STR(p.blocks[2].body, "cut here"); /* unclosed: to the end */
    }
    CHECK_STR(p.outside, "\nSure! Here it is:\nand another one\n");
    akg_answer_parts_free(&p);

    CHECK(akg_answer_split("", &p) == AKG_OK && p.n_blocks == 0);
    akg_answer_parts_free(&p);
}

static void test_sketch_from(void)
{
    char *s = akg_answer_sketch_from("The design:\n# one pass\n# over x\nsketch relu {\n  x\n}\n");
    CHECK_STR(s, "# one pass\n# over x\nsketch relu {\n  x\n}\n");
    free(s);
    s = akg_answer_sketch_from("# a note\n\nsketch b{\n}");
    CHECK_STR(s, "sketch b{\n}");
    free(s);
    CHECK(akg_answer_sketch_from("a sketch is a design {not this}\nsketches {\n") == NULL);
    CHECK(akg_answer_sketch_from("no sketch here") == NULL);
}

int main(void)
{
    test_render();
    test_grammar();
    test_trim();
    test_split();
    test_sketch_from();
    return check_summary();
}
