// Checks the TextMate grammar (syntaxes/sketch.tmLanguage.json) against the
// tree-sitter highlight queries of the sketch grammar: every literal token and
// every builtin named in highlights.scm, every leaf node it captures, and
// (when the engine's sources are present) every operation and dtype the
// engine knows must be tokenised with a scope of the same kind.
//
//   node out/scripts/check-grammar.js [highlights.scm] [grammar.json]
//
// The tokenizer here is a small subset of TextMate's: top-level patterns
// (with #includes flattened), `match` with captures and `begin`/`end`
// regions, earliest match first, ties to the earlier pattern. The grammar
// keeps to regular expressions that mean the same in JavaScript and Oniguruma.
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

/** One thing highlights.scm gives a capture to. */
export interface QueryItem {
  kind: 'literal' | 'builtin' | 'node';
  text: string;
  capture: string;
}

type Sexp = string | Sexp[];

function tokenizeQuery(src: string): string[] {
  const out: string[] = [];
  const re = /\s+|;[^\n]*|"(?:[^"\\]|\\.)*"|[()[\]]|[^\s()[\]";]+/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(src))) {
    const t = m[0];
    if (/^\s/.test(t) || t.startsWith(';')) continue;
    out.push(t);
  }
  return out;
}

function parseQuery(tokens: string[]): Sexp[] {
  let i = 0;
  const list = (close?: string): Sexp[] => {
    const items: Sexp[] = [];
    while (i < tokens.length) {
      const t = tokens[i++];
      if (t === '(' || t === '[') {
        const inner = list(t === '(' ? ')' : ']');
        (inner as Sexp[] & { bracket?: string }).bracket = t;
        items.push(inner);
      } else if (t === close) {
        return items;
      } else if (t === ')' || t === ']') {
        throw new Error(`unbalanced ${t} in the query`);
      } else {
        items.push(t);
      }
    }
    if (close) throw new Error(`missing ${close} in the query`);
    return items;
  };
  return list();
}

const unquote = (s: string) => JSON.parse(s) as string;

/** Everything highlights.scm assigns a capture to that is not a contextual
 * identifier (those depend on the tree, which a TextMate grammar cannot see). */
