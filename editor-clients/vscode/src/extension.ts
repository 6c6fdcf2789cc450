// The akg extension: one akg-lsp client per window, palette commands that call
// the server's commands, a status-bar item for running jobs and a report view.
//
// The server registers its own executeCommand ids (akg.generate, akg.cancel,
// ...), which vscode-languageclient turns into VS Code commands for code
// actions and lenses. The palette entries here are therefore named
// akg.client.* and reach the server through workspace/executeCommand.
import * as os from 'node:os';
import * as vscode from 'vscode';
import {
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  State,
} from 'vscode-languageclient/node';

import { JobFinished, JobTracker } from './jobs';
import { ReportPanel } from './reportView';
import { expandPath, PathContext, serverExecutable } from './server';
import { AkgSettings, readSettings, serverSettings, Target, targetLabel } from './settings';

/** What activate() returns; the end-to-end tests use it. */
export interface AkgApi {
  client(): LanguageClient | undefined;
  onJobFinished: vscode.Event<JobFinished>;
  tracker: JobTracker;
}

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
let status: vscode.StatusBarItem;
let reports: ReportPanel;
const tracker = new JobTracker();
const jobFinished = new vscode.EventEmitter<JobFinished>();
let lastReport: string | undefined;

function pathContext(): PathContext {
  return {
    envPath: process.env.PATH,
    home: os.homedir(),
    workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
  };
}

function currentSettings(): AkgSettings {
  const cfg = vscode.workspace.getConfiguration('akg');
  return readSettings(<T>(key: string, fallback: T) => cfg.get<T>(key, fallback));
}

function updateStatus(): void {
  const v = tracker.view();
  status.text = v.text;
  status.tooltip = v.tooltip;
  status.command = tracker.count > 0 ? 'akg.client.cancel' : 'akg.client.showReport';
  if (v.visible) status.show();
  else status.hide();
}

function noteJobAnswer(result: unknown, title: string): void {
  const id = (result as { jobId?: unknown } | null)?.jobId;
  if (typeof id === 'number') {
    tracker.started(id, title);
    updateStatus();
  }
}

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  const settings = currentSettings();
  const ctx = pathContext();
  const exe = serverExecutable(settings, ctx, process.env);
  if (!exe.ok) {
    output.appendLine(exe.message);
    const choice = await vscode.window.showErrorMessage(`akg: ${exe.message}`, 'Open Settings');
    if (choice === 'Open Settings')
      void vscode.commands.executeCommand('workbench.action.openSettings', 'akg.serverPath');
    return;
  }
  const expand = (p: string) => expandPath(p, ctx);
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'python' },
      { scheme: 'file', language: 'sketch' },
    ],
    outputChannel: output,
    initializationOptions: serverSettings(settings, expand),
    synchronize: { configurationSection: 'akg' },
    middleware: {
      workspace: {
        // Answer with the normalised section (targets parsed, paths expanded).
        configuration: (params, token, next) => {
          const items = params.items;
          if (items.every((i) => i.section === 'akg')) return items.map(() => serverSettings(currentSettings(), expand));
          return next(params, token);
        },
      },
      // Jobs started from code actions and lenses go through here too.
      executeCommand: async (command, args, next) => {
        const result = await next(command, args);
        noteJobAnswer(result, command.replace(/^akg\./, ''));
        return result;
      },
    },
  };
  client = new LanguageClient('akg', 'akg', exe.executable, clientOptions);
  client.onDidChangeState((e) => {
    if (e.newState === State.Stopped && tracker.count > 0) {
      for (const id of tracker.ids()) tracker.finished({ id, uri: '', status: 'error' });
      updateStatus();
    }
  });
  try {
    await client.start();
  } catch (e) {
    void vscode.window.showErrorMessage(`akg: the language server did not start: ${(e as Error).message}`);
    return;
  }
  context.subscriptions.push(
    client.onNotification('akg/jobFinished', (n: JobFinished) => void onJobFinished(n)),
    client.onNotification('akg/sketchReady', (n: { id: number; path: string }) =>
      output.appendLine(`akg: job ${n.id}: sketch ready at ${n.path}`)),
  );
}

async function onJobFinished(n: JobFinished): Promise<void> {
  tracker.finished(n);
  updateStatus();
  jobFinished.fire(n);
  const report = n.paths?.report ?? undefined;
  if (report) {
    lastReport = report;
    await reports.refresh(report);
  }
  // The server opens the kernel itself (window/showDocument) when a job
  // passes; failures get a message with a way to the report.
  if (n.status === 'fail' || n.status === 'error') {
    const detail = n.error ? `${n.error.class}: ${n.error.detail}` : n.status;
    const choice = await vscode.window.showWarningMessage(`akg: job ${n.id} ${n.status}: ${detail}`,
      ...(report ? ['Show report'] : []));
    if (choice === 'Show report' && report) await reports.show(report);
  }
}

async function referenceUri(): Promise<vscode.Uri | undefined> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.languageId !== 'python' || editor.document.uri.scheme !== 'file') {
    void vscode.window.showErrorMessage('akg: open a PyTorch reference (a .py file with class Model) first.');
    return undefined;
  }
  // Jobs read the file from disk.
  if (editor.document.isDirty) await editor.document.save();
  return editor.document.uri;
}

