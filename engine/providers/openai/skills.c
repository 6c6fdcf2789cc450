/*
 * skills.c: DocSpec skills (docspecs/<dsl>/<topic>.md) read, checked and chosen for a prompt
 * (skills.h).
 *
 * Why files with a header and not a table in C: a skill is written and reviewed by people who
 * know the DSL, not the engine, and a new DSL should get skills by adding a folder. The header
 * says when the skill helps (its level, the operator families and the keywords it is about);
 * the engine only ranks and cuts to a budget, so a prompt stays within what a small model's
 * context holds and the most useful text comes first.
 *
 * Why the header is checked strictly (unknown fields, wrong levels, a dsl that is not the
 * folder's): a skill that silently never matches is worse than a load that fails with the file
 * and line to fix. The YAML is parsed with the engine's own reader (akg_yaml_parse); its line
 * numbers count from the file's first line because the text given to it starts there.
 *
 * Memory: a skill owns its strings (akg_skill_free); a set owns its skills. Files are read with
 * a cap (SKILL_FILE_LIMIT) and a folder holds at most SKILL_DIR_LIMIT skills.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "akg/akg.h"
#include "akg/config.h"
#include "skills.h"

#define SKILL_FILE_LIMIT ((size_t)256 << 10)
#define SKILL_DIR_LIMIT 256
#define SKILL_WORDS_LIMIT 64

/* ---- the header ------------------------------------------------------------------------ */

/* The 1-based line of the header where `key:` starts a line, else 1. */
static int key_line(const char *header, size_t len, const char *key)
{
    int line = 1;
    size_t klen = strlen(key);
    for (size_t i = 0; i < len; i++) {
        if ((i == 0 || header[i - 1] == '\n') && i + klen < len &&
            strncmp(header + i, key, klen) == 0 && header[i + klen] == ':')
            return line;
        if (header[i] == '\n')
            line++;
    }
    return 1;
}

static char *lower_dup(const char *s)
{
    char *r = akg_strdup(s);
    for (char *p = r; p && *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    return r;
}

/* A string or a list of strings into a malloc'd array of lower-case strings. */
static int string_list(const cJSON *v, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!v || cJSON_IsNull(v))
        return AKG_OK;
    if (cJSON_IsString(v)) {
        *out = calloc(1, sizeof **out);
        if (!*out || !((*out)[0] = lower_dup(v->valuestring)))
            return AKG_ENOMEM;
        *n = 1;
        return AKG_OK;
    }
    if (!cJSON_IsArray(v))
        return AKG_EINVAL;
    size_t count = (size_t)cJSON_GetArraySize(v);
    if (count > SKILL_WORDS_LIMIT)
        return AKG_EINVAL;
    *out = calloc(count ? count : 1, sizeof **out);
    if (!*out)
        return AKG_ENOMEM;
    const cJSON *item;
    cJSON_ArrayForEach(item, v)
    {
        /* a plain scalar such as `2d` or `true` is still a word */
        char num[64];
        const char *s = cJSON_IsString(item) ? item->valuestring
                        : cJSON_IsNumber(item)
                            ? (snprintf(num, sizeof num, "%g", item->valuedouble), num)
                            : NULL;
        if (!s)
            return AKG_EINVAL;
        if (!((*out)[*n] = lower_dup(s)))
            return AKG_ENOMEM;
        (*n)++;
    }
    return AKG_OK;
}

