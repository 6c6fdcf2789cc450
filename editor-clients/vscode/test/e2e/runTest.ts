// End-to-end test in a real VS Code (run on a developer machine: it downloads
// VS Code through @vscode/test-electron, or uses VSCODE_EXECUTABLE).
//
//   npm run build && AKG_LSP=/path/to/akg-lsp npm run test:e2e
//
// It opens a temporary workspace holding a copy of tests/fixtures/refs/relu.py
// with the extension under development and runs ./suite.
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runTests } from '@vscode/test-electron';

async function main(): Promise<void> {
  const extensionDevelopmentPath = path.resolve(__dirname, '..', '..', '..');
  const extensionTestsPath = path.resolve(__dirname, 'suite', 'index');
  const repo = path.resolve(extensionDevelopmentPath, '..', '..');
  const server = process.env.AKG_LSP ?? path.join(repo, 'build', 'lsp-server', 'akg-lsp');
  const ws = mkdtempSync(path.join(tmpdir(), 'akg-vscode-e2e-'));
  mkdirSync(path.join(ws, '.vscode'));
  copyFileSync(path.join(repo, 'tests', 'fixtures', 'refs', 'relu.py'), path.join(ws, 'relu.py'));
  writeFileSync(path.join(ws, '.vscode', 'settings.json'), JSON.stringify({
    'akg.serverPath': server,
    'akg.targets': ['cpu/cpp'],
    'akg.python': process.env.AKG_PYTHON ?? '',
    'akg.storePath': path.join(ws, '.akg-store.db'),
  }, null, 2));
  await runTests({
    extensionDevelopmentPath,
    extensionTestsPath,
    vscodeExecutablePath: process.env.VSCODE_EXECUTABLE || undefined,
    launchArgs: [ws, '--disable-extensions', '--skip-welcome', '--skip-release-notes'],
    extensionTestsEnv: { AKG_E2E_WORKSPACE: ws, AKG_HOME: process.env.AKG_HOME ?? repo },
  });
}

main().catch((err) => {
  console.error('akg e2e test failed:', err);
  process.exit(1);
});