// The active .sketch file, saved: the design "Generate from this sketch" lowers.
async function sketchUri(): Promise<vscode.Uri | undefined> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.languageId !== 'sketch' || editor.document.uri.scheme !== 'file') {
    void vscode.window.showErrorMessage('akg: open a .sketch file linked to its reference first.');
    return undefined;
  }
  if (editor.document.isDirty) await editor.document.save();
  return editor.document.uri;
}

async function pickTarget(arg: unknown): Promise<Target | undefined> {
  const targets = currentSettings().targets;
  if (typeof arg === 'string') return targets.find((t) => targetLabel(t) === arg) ?? parseLabel(arg);
  if (targets.length === 1) return targets[0];
  const pick = await vscode.window.showQuickPick(targets.map((t) => ({ label: targetLabel(t), target: t })),
    { placeHolder: 'Target for the kernel' });
  return pick?.target;
}

function parseLabel(label: string): Target | undefined {
  const [backend, dsl, arch] = label.split('/');
  if (!backend || !dsl) return undefined;
  return arch ? { backend, dsl, arch } : { backend, dsl };
}

async function serverCommand(command: string, argument?: object): Promise<unknown> {
  if (!client || !client.isRunning()) {
    void vscode.window.showErrorMessage('akg: the language server is not running (see the akg output).');
    return undefined;
  }
  try {
    return await client.sendRequest(ExecuteCommandRequest.type, {
      command,
      arguments: argument === undefined ? [] : [argument],
    });
  } catch (e) {
    void vscode.window.showErrorMessage(`akg: ${command} failed: ${(e as Error).message}`);
    return undefined;
  }
}

function registerCommands(context: vscode.ExtensionContext): void {
  const reg = (id: string, fn: (...args: unknown[]) => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, fn));

  reg('akg.client.generate', async (arg?: unknown) => {
    const uri = await referenceUri();
    if (!uri) return undefined;
    const target = await pickTarget(arg);
    if (!target) return undefined;
    const result = await serverCommand('akg.generate', { uri: uri.toString(), ...target });
    noteJobAnswer(result, `generate ${targetLabel(target)}`);
    return result;
  });
  reg('akg.client.designSketch', async () => {
    const uri = await referenceUri();
    if (!uri) return undefined;
    const result = await serverCommand('akg.designSketch', { uri: uri.toString() });
    noteJobAnswer(result, 'design');
    return result;
  });
  reg('akg.client.generateFromSketch', async (arg?: unknown) => {
    const uri = await sketchUri();
    if (!uri) return undefined;
    const target = await pickTarget(arg);
    if (!target) return undefined;
    // the server finds the reference from the sketch's link (`# akg: reference ...`)
    const result = await serverCommand('akg.generateFromSketch', { uri: uri.toString(), ...target });
    noteJobAnswer(result, `generate from sketch ${targetLabel(target)}`);
    return result;
  });
  reg('akg.client.verify', async () => {
    const uri = await referenceUri();
    if (!uri) return undefined;
    const result = await serverCommand('akg.verify', { uri: uri.toString() });
    noteJobAnswer(result, 'verify');
    return result;
  });
  reg('akg.client.cancel', async () => {
    const ids = tracker.ids();
    let arg: object = {};
    if (ids.length > 1) {
      const pick = await vscode.window.showQuickPick(['all', ...ids.map(String)], { placeHolder: 'Job to cancel' });
      if (!pick) return undefined;
      if (pick !== 'all') arg = { jobId: Number(pick) };
    }
    return serverCommand('akg.cancel', arg);
  });
  reg('akg.client.openReport', async () => {
    const uri = await referenceUri();
    if (!uri) return undefined;
    const result = (await serverCommand('akg.openReport', { uri: uri.toString() })) as { path?: string } | undefined;
    if (result?.path) {
      lastReport = result.path;
      await reports.show(result.path);
    }
    return result;
  });
  reg('akg.client.showReport', async () => {
    if (lastReport) return reports.show(lastReport);
    const picked = await vscode.window.showOpenDialog({ filters: { 'akg report': ['json'] }, canSelectMany: false });
    if (picked?.[0]) return reports.show(picked[0].fsPath);
    return undefined;
  });
  reg('akg.client.restartServer', async () => {
    if (client) {
      await client.stop().catch(() => undefined);
      client = undefined;
    }
    await startClient(context);
  });
}

export async function activate(context: vscode.ExtensionContext): Promise<AkgApi> {
  output = vscode.window.createOutputChannel('akg');
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
  reports = new ReportPanel();
  context.subscriptions.push(output, status, reports, jobFinished);
  registerCommands(context);
  context.subscriptions.push(vscode.workspace.onDidChangeConfiguration(async (e) => {
    if (e.affectsConfiguration('akg.serverPath') || e.affectsConfiguration('akg.serverArgs')) {
      const choice = await vscode.window.showInformationMessage(
        'akg: the server path changed; restart the language server?', 'Restart');
      if (choice === 'Restart') await vscode.commands.executeCommand('akg.client.restartServer');
    }
  }));
  await startClient(context);
  return { client: () => client, onJobFinished: jobFinished.event, tracker };
}

export async function deactivate(): Promise<void> {
  if (client) await client.stop();
  client = undefined;
}
