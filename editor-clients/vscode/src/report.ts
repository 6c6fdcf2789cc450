// Renders a run's report.json as the HTML of the report webview. Pure logic:
// every value from the report is escaped, the page runs no scripts and its
// Content-Security-Policy allows only the inline style carrying the nonce.

export function escapeHtml(value: unknown): string {
  return String(value)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

type Json = Record<string, unknown>;

function obj(v: unknown): Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {};
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function text(v: unknown): string | undefined {
  return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined;
}

/** 4.8816 -> "4.88x"; undefined -> "–". */
export function formatSpeedup(v: unknown): string {
  const n = num(v);
  return n === undefined ? '–' : `${n.toFixed(2)}x`;
}

/** Milliseconds with 4 significant digits; undefined -> "–". */
export function formatMs(v: unknown): string {
  const n = num(v);
  return n === undefined ? '–' : `${Number(n.toPrecision(4))} ms`;
}

function formatNumber(v: unknown): string {
  const n = num(v);
  if (n === undefined) return text(v) ?? '–';
  return Number.isInteger(n) ? String(n) : n.toPrecision(3);
}

/** The few facts the status bar and notifications need. */
export interface ReportSummary {
  op: string;
  target: string;
  status: string;
  speedup?: number;
  error?: { class: string; detail: string };
}

export function summarizeReport(report: unknown): ReportSummary {
  const r = obj(report);
  const target = [r.backend, r.dsl, r.arch].filter((x) => typeof x === 'string' && x).join('/');
  const e = obj(r.error);
  const out: ReportSummary = {
    op: text(r.op) ?? 'kernel',
    target: target || '?',
    status: text(r.status) ?? 'unknown',
  };
  const sp = num(obj(r.perf).speedup);
  if (sp !== undefined) out.speedup = sp;
  if (r.error && (e.class !== undefined || e.detail !== undefined))
    out.error = { class: text(e.class) ?? 'error', detail: text(e.detail) ?? '' };
  return out;
}

function row(label: string, value: string): string {
  return `<tr><th>${escapeHtml(label)}</th><td>${value}</td></tr>`;
}

const STYLE = `
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 1em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
th, td { text-align: left; padding: 2px 12px 2px 0; vertical-align: top; }
.status { font-weight: bold; padding: 1px 6px; border-radius: 3px; }
.status-pass { background: var(--vscode-testing-iconPassed, #2a7); color: #fff; }
.status-fail, .status-error { background: var(--vscode-testing-iconFailed, #c33); color: #fff; }
.status-unverified, .status-cancelled { background: var(--vscode-editorWarning-foreground, #b80); color: #fff; }
.speedup { font-size: 2em; font-weight: bold; }
pre { white-space: pre-wrap; background: var(--vscode-textCodeBlock-background); padding: 0.5em; }
`;

export interface RenderOptions {
  /** webview.cspSource */
  cspSource: string;
  /** A fresh random token for the style element. */
  nonce: string;
}

/** The whole page. Unknown or malformed fields are shown as "–", never trusted. */
export function renderReportHtml(report: unknown, opts: RenderOptions): string {
  const r = obj(report);
  const s = summarizeReport(report);
  const perf = obj(r.perf);
  const corr = obj(r.correctness);
  const paths = obj(r.paths);
  const env = obj(perf.env);
  const statusClass = /^[a-z]+$/.test(s.status) ? s.status : 'unknown';
  const nonce = escapeHtml(opts.nonce);

  const parts: string[] = [];
  parts.push('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">');
  parts.push(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; ` +
    `style-src ${escapeHtml(opts.cspSource)} 'nonce-${nonce}'; img-src ${escapeHtml(opts.cspSource)};">`);
  parts.push(`<style nonce="${nonce}">${STYLE}</style>`);
  parts.push(`<title>akg report: ${escapeHtml(s.op)}</title></head><body>`);
  parts.push(`<h1>${escapeHtml(s.op)} <small>${escapeHtml(s.target)}</small></h1>`);
  parts.push(`<p><span class="status status-${statusClass}">${escapeHtml(s.status)}</span>`);
  if (s.speedup !== undefined)
    parts.push(` <span class="speedup">${escapeHtml(formatSpeedup(s.speedup))}</span> faster than PyTorch`);
  parts.push('</p>');

  if (s.error) {
    parts.push('<h2>Error</h2>');
    parts.push(`<p><b>${escapeHtml(s.error.class)}</b></p><pre>${escapeHtml(s.error.detail)}</pre>`);
  }

  parts.push('<h2>Timings</h2><table>');
  parts.push(row('PyTorch', escapeHtml(formatMs(perf.ref_ms))));
  parts.push(row('kernel', escapeHtml(formatMs(perf.kernel_ms))));
  parts.push(row('speedup', escapeHtml(formatSpeedup(perf.speedup))));
  parts.push(row('runs / warm-up', `${escapeHtml(formatNumber(perf.runs))} / ${escapeHtml(formatNumber(perf.warmup))}`));
  if (r.elapsed_s !== undefined) parts.push(row('job took', escapeHtml(`${formatNumber(r.elapsed_s)} s`)));
  for (const [k, v] of Object.entries(env)) parts.push(row(k, escapeHtml(text(v) ?? JSON.stringify(v))));
  parts.push('</table>');

  parts.push('<h2>Correctness</h2><table>');
  for (const key of ['trials', 'cases', 'max_abs_err', 'max_rel_err', 'rel_l2_err', 'atol', 'rtol', 'dtype'])
    if (corr[key] !== undefined) parts.push(row(key, escapeHtml(formatNumber(corr[key]))));
  if (Object.keys(corr).length === 0) parts.push(row('verification', '–'));
  parts.push('</table>');

  const cands = Array.isArray(r.candidates) ? r.candidates : [];
  if (cands.length > 0) {
    parts.push('<h2>Candidates</h2><table><tr><th>step</th><th>status</th><th>kernel</th><th>speedup</th><th>error</th></tr>');
    for (const c of cands.slice(0, 200)) {
      const co = obj(c);
      const ce = obj(co.error);
      parts.push(`<tr><td>${escapeHtml(formatNumber(co.step))}</td><td>${escapeHtml(text(co.status) ?? '–')}</td>` +
        `<td>${escapeHtml(formatMs(co.kernel_ms))}</td><td>${escapeHtml(formatSpeedup(co.speedup))}</td>` +
        `<td>${escapeHtml(text(ce.class) ?? '')}</td></tr>`);
    }
    parts.push('</table>');
  }

  parts.push('<h2>Files</h2><table>');
  for (const [k, v] of Object.entries(paths)) if (typeof v === 'string') parts.push(row(k, `<code>${escapeHtml(v)}</code>`));
  parts.push('</table>');
  const meta = ['workflow', 'provider', 'seed', 'run_id'].filter((k) => r[k] !== undefined)
    .map((k) => `${k} ${formatNumber(r[k])}`).join(' · ');
  if (meta) parts.push(`<p><small>${escapeHtml(meta)}</small></p>`);
  parts.push('</body></html>');
  return parts.join('\n');
}