static void free_list(char **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

void akg_skill_free(akg_skill *s)
{
    if (!s)
        return;
    free(s->path);
    free(s->name);
    free(s->description);
    free(s->dsl);
    free_list(s->families, s->n_families);
    free_list(s->keywords, s->n_keywords);
    free(s->body);
    memset(s, 0, sizeof *s);
}

static const char *const known_fields[] = {"name",     "description", "dsl",    "level",
                                           "families", "keywords",    "agents", NULL};

static int parse_level(const char *s, akg_skill_level *out)
{
    if (!strcmp(s, "always"))
        *out = AKG_SKILL_ALWAYS;
    else if (!strcmp(s, "on_request") || !strcmp(s, "on request"))
        *out = AKG_SKILL_ON_REQUEST;
    else if (!strcmp(s, "debugging") || !strcmp(s, "when debugging"))
        *out = AKG_SKILL_DEBUGGING;
    else
        return AKG_EINVAL;
    return AKG_OK;
}

/* The header's fields into s; messages name the line of the field at fault. */
static int header_fields(const char *path, const char *header, size_t hlen, const cJSON *root,
                         const char *dsl, akg_skill *s, char *err, size_t errlen)
{
    if (!cJSON_IsObject(root))
        return akg_fail(err, errlen, AKG_EPARSE,
                        "%s:2: error: the header is not a mapping; write `name: ...`, "
                        "`description: ...`, `dsl: ...`, `level: ...` lines between the two `---`",
                        path);
    const cJSON *f;
    cJSON_ArrayForEach(f, root)
    {
        int known = 0;
        for (const char *const *k = known_fields; *k; k++)
            known |= !strcmp(*k, f->string);
        if (!known)
            return akg_fail(err, errlen, AKG_EPARSE,
                            "%s:%d: error: unknown header field '%s' (known: name, description, "
                            "dsl, level, families, keywords, agents)",
                            path, key_line(header, hlen, f->string), f->string);
    }
    static const char *const required[] = {"name", "description", "dsl", "level"};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, required[i]);
        if (!cJSON_IsString(v) || !v->valuestring[0])
            return akg_fail(err, errlen, AKG_EPARSE,
                            "%s:%d: error: the header needs `%s:` with a non-empty text", path,
                            v ? key_line(header, hlen, required[i]) : 1, required[i]);
    }
    s->name = akg_strdup(cJSON_GetObjectItemCaseSensitive(root, "name")->valuestring);
    s->description = akg_strdup(cJSON_GetObjectItemCaseSensitive(root, "description")->valuestring);
    s->dsl = akg_strdup(cJSON_GetObjectItemCaseSensitive(root, "dsl")->valuestring);
    if (!s->name || !s->description || !s->dsl)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory reading %s", path);
    if (dsl && strcmp(s->dsl, dsl) != 0)
        return akg_fail(err, errlen, AKG_EPARSE,
                        "%s:%d: error: `dsl: %s` in the folder of DSL %s; a skill lives in "
                        "docspecs/<its dsl>/ (write `dsl: %s` or move the file)",
                        path, key_line(header, hlen, "dsl"), s->dsl, dsl, dsl);
    const char *level = cJSON_GetObjectItemCaseSensitive(root, "level")->valuestring;
    if (parse_level(level, &s->level) != AKG_OK)
        return akg_fail(err, errlen, AKG_EPARSE,
                        "%s:%d: error: unknown level '%s' (always, on_request or debugging)", path,
                        key_line(header, hlen, "level"), level);
    static const char *const lists[] = {"families", "keywords", "agents"};
    char **agents = NULL;
    size_t n_agents = 0;
    for (size_t i = 0; i < 3; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, lists[i]);
        char ***dst = i == 0 ? &s->families : i == 1 ? &s->keywords : &agents;
        size_t *n = i == 0 ? &s->n_families : i == 1 ? &s->n_keywords : &n_agents;
        int rc = string_list(v, dst, n);
        if (rc == AKG_ENOMEM) {
            free_list(agents, n_agents);
            return akg_fail(err, errlen, rc, "out of memory reading %s", path);
        }
        if (rc != AKG_OK) {
            free_list(agents, n_agents);
            return akg_fail(err, errlen, AKG_EPARSE,
                            "%s:%d: error: `%s` must be a word or a list of words ([a, b]), at "
                            "most %d",
                            path, key_line(header, hlen, lists[i]), lists[i], SKILL_WORDS_LIMIT);
        }
    }
    s->agents = n_agents ? 0 : AKG_SKILL_FOR_DESIGNER | AKG_SKILL_FOR_CODER;
    for (size_t i = 0; i < n_agents; i++) {
        if (!strcmp(agents[i], "designer"))
            s->agents |= AKG_SKILL_FOR_DESIGNER;
        else if (!strcmp(agents[i], "coder"))
            s->agents |= AKG_SKILL_FOR_CODER;
        else {
            akg_fail(err, errlen, AKG_EPARSE,
                     "%s:%d: error: unknown agent '%s' in `agents` (designer, coder)", path,
                     key_line(header, hlen, "agents"), agents[i]);
            free_list(agents, n_agents);
            return AKG_EPARSE;
        }
    }
    free_list(agents, n_agents);
    return AKG_OK;
}