export function queryItems(source: string): QueryItem[] {
  const items: QueryItem[] = [];
  const walk = (list: Sexp[]) => {
    for (let k = 0; k < list.length; k++) {
      const x = list[k];
      const next = list[k + 1];
      const capture = typeof next === 'string' && next.startsWith('@') ? next.slice(1) : undefined;
      if (typeof x === 'string') {
        if (x.startsWith('"') && capture) items.push({ kind: 'literal', text: unquote(x), capture });
        continue;
      }
      const bracket = (x as Sexp[] & { bracket?: string }).bracket;
      if (typeof x[0] === 'string' && x[0].startsWith('#')) {
        // (#any-of? @cap "a" "b"), (#eq? @cap "a")
        if (/^#(any-of|eq|match)\?$/.test(x[0]) && typeof x[1] === 'string' && x[0] !== '#match?')
          for (const s of x.slice(2)) if (typeof s === 'string' && s.startsWith('"'))
            items.push({ kind: 'builtin', text: unquote(s), capture: x[1].slice(1) });
        continue;
      }
      if (capture && bracket === '[') {
        for (const alt of x) {
          if (typeof alt === 'string' && alt.startsWith('"')) items.push({ kind: 'literal', text: unquote(alt), capture });
          else if (Array.isArray(alt) && alt.length === 1 && typeof alt[0] === 'string')
            items.push({ kind: 'node', text: alt[0], capture });
        }
        continue;
      }
      if (capture && bracket === '(' && x.length === 1 && typeof x[0] === 'string' && x[0] !== 'identifier') {
        items.push({ kind: 'node', text: x[0], capture });
        continue;
      }
      walk(x);
    }
  };
  walk(parseQuery(tokenizeQuery(source)));
  return items;
}

/** Which TextMate scopes count as the same kind as a tree-sitter capture. */
export const CAPTURE_SCOPES: Record<string, RegExp> = {
  'keyword': /^keyword\./,
  'keyword.repeat': /^keyword\.control/,
  'keyword.conditional': /^keyword\.control/,
  'keyword.operator': /^keyword\.operator/,
  'operator': /^keyword\.operator/,
  'function.builtin': /^support\.function/,
  'function.call': /^(support|entity\.name)\.function/,
  'punctuation.bracket': /^punctuation\./,
  'punctuation.delimiter': /^punctuation\.separator/,
  'attribute': /decorator/,
  'comment': /^comment\./,
  'string': /^string\./,
  'number': /^constant\.numeric/,
  'number.float': /^constant\.numeric\.float/,
  'boolean': /^constant\.language/,
  'constant.builtin': /^constant\.language/,
  'type.builtin': /^(support|storage)\.type/,
};

/** Source samples for the leaf nodes highlights.scm captures. */
export const NODE_SAMPLES: Record<string, string[]> = {
  comment: ['# a comment'],
  string: ['"grididx"', "'simd'"],
  integer: ['42', '0x1F', '1_024'],
  float: ['1e-5', '0.5', '2.', '.25', '3.0e+2'],
  true: ['True'],
  false: ['False'],
  none: ['None'],
  pass_statement: ['pass'],
  dtype: ['f32', 'bf16', 'i64', 'bool'],
};

/** Words that are keywords only in context (`bind` opens a section only
 * before ':', and is a name elsewhere): the line they are checked on. */
export const LITERAL_SAMPLES: Record<string, string> = {
  bind: '  bind: x = input("x"), y = output(0)',
};

interface Rule {
  match?: RegExp;
  begin?: RegExp;
  end?: RegExp;
  name?: string;
  captures?: Record<string, string>;
}

export interface Token {
  start: number;
  end: number;
  scope: string;
}

interface GrammarJson {
  patterns: unknown[];
  repository?: Record<string, unknown>;
}

function compile(re: string): RegExp {
  return new RegExp(re, 'gd');
}

/** Flattens the grammar's top-level patterns into an ordered rule list. */
export function loadRules(grammar: GrammarJson): Rule[] {
  const rules: Rule[] = [];
  const seen = new Set<string>();
  const add = (p: unknown) => {
    const o = p as Record<string, unknown>;
    if (typeof o.include === 'string') {
      const key = o.include.replace(/^#/, '');
      if (seen.has(key)) return;
      seen.add(key);
      const target = grammar.repository?.[key];
      if (!target) throw new Error(`include ${o.include} names nothing in the repository`);
      add(target);
      seen.delete(key);
      return;
    }
    if (!o.match && !o.begin && Array.isArray(o.patterns)) {
      for (const q of o.patterns) add(q);
      return;
    }
    const rule: Rule = { name: o.name as string | undefined };
    if (typeof o.match === 'string') rule.match = compile(o.match);
    if (typeof o.begin === 'string') rule.begin = compile(o.begin);
    if (typeof o.end === 'string') rule.end = compile(o.end);
    const caps = (o.captures ?? o.beginCaptures) as Record<string, { name?: string }> | undefined;
    if (caps) {
      rule.captures = {};
      for (const [k, v] of Object.entries(caps)) if (v.name) rule.captures[k] = v.name;
    }
    rules.push(rule);
  };
  for (const p of grammar.patterns) add(p);
  return rules;
}

/** Tokenises one line; text no rule matches gets no token. */
export function tokenizeLine(rules: Rule[], line: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  while (pos < line.length) {
    let best: { rule: Rule; m: RegExpExecArray } | undefined;
    for (const rule of rules) {
      const re = rule.match ?? rule.begin!;
      re.lastIndex = pos;
      const m = re.exec(line);
      if (m && (!best || m.index < best.m.index)) best = { rule, m };
    }
    if (!best) break;
    const { rule, m } = best;
    let end = m.index + m[0].length;
    if (rule.begin && rule.end) {
      rule.end.lastIndex = end;
      const e = rule.end.exec(line);
      end = e ? e.index + e[0].length : line.length;
    }
    if (rule.captures && m.indices) {
      for (const [k, scope] of Object.entries(rule.captures)) {
        const span = m.indices[Number(k)];
        if (span && span[1] > span[0]) tokens.push({ start: span[0], end: span[1], scope });
      }
    } else if (rule.name) {
      tokens.push({ start: m.index, end, scope: rule.name });
    }
    pos = end > pos ? end : pos + 1;
  }
  return tokens;
}

/** The sample(s) a query item is checked on; `at` is where the item starts. */
function samples(item: QueryItem): { line: string; at: number; length: number }[] {
  if (item.kind === 'node') {
    const list = NODE_SAMPLES[item.text];
    if (!list) return [];
    return list.map((s) => ({ line: s, at: 0, length: s.length }));
  }
  const context = item.kind === 'literal' ? LITERAL_SAMPLES[item.text] : undefined;
  if (context !== undefined) return [{ line: context, at: context.indexOf(item.text), length: item.text.length }];
  if (item.capture.startsWith('function')) return [{ line: `${item.text}(x)`, at: 0, length: item.text.length }];
  if (item.capture === 'attribute' && item.text === '@') return [{ line: '@llm_hint("parallel")', at: 0, length: 1 }];
  // Operators and punctuation between operands, words alone.
  if (/^\W+$/.test(item.text)) return [{ line: `a ${item.text} b`, at: 2, length: item.text.length }];
  return [{ line: item.text, at: 0, length: item.text.length }];
}

export interface CheckFailure {
  what: string;
  why: string;
}

/** Checks one token kind: the text at [at, at+length) must be one token whose
 * scope matches `want`. */
function expectToken(rules: Rule[], line: string, at: number, length: number, want: RegExp): string | undefined {
  const toks = tokenizeLine(rules, line).filter((t) => t.start <= at && t.end > at);
  if (toks.length === 0) return `no token at column ${at} of ${JSON.stringify(line)}`;
  const t = toks[toks.length - 1];
  if (t.start !== at || t.end !== at + length)
    return `token ${JSON.stringify(line.slice(t.start, t.end))} (${t.scope}) does not cover exactly ${JSON.stringify(line.slice(at, at + length))}`;
  if (!t.scope.split(/\s+/).some((s) => want.test(s))) return `scope ${t.scope} is not ${want}`;
  return undefined;
}

/** Every failure of the grammar against the queries (and the engine's
 * operation and dtype tables, when given). */
export function checkGrammar(grammar: GrammarJson, highlights: string,
                             extra: { operations?: string[]; dtypes?: string[] } = {}): CheckFailure[] {
  const rules = loadRules(grammar);
  const failures: CheckFailure[] = [];
  const items = queryItems(highlights);
  if (items.length === 0) failures.push({ what: 'highlights.scm', why: 'no captured keywords found' });
  for (const item of items) {
    const what = `${item.kind} ${JSON.stringify(item.text)} @${item.capture}`;
    const want = CAPTURE_SCOPES[item.capture];
    if (!want) {
      failures.push({ what, why: `capture @${item.capture} has no TextMate scope mapping in CAPTURE_SCOPES` });
      continue;
    }
    const list = samples(item);
    if (list.length === 0) {
      failures.push({ what, why: `no sample text for node (${item.text}) in NODE_SAMPLES` });
      continue;
    }
    for (const s of list) {
      const why = expectToken(rules, s.line, s.at, s.length, want);
      if (why) failures.push({ what, why });
    }
  }
  for (const op of extra.operations ?? []) {
    const why = expectToken(rules, `${op}(x)`, 0, op.length, CAPTURE_SCOPES['function.builtin']);
    if (why) failures.push({ what: `operation ${op}`, why });
  }
  for (const dt of extra.dtypes ?? []) {
    const why = expectToken(rules, dt, 0, dt.length, CAPTURE_SCOPES['type.builtin']);
    if (why) failures.push({ what: `dtype ${dt}`, why });
  }
  return failures;
}

/** Names from the engine's tables: `{"name", OP_...}` rows and UN/BIN/CMP/RED
 * macros in sketch_ops.c, `{"name", AKG_DTYPE_...}` rows in sketch_ir.c. */
export function engineNames(repoRoot: string): { operations?: string[]; dtypes?: string[] } {
  const out: { operations?: string[]; dtypes?: string[] } = {};
  const ops = path.join(repoRoot, 'engine', 'sketch', 'sketch_ops.c');
  const ir = path.join(repoRoot, 'engine', 'sketch', 'sketch_ir.c');
  if (existsSync(ops)) {
    const src = readFileSync(ops, 'utf8');
    const names = new Set<string>();
    for (const m of src.matchAll(/(?:\{|\b(?:UN|BIN|CMP|RED)\()\s*"([a-z_][a-z0-9_]*)"\s*(?:\)|,\s*(?:OP_|\d|"))/g)) names.add(m[1]);
    out.operations = [...names];
  }
  if (existsSync(ir)) {
    const src = readFileSync(ir, 'utf8');
    out.dtypes = [...new Set([...src.matchAll(/\{"([a-z0-9]+)",\s*AKG_DTYPE_/g)].map((m) => m[1]))];
  }
  return out;
}

/** Where the repository's files are, from this file's place (out/scripts/ or scripts/). */
export function repoRoot(): string {
  let dir = __dirname;
  for (let i = 0; i < 6; i++) {
    if (existsSync(path.join(dir, 'sketch-grammar', 'queries', 'highlights.scm'))) return dir;
    dir = path.dirname(dir);
  }
  return path.resolve(__dirname, '..', '..', '..', '..');
}

if (require.main === module) {
  const root = repoRoot();
  const highlightsPath = process.argv[2] ?? path.join(root, 'sketch-grammar', 'queries', 'highlights.scm');
  const grammarPath = process.argv[3] ?? path.join(root, 'editor-clients', 'vscode', 'syntaxes', 'sketch.tmLanguage.json');
  const failures = checkGrammar(JSON.parse(readFileSync(grammarPath, 'utf8')), readFileSync(highlightsPath, 'utf8'),
    engineNames(root));
  for (const f of failures) console.error(`${f.what}: ${f.why}`);
  if (failures.length) {
    console.error(`${failures.length} problem(s): ${grammarPath} does not cover ${highlightsPath}`);
    process.exit(1);
  }
  console.log(`${grammarPath}: covers ${highlightsPath}`);
}
