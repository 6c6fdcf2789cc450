// Starts the real akg-lsp through the extension's own code (settings ->
// serverExecutable -> spawnServer, which launches it as vscode-languageclient
// does) and talks to it with vscode-jsonrpc, the protocol layer VS Code uses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as rpc from 'vscode-jsonrpc/node';

import { repoRoot } from '../../scripts/check-grammar';
import { serverExecutable, spawnServer } from '../../src/server';
import { objectGetter, readSettings, serverSettings } from '../../src/settings';

const root = repoRoot();
const candidates = [process.env.AKG_LSP, path.join(root, 'build', 'lsp-server', 'akg-lsp'), path.join(root, 'build', 'akg-lsp')];
const serverBinary = candidates.find((p): p is string => !!p && existsSync(p));
const relu = path.join(root, 'tests', 'fixtures', 'refs', 'relu.py');

test('the real akg-lsp starts from the extension settings and answers initialize and a code action',
  { timeout: 60000, skip: serverBinary ? false : 'akg-lsp is not built (set AKG_LSP or build build/lsp-server/akg-lsp)' },
  async () => {
    const tmp = mkdtempSync(path.join(tmpdir(), 'akg-vscode-server-'));
    const ws = path.join(tmp, 'ws');
    mkdirSync(ws);
    const ref = path.join(ws, 'relu.py');
    copyFileSync(relu, ref);
    const settings = readSettings(objectGetter({
      serverPath: serverBinary!, targets: ['cpu/cpp', { backend: 'cuda', dsl: 'triton' }],
      storePath: path.join(tmp, 'store.db'), python: process.env.AKG_PYTHON ?? '',
    }));
    const r = serverExecutable(settings, { envPath: process.env.PATH, home: tmp, workspaceFolder: ws },
      { ...process.env, HOME: tmp });
    assert.ok(r.ok, r.ok ? '' : r.message);
    const child = spawnServer(r.executable);
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
    const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
    const configRequests: unknown[] = [];
    conn.onRequest('workspace/configuration', (p: { items: { section?: string }[] }) => {
      configRequests.push(p);
      return p.items.map(() => serverSettings(settings));
    });
    conn.onRequest('client/registerCapability', () => null);
    conn.onNotification('textDocument/publishDiagnostics', () => undefined);
    conn.onNotification('window/logMessage', () => undefined);
    conn.listen();
    try {
      const wsUri = pathToFileURL(ws).href;
      const init = await conn.sendRequest('initialize', {
        processId: process.pid,
        rootUri: wsUri,
        workspaceFolders: [{ uri: wsUri, name: 'ws' }],
        initializationOptions: serverSettings(settings),
        capabilities: {
          workspace: { configuration: true },
          window: { workDoneProgress: true, showDocument: { support: true } },
        },
      }) as { capabilities: Record<string, any>; serverInfo?: { name: string } };
      assert.equal(init.serverInfo?.name, 'akg-lsp');
      const commands: string[] = init.capabilities.executeCommandProvider.commands;
      for (const c of ['akg.generate', 'akg.designSketch', 'akg.verify', 'akg.openReport', 'akg.cancel',
        'akg.generateFromSketch'])
        assert.ok(commands.includes(c), `server command ${c}`);
      for (const c of commands) assert.ok(!c.startsWith('akg.client.'), 'client palette ids never clash with server ids');
      const pkg = JSON.parse(readFileSync(path.join(root, 'editor-clients', 'vscode', 'package.json'), 'utf8'));
      for (const c of pkg.contributes.commands as { command: string }[])
        assert.ok(!commands.includes(c.command), `${c.command} is contributed by the extension and must not be a server command`);
      assert.ok(init.capabilities.hoverProvider);
      assert.ok(init.capabilities.codeLensProvider);
      await conn.sendNotification('initialized', {});
      const uri = pathToFileURL(ref).href;
      await conn.sendNotification('textDocument/didOpen', {
        textDocument: { uri, languageId: 'python', version: 1, text: readFileSync(ref, 'utf8') },
      });
      const actions = await conn.sendRequest('textDocument/codeAction', {
        textDocument: { uri },
        range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
        context: { diagnostics: [] },
      }) as { title: string; command: { command: string; arguments: any[] } }[];
      const generate = actions.filter((a) => a.command.command === 'akg.generate');
      // One action per configured target: the targets came from our settings.
      assert.deepEqual(generate.map((a) => `${a.command.arguments[0].backend}/${a.command.arguments[0].dsl}`),
        ['cpu/cpp', 'cuda/triton']);
      assert.equal(generate[0].command.arguments[0].uri, uri);
      assert.ok(configRequests.length <= 1);
      await conn.sendRequest('shutdown');
      await conn.sendNotification('exit');
      assert.equal(await exited, 0, stderr);
    } finally {
      conn.dispose();
      if (child.exitCode === null) child.kill();
      rmSync(tmp, { recursive: true, force: true });
    }
  });