/* Whether the line at p is exactly `---` (a trailing \r or spaces allowed). */
static int is_rule(const char *p)
{
    if (strncmp(p, "---", 3) != 0)
        return 0;
    p += 3;
    while (*p == ' ' || *p == '\t' || *p == '\r')
        p++;
    return *p == '\n' || *p == '\0';
}

int akg_skill_parse(const char *path, const char *text, const char *dsl, akg_skill *out, char *err,
                    size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!is_rule(text))
        return akg_fail(err, errlen, AKG_EPARSE,
                        "%s:1: error: a skill starts with a YAML header: a line `---`, the "
                        "fields (name, description, dsl, level, families, keywords), a line `---`",
                        path);
    /* the closing rule: the first later line that is `---` */
    const char *p = strchr(text, '\n');
    const char *close = NULL;
    while (p && p[1]) {
        if (is_rule(p + 1)) {
            close = p + 1;
            break;
        }
        p = strchr(p + 1, '\n');
    }
    if (!close)
        return akg_fail(err, errlen, AKG_EPARSE,
                        "%s:1: error: the header opened here has no closing line `---`", path);
    /* the text up to the closing rule, opening rule included: YAML's own document start, so
     * the parser's line numbers are the file's */
    size_t hlen = (size_t)(close - text);
    cJSON *root = NULL;
    char yerr[512];
    if (akg_yaml_parse(text, hlen, &root, yerr, sizeof yerr) != AKG_OK) {
        const char *msg = yerr;
        int yline = 1;
        if (sscanf(yerr, "line %d: ", &yline) == 1)
            msg = strstr(yerr, ": ") ? strstr(yerr, ": ") + 2 : yerr;
        return akg_fail(err, errlen, AKG_EPARSE, "%s:%d: error: the header is not valid YAML: %s",
                        path, yline, msg);
    }
    int rc = header_fields(path, text, hlen, root, dsl, out, err, errlen);
    cJSON_Delete(root);
    if (rc == AKG_OK) {
        const char *body = strchr(close, '\n');
        body = body ? body + 1 : close + strlen(close);
        while (*body == '\n' || *body == '\r')
            body++;
        out->body = akg_strdup(body);
        out->path = akg_strdup(path);
        if (!out->body || !out->path)
            rc = akg_fail(err, errlen, AKG_ENOMEM, "out of memory reading %s", path);
    }
    if (rc != AKG_OK) {
        akg_skill_free(out);
        return rc;
    }
    /* what it costs rendered: the heading line and the body */
    out->tokens = (strlen(out->name) + strlen(out->description) + strlen(out->body) + 8 + 3) / 4;
    return AKG_OK;
}

/* ---- a folder --------------------------------------------------------------------------- */

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void akg_skill_set_free(akg_skill_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->n; i++)
        akg_skill_free(&set->items[i]);
    free(set->items);
    memset(set, 0, sizeof *set);
}

