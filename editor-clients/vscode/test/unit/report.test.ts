import { test } from 'node:test';
import assert from 'node:assert/strict';

import { escapeHtml, formatMs, formatSpeedup, renderReportHtml, summarizeReport } from '../../src/report';

const passing = {
  op: 'relu', backend: 'cpu', dsl: 'cpp', arch: 'x86_64', workflow: 'default', provider: 'builtin', status: 'pass',
  seed: 7, elapsed_s: 12.5,
  correctness: { trials: 5, cases: 2, max_abs_err: 0, max_rel_err: 0, atol: 1e-5, rtol: 1e-5, dtype: 'float32' },
  perf: { ref_ms: 1.23456, kernel_ms: 0.5, speedup: 2.469, runs: 50, warmup: 5, env: { torch: '1.13', threads: 2 } },
  paths: { kernel: '/r/kernel.cpp', report: '/r/report.json' },
  candidates: [{ step: 1, status: 'pass', kernel_ms: 0.5, speedup: 2.469 }],
};

test('formatting of speedups and times', () => {
  assert.equal(formatSpeedup(2.469), '2.47x');
  assert.equal(formatSpeedup(undefined), '–');
  assert.equal(formatSpeedup(NaN), '–');
  assert.equal(formatSpeedup('3'), '–');
  assert.equal(formatMs(1.23456), '1.235 ms');
  assert.equal(formatMs(null), '–');
});

test('escapeHtml escapes the five characters', () => {
  assert.equal(escapeHtml(`<a href="x" onclick='y'>&</a>`), '&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  assert.equal(escapeHtml(3), '3');
});

test('summarizeReport picks status, target, speedup and error', () => {
  assert.deepEqual(summarizeReport(passing), { op: 'relu', target: 'cpu/cpp/x86_64', status: 'pass', speedup: 2.469 });
  assert.deepEqual(summarizeReport({ op: 'x', backend: 'cpu', dsl: 'cpp', status: 'fail',
    error: { class: 'runtime_error', detail: 'boom' } }),
  { op: 'x', target: 'cpu/cpp', status: 'fail', error: { class: 'runtime_error', detail: 'boom' } });
  assert.deepEqual(summarizeReport(null), { op: 'kernel', target: '?', status: 'unknown' });
});

test('a passing report shows speedup, timings, correctness and files', () => {
  const html = renderReportHtml(passing, { cspSource: 'vscode-webview:', nonce: 'abc' });
  assert.match(html, /2\.47x/);
  assert.match(html, /1\.235 ms/);
  assert.match(html, /0\.5 ms/);
  assert.match(html, /status-pass/);
  assert.match(html, /<th>trials<\/th><td>5<\/td>/);
  assert.match(html, /\/r\/kernel\.cpp/);
  assert.match(html, /<th>threads<\/th><td>2<\/td>/);
  assert.doesNotMatch(html, /<h2>Error<\/h2>/);
  assert.match(html, /Content-Security-Policy" content="default-src 'none'; style-src vscode-webview: 'nonce-abc'/);
  assert.doesNotMatch(html, /<script/i, 'the page runs no scripts');
});

test('a failing report shows its error, escaped', () => {
  const evil = '<script>alert(1)</script> & "quotes" \'single\'';
  const html = renderReportHtml({
    op: '<img src=x onerror=alert(1)>', backend: 'cpu', dsl: 'cpp', status: 'fail" onmouseover="x',
    error: { class: 'runtime_error<b>', detail: evil },
    paths: { report: '/tmp/<x>/report.json' },
    perf: { env: { note: '<i>' } },
    candidates: [{ step: 1, status: '<b>bad</b>', error: { class: '<u>c</u>' } }],
  }, { cspSource: 'vscode-webview:', nonce: 'n"><script>' });
  assert.doesNotMatch(html, /<script>/, 'no markup from the report survives');
  assert.doesNotMatch(html, /<img/);
  assert.doesNotMatch(html, /<b>bad/);
  assert.doesNotMatch(html, /<u>c/);
  assert.doesNotMatch(html, /<i>/);
  assert.doesNotMatch(html, /onmouseover="x/);
  assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt; &amp; &quot;quotes&quot; &#39;single&#39;/);
  assert.match(html, /runtime_error&lt;b&gt;/);
  assert.match(html, /status-unknown/, 'a status that is not a plain word does not reach the class attribute');
  assert.match(html, /<h2>Error<\/h2>/);
  assert.match(html, /\/tmp\/&lt;x&gt;\/report\.json/);
});

test('malformed reports render without throwing', () => {
  for (const r of [null, 3, 'x', [], { perf: 'fast', correctness: [], candidates: {}, paths: null }]) {
    const html = renderReportHtml(r, { cspSource: 'c', nonce: 'n' });
    assert.match(html, /<\/html>$/);
  }
});
