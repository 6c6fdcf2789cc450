// Runs inside VS Code's extension host (see ../runTest.ts). No test framework:
// each case is an async function; the first failure rejects run().
import assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';

import type { AkgApi } from '../../../src/extension';
import type { JobFinished } from '../../../src/jobs';

const JOB_TIMEOUT_MS = 180_000;

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), ms))]);
}

async function waitFor<T>(probe: () => T | undefined, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function generateOnCpu(api: AkgApi): Promise<void> {
  const ws = process.env.AKG_E2E_WORKSPACE!;
  const ref = vscode.Uri.file(path.join(ws, 'relu.py'));
  const doc = await vscode.workspace.openTextDocument(ref);
  await vscode.window.showTextDocument(doc);
  await waitFor(() => (api.client()?.isRunning() ? true : undefined), 30_000, 'the client to start');

  // Code actions come from the server for a reference.
  const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>(
    'vscode.executeCodeActionProvider', ref, new vscode.Range(0, 0, 0, 0), vscode.CodeActionKind.Source.value);
  assert.ok(actions?.some((a) => a.command?.command === 'akg.generate'), 'a generate code action');

  const finished = new Promise<JobFinished>((resolve) => api.onJobFinished((n) => resolve(n)));
  const answer = await vscode.commands.executeCommand<{ jobId: number }>('akg.client.generate', 'cpu/cpp');
  assert.equal(typeof answer?.jobId, 'number');
  assert.equal(api.tracker.count, 1, 'the status bar counts the running job');
  const done = await withTimeout(finished, JOB_TIMEOUT_MS, 'akg/jobFinished');
  assert.equal(done.status, 'pass', JSON.stringify(done.error));
  assert.ok(typeof done.speedup === 'number' && done.speedup > 0);
  assert.equal(api.tracker.count, 0);

  // The server asks VS Code to show the kernel.
  const kernel = done.paths?.kernel;
  assert.ok(kernel);
  await waitFor(() => vscode.window.visibleTextEditors.find((e) => e.document.uri.fsPath === kernel), 20_000,
    'the kernel editor');

  // Hover on `class Model` carries the speedup.
  const text = doc.getText();
  const line = text.split('\n').findIndex((l) => l.startsWith('class Model'));
  const hovers = await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', ref,
    new vscode.Position(line, 7));
  const hoverText = hovers.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value))).join('\n');
  assert.match(hoverText, /\d+\.\d+x/);

  // The report view opens from the palette command.
  await vscode.commands.executeCommand('akg.client.openReport');
}

async function sketchLanguage(): Promise<void> {
  const doc = await vscode.workspace.openTextDocument({ language: 'sketch', content: 'sketch s {\n}\n' });
  assert.equal(doc.languageId, 'sketch');
}

export async function run(): Promise<void> {
  const ext = vscode.extensions.getExtension<AkgApi>('akg.akg');
  assert.ok(ext, 'the extension is installed');
  const api = await ext.activate();
  for (const [name, fn] of [['sketch language', sketchLanguage], ['generate on cpu/cpp', () => generateOnCpu(api)]] as const) {
    console.log(`akg e2e: ${name}`);
    await fn();
    console.log(`akg e2e: ${name}: ok`);
  }
}
