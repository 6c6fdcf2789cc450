import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

import { checkGrammar, engineNames, loadRules, queryItems, repoRoot, tokenizeLine } from '../../scripts/check-grammar';

const root = repoRoot();
const highlightsPath = path.join(root, 'sketch-grammar', 'queries', 'highlights.scm');
const grammarPath = path.join(root, 'editor-clients', 'vscode', 'syntaxes', 'sketch.tmLanguage.json');
const grammar = JSON.parse(readFileSync(grammarPath, 'utf8'));

test('every keyword, operator and builtin of highlights.scm is covered by the TextMate grammar',
  { skip: existsSync(highlightsPath) ? false : 'sketch-grammar/queries/highlights.scm is not in this tree' }, () => {
    const highlights = readFileSync(highlightsPath, 'utf8');
    const items = queryItems(highlights);
    // The query really was read: its keyword families are all there.
    for (const word of ['sketch', 'bind', 'for', 'if', 'not', 'load', 'alloc', 'input', '->', '**'])
      assert.ok(items.some((i) => i.text === word), `highlights.scm item ${word}`);
    const engine = engineNames(root);
    const failures = checkGrammar(grammar, highlights, engine);
    assert.deepEqual(failures, []);
  });

test('every operation and dtype the engine knows is highlighted',
  { skip: existsSync(path.join(root, 'engine', 'sketch', 'sketch_ops.c')) ? false : 'engine sources absent' }, () => {
    const engine = engineNames(root);
    assert.ok((engine.operations ?? []).length > 40, 'the operation table was read');
    assert.ok((engine.dtypes ?? []).includes('bf16'), 'the dtype table was read');
  });

test('the check fails when the grammar loses a keyword', () => {
  const broken = JSON.parse(JSON.stringify(grammar));
  broken.repository.keyword.patterns = broken.repository.keyword.patterns.filter(
    (p: { name?: string }) => !(p.name ?? '').startsWith('keyword.control.repeat'));
  const failures = checkGrammar(broken, '["for" "in"] @keyword.repeat\n(comment) @comment\n');
  assert.deepEqual(failures.map((f) => f.what), ['literal "for" @keyword.repeat', 'literal "in" @keyword.repeat']);
  const unknown = checkGrammar(grammar, '"sketch" @keyword.special\n(mystery) @comment\n');
  assert.equal(unknown.length, 2, 'unmapped captures and unknown nodes are failures, not skipped');
});

test('tokenizing a sketch line', () => {
  const rules = loadRules(grammar);
  const line = '    store(t -> y[i:i+BLOCK], mask=m)  # out';
  const scopes = tokenizeLine(rules, line).map((t) => [line.slice(t.start, t.end), t.scope.split(' ')[0]]);
  assert.deepEqual(scopes, [
    ['store', 'support.function.builtin.sketch'], ['(', 'punctuation.section.brackets.sketch'],
    ['->', 'keyword.operator.arrow.sketch'], ['[', 'punctuation.section.brackets.sketch'],
    [':', 'punctuation.separator.colon.sketch'], ['+', 'keyword.operator.arithmetic.sketch'],
    [']', 'punctuation.section.brackets.sketch'], [',', 'punctuation.separator.sketch'],
    ['mask', 'variable.parameter.sketch'], ['=', 'keyword.operator.assignment.sketch'],
    [')', 'punctuation.section.brackets.sketch'], ['# out', 'comment.line.number-sign.sketch'],
  ]);
});

test('bind is a keyword only where it opens a section', () => {
  const rules = loadRules(grammar);
  const scopes = (line: string) =>
    tokenizeLine(rules, line).map((t) => [line.slice(t.start, t.end), t.scope.split(' ')[0]]);
  assert.deepEqual(scopes('  bind: x = input("x", [B, S]), y = output(0)').slice(0, 2),
    [['bind', 'keyword.other.section.sketch'], [':', 'punctuation.separator.colon.sketch']]);
  for (const line of ['  bind = alloc([4])', '  y = relu(bind)', '  x = bind + 1'])
    assert.ok(!scopes(line).some(([text, scope]) => text === 'bind' && scope.startsWith('keyword')),
      `${line}: bind is a name here`);
  assert.deepEqual(scopes('  g = gather(t, idx, 1)')[2], ['gather', 'support.function.operation.sketch']);
});
