// Finding akg-lsp and describing how to start it. Pure logic plus
// child_process (no `vscode` import): the extension hands `serverExecutable`'s
// result to vscode-languageclient, and the unit tests start the real binary
// through `spawnServer`, which launches it the way the client does.
import { spawn, ChildProcessWithoutNullStreams } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import * as path from 'node:path';

import { AkgSettings, serverEnvironment } from './settings';

export const SERVER_NAME = 'akg-lsp';

export interface PathContext {
  /** PATH of the editor's environment. */
  envPath: string | undefined;
  home: string;
  /** First workspace folder, for ${workspaceFolder}. */
  workspaceFolder?: string;
  /** Replaceable for tests; defaults to a real file check. */
  isExecutable?: (p: string) => boolean;
}

export type Resolution = { ok: true; path: string } | { ok: false; message: string };

export function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Expands a leading ~ and ${workspaceFolder}/${userHome}; relative paths are
 * taken from the workspace folder when there is one. */
export function expandPath(p: string, ctx: Pick<PathContext, 'home' | 'workspaceFolder'>): string {
  let out = p.trim();
  if (out === '~') out = ctx.home;
  else if (out.startsWith('~/')) out = path.join(ctx.home, out.slice(2));
  out = out.replace(/\$\{userHome\}/g, ctx.home);
  if (ctx.workspaceFolder) out = out.replace(/\$\{workspaceFolder\}/g, ctx.workspaceFolder);
  if (!path.isAbsolute(out) && out.includes('/') && ctx.workspaceFolder)
    out = path.join(ctx.workspaceFolder, out);
  return out;
}

/** The configured akg.serverPath when set (it must be executable), otherwise
 * akg-lsp on PATH. The failure message says what to do. */
export function resolveServerPath(configured: string, ctx: PathContext): Resolution {
  const isExec = ctx.isExecutable ?? isExecutableFile;
  if (configured.trim()) {
    const p = expandPath(configured, ctx);
    if (!p.includes('/')) return searchPath(p, ctx.envPath, isExec, `akg.serverPath is "${configured}"`);
    if (isExec(p)) return { ok: true, path: p };
    return {
      ok: false,
      message: `akg.serverPath is "${configured}", but ${p} is not an executable file. ` +
        'Point the setting at the akg-lsp binary (build/lsp-server/akg-lsp after building akg).',
    };
  }
  return searchPath(SERVER_NAME, ctx.envPath, isExec, 'akg.serverPath is not set');
}

function searchPath(name: string, envPath: string | undefined, isExec: (p: string) => boolean,
                    why: string): Resolution {
  for (const dir of (envPath ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExec(candidate)) return { ok: true, path: candidate };
  }
  return {
    ok: false,
    message: `${name} was not found on PATH (${why}). Build akg (cmake --build build), then put ` +
      'build/lsp-server on PATH or set "akg.serverPath" to the akg-lsp binary.',
  };
}

/** vscode-languageclient's Executable, structurally (TransportKind.stdio is 0). */
export interface ServerExecutable {
  command: string;
  args: string[];
  transport: 0;
  options: { env: Record<string, string>; cwd?: string };
}

export type ExecutableResult = { ok: true; executable: ServerExecutable } | { ok: false; message: string };

/** Everything the client needs to start the server, from the settings. */
export function serverExecutable(s: AkgSettings, ctx: PathContext,
                                 baseEnv: Record<string, string | undefined>): ExecutableResult {
  const found = resolveServerPath(s.serverPath, ctx);
  if (!found.ok) return found;
  const expand = (p: string) => expandPath(p, ctx);
  const options: ServerExecutable['options'] = { env: serverEnvironment(s, baseEnv, expand) };
  if (ctx.workspaceFolder) options.cwd = ctx.workspaceFolder;
  return {
    ok: true,
    executable: { command: found.path, args: [...s.serverArgs], transport: 0, options },
  };
}

/** Starts the server the way vscode-languageclient does for a stdio
 * Executable: the configured arguments plus --stdio, pipes on all three fds.
 * The caller owns the child and must end it. */
export function spawnServer(exe: ServerExecutable): ChildProcessWithoutNullStreams {
  return spawn(exe.command, [...exe.args, '--stdio'], { ...exe.options, stdio: 'pipe' });
}