int akg_skills_load(const char *root, const char *dsl, akg_skill_set *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!dsl || !*dsl || strchr(dsl, '/') || dsl[0] == '.')
        return akg_fail(err, errlen, AKG_EINVAL, "'%s' is not a DSL name", dsl ? dsl : "");
    char dir[4096];
    if (root)
        snprintf(dir, sizeof dir, "%s/%s", root, dsl);
    else
        snprintf(dir, sizeof dir, "%s/docspecs/%s", akg_data_dir(), dsl);
    DIR *d = opendir(dir);
    if (!d)
        return AKG_OK; /* no skills for this DSL */
    char *names[SKILL_DIR_LIMIT];
    size_t n = 0;
    int rc = AKG_OK;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || len < 4 || strcmp(e->d_name + len - 3, ".md") != 0 ||
            !strcasecmp(e->d_name, "README.md"))
            continue;
        if (n == SKILL_DIR_LIMIT) {
            rc = akg_fail(err, errlen, AKG_ENOMEM, "%s holds more than %d skills", dir,
                          SKILL_DIR_LIMIT);
            break;
        }
        if (!(names[n] = akg_strdup(e->d_name))) {
            rc = akg_fail(err, errlen, AKG_ENOMEM, "out of memory listing %s", dir);
            break;
        }
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof names[0], cmp_names);
    out->items = rc == AKG_OK && n ? calloc(n, sizeof *out->items) : NULL;
    if (rc == AKG_OK && n && !out->items)
        rc = akg_fail(err, errlen, AKG_ENOMEM, "out of memory reading %s", dir);
    for (size_t i = 0; i < n && rc == AKG_OK; i++) {
        char path[4400], ferr[512], *text = NULL;
        size_t len = 0;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        rc = akg_read_file(path, SKILL_FILE_LIMIT, &text, &len, ferr, sizeof ferr);
        if (rc != AKG_OK) {
            akg_fail(err, errlen, rc, "cannot read the skill %s (%s)", path, ferr);
            break;
        }
        rc = akg_skill_parse(path, text, dsl, &out->items[out->n], err, errlen);
        free(text);
        if (rc == AKG_OK)
            out->n++;
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    if (rc != AKG_OK)
        akg_skill_set_free(out);
    return rc;
}

/* ---- selection -------------------------------------------------------------------------- */

/* Whether word occurs in text as a whole word (letters, digits and '_' around it do not),
 * case-insensitively. */
static int has_word(const char *text, const char *word)
{
    size_t wl = strlen(word);
    if (!text || !wl)
        return 0;
    for (const char *p = text; (p = strcasestr(p, word)); p++) {
        char before = p == text ? ' ' : p[-1], after = p[wl];
        int wb = !(before == '_' || (before >= '0' && before <= '9') ||
                   ((before | 32) >= 'a' && (before | 32) <= 'z'));
        int wa = !(after == '_' || (after >= '0' && after <= '9') ||
                   ((after | 32) >= 'a' && (after | 32) <= 'z'));
        if (wb && wa)
            return 1;
    }
    return 0;
}

/* The families, with the words of the op graph (ATen-level names) that name them. */
static const struct {
    const char *family;
    const char *words;
} family_words[] = {
    {"matmul", "matmul mm bmm addmm linear gemm einsum baddbmm"},
    {"conv", "conv1d conv2d conv3d convolution conv_transpose1d conv_transpose2d "
             "conv_transpose3d"},
    {"pool", "max_pool1d max_pool2d max_pool3d avg_pool1d avg_pool2d avg_pool3d "
             "adaptive_avg_pool2d adaptive_max_pool2d"},
    {"norm", "layer_norm batch_norm group_norm instance_norm rms_norm native_layer_norm "
             "norm softmax log_softmax"},
    /* not "max"/"min": the graph's reductions are amax/amin, and clamp's attributes are named
     * min and max */
    {"reduction", "sum mean amax amin prod var std argmax argmin logsumexp "
                  "reduce_sum reduce_max reduce_min reduce_mean norm softmax log_softmax"},
    {"scan", "cumsum cumprod cummax cummin"},
    {"gather", "embedding gather index_select take scatter"},
    {"activation", "relu gelu silu sigmoid tanh elu selu leaky_relu hardtanh softplus "
                   "softsign mish hardsigmoid hardswish swish"},
    {"elementwise", "add sub mul div neg exp log sqrt rsqrt abs pow clamp where maximum "
                    "minimum relu gelu silu sigmoid tanh"},
    {"loss", "mse_loss cross_entropy nll_loss kl_div smooth_l1_loss huber_loss "
             "binary_cross_entropy hinge triplet"},
};

