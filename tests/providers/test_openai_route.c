/*
 * test_openai_route.c: the Conductor's answer read (engine/providers/openai/route.c) and its
 * prompt (prompts/conductor.md).
 *
 * Answers as models write them: bare JSON, in a fence after a sentence, with chatter around it
 * and braces in the prose, a <think> part, other spellings of the classes; and answers that are
 * not usable: no JSON, JSON without the fields, an unknown class or agent, a suggestion that is
 * not a string. Each unusable one is refused with a message that names what was wrong.
 */
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "check.h"
#include "prompt.h"
#include "route.h"

static void check_ok(const char *text, akg_route_class cls, akg_route_agent agent,
                     const char *suggestion)
{
    akg_route_choice c;
    char err[512] = "";
    int rc = akg_route_parse(text, &c, err, sizeof err);
    CHECK(rc == AKG_OK);
    if (rc != AKG_OK) {
        fprintf(stderr, "  refused: %s\n  answer: %s\n", err, text);
        return;
    }
    CHECK_STR(akg_route_class_name(c.cls), akg_route_class_name(cls));
    CHECK_STR(akg_route_agent_name(c.agent), akg_route_agent_name(agent));
    CHECK_STR(c.suggestion, suggestion);
    akg_route_choice_free(&c);
}

static void check_refused(const char *text, const char *why)
{
    akg_route_choice c;
    char err[512] = "";
    CHECK(akg_route_parse(text, &c, err, sizeof err) == AKG_EINVAL);
    CHECK_CONTAINS(err, why);
    CHECK(c.suggestion == NULL);
}

static void test_usable(void)
{
    check_ok("{\"class\": \"design_error\", \"next_agent\": \"designer\", \"suggestion\": "
             "\"use relu\"}",
             AKG_ROUTE_DESIGN_ERROR, AKG_ROUTE_DESIGNER, "use relu");
    check_ok("The build log shows a syntax error.\n\n```json\n{\"class\": \"local_code_error\", "
             "\"next_agent\": \"coder\", \"suggestion\": \"close the brace {\"}\n```\nGood luck!",
             AKG_ROUTE_LOCAL_CODE_ERROR, AKG_ROUTE_CODER, "close the brace {");
    /* braces in the prose before the object; "agent" for "next_agent"; spellings */
    check_ok("I think {this} is it: {\"class\": \"Local code error\", \"agent\": \"Coder\"} "
             "and nothing more.",
             AKG_ROUTE_LOCAL_CODE_ERROR, AKG_ROUTE_CODER, "");
    check_ok("<think>maybe {\"class\": \"timeout\"}</think>{\"class\": \"truncated\", "
             "\"next_agent\": \"designer\", \"suggestion\": \"  shorter  \"}",
             AKG_ROUTE_TRUNCATED_OUTPUT, AKG_ROUTE_DESIGNER, "shorter");
    check_ok("```\n{\"class\": \"environment-error\", \"next_agent\": \"STOP\", \"suggestion\": "
             "null, \"extra\": {\"nested\": [1, 2]}}\n```",
             AKG_ROUTE_ENVIRONMENT_ERROR, AKG_ROUTE_STOP, "");
    /* a first object without the fields, then the answer */
    check_ok("Summary: {\"attempt\": 2}. Answer: {\"class\": \"timeout\", \"next_agent\": "
             "\"coder\", \"suggestion\": \"a \\\"bounded\\\" loop\"}",
             AKG_ROUTE_TIMEOUT, AKG_ROUTE_CODER, "a \"bounded\" loop");

    /* a long suggestion is cut */
    size_t n = 5000;
    char *big = malloc(n + 100);
    CHECK(big != NULL);
    if (!big)
        return;
    strcpy(big, "{\"class\": \"design_error\", \"next_agent\": \"designer\", \"suggestion\": \"");
    size_t at = strlen(big);
    for (size_t i = 0; i < n; i++)
        big[at + i] = (i % 80 == 79) ? ' ' : 'x';
    strcpy(big + at + n, "\"}");
    akg_route_choice c;
    char err[256];
    CHECK(akg_route_parse(big, &c, err, sizeof err) == AKG_OK);
    CHECK(c.suggestion && strlen(c.suggestion) <= ROUTE_SUGGESTION_MAX + 200);
    akg_route_choice_free(&c);
    free(big);
}

static void test_refused(void)
{
    check_refused("", "empty");
    check_refused("I would send it to the coder, it looks like a local code error.",
                  "holds no JSON object");
    check_refused("{\"class\": \"design_error\", \"next_agent\": ", "holds no JSON object");
    check_refused("[\"design_error\", \"designer\"]", "holds no JSON object");
    check_refused("{\"next_agent\": \"coder\"}", "no \"class\"");
    check_refused("{\"class\": \"bad_vibes\", \"next_agent\": \"coder\"}",
                  "\"bad_vibes\" is not one of truncated_output, local_code_error");
    check_refused("{\"class\": \"timeout\"}", "no \"next_agent\"");
    check_refused("{\"class\": \"timeout\", \"next_agent\": \"verifier\"}",
                  "\"verifier\" is not one of coder, designer or stop");
    check_refused("{\"class\": \"timeout\", \"next_agent\": \"coder\", \"suggestion\": 3}",
                  "not a string");
}

static void test_template(void)
{
    char *sys = NULL, *user = NULL, err[1024] = "";
    akg_prompt_var vars[] = {
        {"backend", "cpu"},
        {"dsl", "cpp"},
        {"arch", "x86_64"},
        {"op_name", "relu"},
        {"attempt", "1"},
        {"max_attempts", "4"},
        {"error_class", "build_error"},
        {"found_by", "Verifier"},
        {"rule_agent", "Coder"},
        {"allowed", "coder, designer or stop"},
        {"detail", "DETAIL-TEXT"},
        {"history", "HISTORY-TEXT"},
    };
    CHECK(akg_prompt_render("conductor", vars, sizeof vars / sizeof vars[0], &sys, &user, err,
                            sizeof err) == AKG_OK);
    CHECK_CONTAINS(sys, "You are the Conductor");
    CHECK_CONTAINS(sys, "\"next_agent\"");
    CHECK_CONTAINS(user, "Attempt 1 of 4 failed: operator `relu`, target cpu/cpp (x86_64)");
    CHECK_CONTAINS(user, "`build_error` (found by the Verifier)");
    CHECK_CONTAINS(user, "DETAIL-TEXT");
    CHECK_CONTAINS(user, "HISTORY-TEXT");
    CHECK(user && !strstr(user, "{{") && sys && !strstr(sys, "{{"));
    free(sys);
    free(user);
}

int main(void)
{
    test_usable();
    test_refused();
    test_template();
    return check_summary();
}
