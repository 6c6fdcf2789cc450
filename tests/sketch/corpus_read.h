/* Reads tree-sitter corpus files: cases of `===` name `===`, input, `---`, expected tree. */
#ifndef SKETCH_CORPUS_READ_H
#define SKETCH_CORPUS_READ_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char name[128];
  char *input;
  char *expected;
} corpus_case;

static char *corpus_slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) buf[n] = '\0';
  if (len) *len = (size_t)n;
  return buf;
}

static int corpus_is_rule(const char *line, char ch) {
  int n = 0;
  while (line[n] == ch) n++;
  return n >= 3 && (line[n] == '\n' || line[n] == '\0');
}

static char *corpus_dup(const char *s, size_t n) {
  char *d = malloc(n + 1);
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

/* Parses one corpus file; appends cases to *cases. Returns the new count. */
static size_t corpus_parse_file(const char *path, corpus_case **cases, size_t count) {
  char *text = corpus_slurp(path, NULL);
  if (!text) return count;
  char *p = text;
  while (*p) {
    if (!corpus_is_rule(p, '=')) {
      p = strchr(p, '\n');
      if (!p) break;
      p++;
      continue;
    }
    char *name = strchr(p, '\n');
    if (!name) break;
    name++;
    char *name_end = strchr(name, '\n');
    if (!name_end) break;
    char *rule2 = name_end + 1;
    char *input = strchr(rule2, '\n');
    if (!input) break;
    input++;
    char *sep = input;
    while (*sep && !(corpus_is_rule(sep, '-') && (sep == input || sep[-1] == '\n'))) {
      sep = strchr(sep, '\n');
      if (!sep) break;
      sep++;
    }
    if (!sep || !*sep) break;
    char *expected = strchr(sep, '\n');
    expected = expected ? expected + 1 : sep + strlen(sep);
    char *next = expected;
    while (*next && !(corpus_is_rule(next, '=') && next[-1] == '\n')) {
      char *nl = strchr(next, '\n');
      if (!nl) {
        next += strlen(next);
        break;
      }
      next = nl + 1;
    }
    *cases = realloc(*cases, (count + 1) * sizeof **cases);
    corpus_case *c = &(*cases)[count++];
    size_t nl = (size_t)(name_end - name);
    if (nl >= sizeof c->name) nl = sizeof c->name - 1;
    memcpy(c->name, name, nl);
    c->name[nl] = '\0';
    /* input: drop the blank line tree-sitter puts before `---` */
    size_t il = (size_t)(sep - input);
    while (il > 0 && input[il - 1] == '\n') il--;
    c->input = corpus_dup(input, il);
    if (il) c->input = realloc(c->input, il + 2), c->input[il] = '\n', c->input[il + 1] = '\0';
    c->expected = corpus_dup(expected, (size_t)(next - expected));
    p = next;
  }
  free(text);
  return count;
}

static size_t corpus_load_dir(const char *dir, corpus_case **cases) {
  size_t count = 0;
  DIR *d = opendir(dir);
  if (!d) return 0;
  char *names[64];
  size_t nn = 0;
  struct dirent *ent;
  while ((ent = readdir(d)) && nn < 64) {
    size_t l = strlen(ent->d_name);
    if (l > 4 && strcmp(ent->d_name + l - 4, ".txt") == 0) names[nn++] = corpus_dup(ent->d_name, l);
  }
  closedir(d);
  for (size_t i = 0; i < nn; i++) {
    for (size_t j = i + 1; j < nn; j++)
      if (strcmp(names[j], names[i]) < 0) {
        char *t = names[i];
        names[i] = names[j];
        names[j] = t;
      }
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    count = corpus_parse_file(path, cases, count);
    free(names[i]);
  }
  return count;
}

static void corpus_free(corpus_case *cases, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(cases[i].input);
    free(cases[i].expected);
  }
  free(cases);
}

#endif
