// A second, independent client: the protocol layer VS Code itself uses
// (vscode-jsonrpc + vscode-languageserver-protocol) drives the real akg-lsp
// binary through initialize, a code action, a job to its end, and a hover.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, copyFileSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import rpc from 'vscode-jsonrpc/node.js';
import proto from 'vscode-languageserver-protocol';

const here = dirname(fileURLToPath(import.meta.url));
const refs = resolve(here, '..', '..', 'fixtures', 'refs');
const server = process.env.AKG_LSP;

test('vscode-jsonrpc client: initialize, code action, job, hover', { timeout: 180000 }, async () => {
  assert.ok(server, 'AKG_LSP names the akg-lsp binary');
  const tmp = mkdtempSync(join(tmpdir(), 'akg-lsp-node-'));
  const ws = join(tmp, 'ws');
  mkdirSync(ws);
  const ref = join(ws, 'relu.py');
  copyFileSync(join(refs, 'relu.py'), ref);
  const child = spawn(server, ['--stdio'], {
    cwd: tmp,
    env: { ...process.env, AKG_STORE: join(tmp, 'store.db'), HOME: tmp },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const conn = rpc.createMessageConnection(
    new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));

  const progress = [];
  const finished = new Promise((resolveDone) => {
    conn.onNotification('akg/jobFinished', (p) => resolveDone(p));
  });
  const sketchReady = new Promise((r) => conn.onNotification('akg/sketchReady', (p) => r(p)));
  conn.onRequest(proto.WorkDoneProgressCreateRequest.type, () => null);
  conn.onRequest(proto.ShowDocumentRequest.type, () => ({ success: true }));
  conn.onRequest(proto.ConfigurationRequest.type, (p) => p.items.map(() => ({ targets: ['cpu/cpp'] })));
  conn.onRequest(proto.CodeLensRefreshRequest.type, () => null);
  conn.onNotification('$/progress', (p) => progress.push(p.value));
  conn.onNotification(proto.PublishDiagnosticsNotification.type, () => {});
  conn.onNotification(proto.ShowMessageNotification.type, () => {});
  conn.listen();

  try {
    const init = await conn.sendRequest(proto.InitializeRequest.type, {
      processId: process.pid,
      rootUri: pathToFileURL(ws).href,
      workspaceFolders: [{ uri: pathToFileURL(ws).href, name: 'ws' }],
      capabilities: {
        window: { workDoneProgress: true, showDocument: { support: true } },
        workspace: { configuration: true },
        general: { positionEncodings: ['utf-16'] },
      },
    });
    assert.equal(init.serverInfo.name, 'akg-lsp');
    assert.equal(init.capabilities.positionEncoding, 'utf-16');
    assert.ok(init.capabilities.executeCommandProvider.commands.includes('akg.generate'));
    await conn.sendNotification(proto.InitializedNotification.type, {});

    const uri = pathToFileURL(ref).href;
    const text = readFileSync(ref, 'utf8');
    await conn.sendNotification(proto.DidOpenTextDocumentNotification.type, {
      textDocument: { uri, languageId: 'python', version: 1, text },
    });

    const actions = await conn.sendRequest(proto.CodeActionRequest.type, {
      textDocument: { uri },
      range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
      context: { diagnostics: [] },
    });
    const generate = actions.find((a) => a.command && a.command.command === 'akg.generate');
    assert.ok(generate, JSON.stringify(actions));

    const started = await conn.sendRequest(proto.ExecuteCommandRequest.type, generate.command);
    assert.equal(typeof started.jobId, 'number');
    const sketch = await sketchReady;
    assert.equal(sketch.id, started.jobId);
    const done = await finished;
    assert.equal(done.id, started.jobId);
    assert.equal(done.status, 'pass', JSON.stringify(done));
    assert.ok(done.speedup > 0);
    assert.ok(progress.some((v) => v.kind === 'begin'));
    assert.ok(progress.some((v) => v.kind === 'end'));

    const line = text.split('\n').findIndex((l) => l.includes('class Model'));
    const hover = await conn.sendRequest(proto.HoverRequest.type, {
      textDocument: { uri }, position: { line, character: 7 },
    });
    assert.match(hover.contents.value, new RegExp(`${done.speedup.toFixed(2)}x`));

    await conn.sendRequest(proto.ShutdownRequest.type);
    const exited = new Promise((r) => child.on('exit', (code) => r(code)));
    await conn.sendNotification(proto.ExitNotification.type);
    assert.equal(await exited, 0);
  } finally {
    conn.dispose();
    if (child.exitCode === null) child.kill();
    rmSync(tmp, { recursive: true, force: true });
  }
});