void akg_skills_task_families(const char *task_text, char *buf, size_t len)
{
    size_t at = 0;
    if (len)
        buf[0] = '\0';
    for (size_t f = 0; f < sizeof family_words / sizeof family_words[0]; f++) {
        const char *w = family_words[f].words;
        int hit = 0;
        while (*w && !hit) {
            const char *sp = strchr(w, ' ');
            size_t wl = sp ? (size_t)(sp - w) : strlen(w);
            char word[64];
            snprintf(word, sizeof word, "%.*s", (int)wl, w);
            hit = has_word(task_text, word);
            w += wl + (sp ? 1 : 0);
        }
        if (hit && at < len) {
            int n = snprintf(buf + at, len - at, "%s%s", at ? " " : "", family_words[f].family);
            if (n > 0)
                at += (size_t)n;
        }
    }
}

static int relevance(const akg_skill *s, const char *families, const akg_skill_query *q)
{
    int score = 0;
    for (size_t i = 0; i < s->n_families; i++)
        if (!strcmp(s->families[i], "any") || has_word(families, s->families[i]))
            score += 4;
    for (size_t i = 0; i < s->n_keywords; i++)
        if (has_word(q->task_text, s->keywords[i]))
            score += 1;
    if (s->level == AKG_SKILL_DEBUGGING)
        score += 3;
    return score;
}

typedef struct {
    size_t index;
    int group; /* 0 always, 1 by relevance */
    int score;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->group != y->group)
        return x->group - y->group;
    if (x->score != y->score)
        return y->score - x->score;
    return x->index < y->index ? -1 : x->index > y->index;
}

size_t akg_skills_select(const akg_skill_set *set, const akg_skill_query *q, size_t *order)
{
    if (!set->n)
        return 0;
    ranked *r = calloc(set->n, sizeof *r);
    if (!r)
        return 0;
    char families[256];
    akg_skills_task_families(q->task_text, families, sizeof families);
    size_t n = 0;
    for (size_t i = 0; i < set->n; i++) {
        const akg_skill *s = &set->items[i];
        if (!(s->agents & q->agent) || (s->level == AKG_SKILL_DEBUGGING && !q->debugging))
            continue;
        int score = relevance(s, families, q);
        if (s->level == AKG_SKILL_ON_REQUEST && score == 0)
            continue;
        r[n++] =
            (ranked){.index = i, .group = s->level == AKG_SKILL_ALWAYS ? 0 : 1, .score = score};
    }
    qsort(r, n, sizeof *r, cmp_ranked);
    size_t used = 0, chosen = 0;
    for (size_t i = 0; i < n; i++) {
        size_t cost = set->items[r[i].index].tokens;
        if (used + cost > q->budget_tokens)
            continue;
        used += cost;
        order[chosen++] = r[i].index;
    }
    free(r);
    return chosen;
}

