import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

import { expandPath, isExecutableFile, resolveServerPath, serverExecutable } from '../../src/server';
import { objectGetter, readSettings } from '../../src/settings';

function fakeTree() {
  const root = mkdtempSync(path.join(tmpdir(), 'akg-vscode-path-'));
  const bin1 = path.join(root, 'bin1');
  const bin2 = path.join(root, 'bin2');
  mkdirSync(bin1);
  mkdirSync(bin2);
  // bin1 holds a non-executable akg-lsp, bin2 a real one: PATH order must not
  // pick the first name that merely exists.
  writeFileSync(path.join(bin1, 'akg-lsp'), '#!/bin/sh\n');
  chmodSync(path.join(bin1, 'akg-lsp'), 0o644);
  writeFileSync(path.join(bin2, 'akg-lsp'), '#!/bin/sh\n');
  chmodSync(path.join(bin2, 'akg-lsp'), 0o755);
  mkdirSync(path.join(root, 'ws', 'build'), { recursive: true });
  writeFileSync(path.join(root, 'ws', 'build', 'akg-lsp'), '#!/bin/sh\n');
  chmodSync(path.join(root, 'ws', 'build', 'akg-lsp'), 0o755);
  return { root, bin1, bin2, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

test('expandPath: ~, ${userHome}, ${workspaceFolder}, relative to the workspace', () => {
  const ctx = { home: '/home/u', workspaceFolder: '/w' };
  assert.equal(expandPath('~/bin/akg-lsp', ctx), '/home/u/bin/akg-lsp');
  assert.equal(expandPath('~', ctx), '/home/u');
  assert.equal(expandPath('${userHome}/x', ctx), '/home/u/x');
  assert.equal(expandPath('${workspaceFolder}/build/akg-lsp', ctx), '/w/build/akg-lsp');
  assert.equal(expandPath('build/akg-lsp', ctx), '/w/build/akg-lsp');
  assert.equal(expandPath('akg-lsp', ctx), 'akg-lsp', 'a bare name stays a name (looked up on PATH)');
  assert.equal(expandPath('/abs/akg-lsp', ctx), '/abs/akg-lsp');
});

test('resolveServerPath finds the first executable akg-lsp on PATH', () => {
  const t = fakeTree();
  try {
    const r = resolveServerPath('', { envPath: [t.bin1, t.bin2].join(path.delimiter), home: t.root });
    assert.deepEqual(r, { ok: true, path: path.join(t.bin2, 'akg-lsp') });
    assert.equal(isExecutableFile(path.join(t.bin1, 'akg-lsp')), false);
  } finally {
    t.cleanup();
  }
});

test('resolveServerPath prefers the configured path and explains a bad one', () => {
  const t = fakeTree();
  try {
    const ctx = { envPath: t.bin2, home: t.root, workspaceFolder: path.join(t.root, 'ws') };
    assert.deepEqual(resolveServerPath('${workspaceFolder}/build/akg-lsp', ctx),
      { ok: true, path: path.join(t.root, 'ws', 'build', 'akg-lsp') });
    assert.deepEqual(resolveServerPath('build/akg-lsp', ctx), { ok: true, path: path.join(t.root, 'ws', 'build', 'akg-lsp') });
    const bad = resolveServerPath(path.join(t.bin1, 'akg-lsp'), ctx);
    assert.equal(bad.ok, false);
    assert.match((bad as { message: string }).message, /akg\.serverPath .* is not an executable file/);
    const dir = resolveServerPath(t.bin2, ctx);
    assert.equal(dir.ok, false, 'a folder is not a server');
  } finally {
    t.cleanup();
  }
});

test('resolveServerPath says how to fix a missing server', () => {
  const r = resolveServerPath('', { envPath: '/nonexistent-a:/nonexistent-b', home: '/home/u' });
  assert.equal(r.ok, false);
  const msg = (r as { message: string }).message;
  assert.match(msg, /akg-lsp was not found on PATH/);
  assert.match(msg, /akg\.serverPath/);
  const empty = resolveServerPath('', { envPath: undefined, home: '/home/u', isExecutable: () => true });
  assert.equal(empty.ok, false, 'no PATH: nothing to search');
});

test('serverExecutable: stdio transport, arguments, environment and cwd from the settings', () => {
  const t = fakeTree();
  try {
    const s = readSettings(objectGetter({ serverPath: path.join(t.bin2, 'akg-lsp'), serverArgs: ['--log', 'x.log'],
      python: '/usr/bin/python3' }));
    const r = serverExecutable(s, { envPath: '', home: t.root, workspaceFolder: '/w' }, { PATH: '/usr/bin' });
    assert.equal(r.ok, true);
    const exe = (r as { executable: import('../../src/server').ServerExecutable }).executable;
    assert.equal(exe.command, path.join(t.bin2, 'akg-lsp'));
    assert.deepEqual(exe.args, ['--log', 'x.log']);
    assert.equal(exe.transport, 0, 'TransportKind.stdio');
    assert.equal(exe.options.cwd, '/w');
    assert.equal(exe.options.env.AKG_PYTHON, '/usr/bin/python3');
    assert.equal(exe.options.env.PATH, '/usr/bin');
    const missing = serverExecutable(readSettings(objectGetter({})), { envPath: '', home: t.root }, {});
    assert.equal(missing.ok, false);
  } finally {
    t.cleanup();
  }
});