char *akg_skills_render(const akg_skill_set *set, const size_t *order, size_t n_order,
                        const akg_skill_query *q)
{
    akg_buf b, left;
    akg_buf_init(&b, 0);
    akg_buf_init(&left, 0);
    for (size_t i = 0; i < n_order; i++) {
        const akg_skill *s = &set->items[order[i]];
        akg_buf_appendf(&b, "## %s: %s\n\n%s", s->name, s->description, s->body);
        if (b.len && b.data[b.len - 1] != '\n')
            akg_buf_puts(&b, "\n");
        akg_buf_puts(&b, "\n");
    }
    /* what was relevant but did not fit, so the reader knows it exists */
    size_t *all = set->n ? calloc(set->n, sizeof *all) : NULL;
    akg_skill_query wide = *q;
    wide.budget_tokens = (size_t)-1;
    size_t n_all = all ? akg_skills_select(set, &wide, all) : 0;
    for (size_t i = 0; i < n_all; i++) {
        int in = 0;
        for (size_t j = 0; j < n_order; j++)
            in |= order[j] == all[i];
        if (!in)
            akg_buf_appendf(&left, "%s%s", left.len ? ", " : "", set->items[all[i]].name);
    }
    free(all);
    if (left.len)
        akg_buf_appendf(&b, "(Left out to fit the prompt: %s.)\n", left.data);
    if (!b.len)
        akg_buf_puts(&b, set->n ? "(No skill of this DSL is about this task.)\n"
                                : "(No skills for this DSL.)\n");
    akg_buf_free(&left);
    return akg_buf_take(&b);
}

/* ---- for a template --------------------------------------------------------------------- */

static const char *var_of(const akg_prompt_var *vars, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(vars[i].name, name))
            return vars[i].value ? vars[i].value : "";
    return NULL;
}

char *akg_skills_for_template(const char *template_name, const akg_prompt_var *vars, size_t n_vars,
                              char *err, size_t errlen)
{
    const char *dsl = var_of(vars, n_vars, "dsl");
    const char *backend = var_of(vars, n_vars, "backend");
    if (!dsl || !*dsl)
        return akg_strdup("(No skills: the prompt names no DSL.)\n");
    akg_skill_query q = {
        .agent = !strncmp(template_name, "coder", 5) ? AKG_SKILL_FOR_CODER : AKG_SKILL_FOR_DESIGNER,
        .budget_tokens = AKG_SKILLS_DEFAULT_BUDGET,
    };
    const char *dbg = var_of(vars, n_vars, "debugging");
    q.debugging = dbg && *dbg;
    cJSON *cfg = NULL;
    char cerr[512];
    if (backend && akg_backend_config_load(backend, dsl, &cfg, cerr, sizeof cerr) == AKG_OK) {
        double b = akg_config_number(cfg, "skills_token_budget", -1);
        if (b >= 0)
            q.budget_tokens = (size_t)b;
    }
    cJSON_Delete(cfg);
    /* a level with max_prompt_tokens gives the skills a share of it (skills_tokens): the
     * smaller of that and the DSL's budget */
    const char *cap = var_of(vars, n_vars, "skills_tokens");
    if (cap && *cap) {
        long c = strtol(cap, NULL, 10);
        if (c > 0 && (size_t)c < q.budget_tokens)
            q.budget_tokens = (size_t)c;
    }
    akg_buf words;
    akg_buf_init(&words, 0);
    static const char *const word_vars[] = {"op_name", "probe", "sketch"};
    for (size_t i = 0; i < sizeof word_vars / sizeof word_vars[0]; i++) {
        const char *v = var_of(vars, n_vars, word_vars[i]);
        if (v)
            akg_buf_appendf(&words, "%s\n", v);
    }
    q.task_text = words.data ? words.data : "";
    akg_skill_set set;
    char *out = NULL;
    if (akg_skills_load(NULL, dsl, &set, err, errlen) == AKG_OK) {
        size_t *order = set.n ? calloc(set.n, sizeof *order) : NULL;
        size_t n = order ? akg_skills_select(&set, &q, order) : 0;
        out = akg_skills_render(&set, order, n, &q);
        free(order);
        akg_skill_set_free(&set);
        if (!out)
            akg_fail(err, errlen, AKG_ENOMEM, "out of memory choosing the %s skills", dsl);
    }
    akg_buf_free(&words);
    return out;
}
