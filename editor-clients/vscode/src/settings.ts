// The `akg` settings section and what the language server receives from it.
// Pure logic (no `vscode` import) so unit tests run under plain node.

export interface Target {
  backend: string;
  dsl: string;
  arch?: string;
}

export interface AkgSettings {
  targets: Target[];
  provider: string;
  devices: number;
  maxJobs: number;
  serverPath: string;
  serverArgs: string[];
  python: string;
  storePath: string;
  autoProbe: boolean;
  trace: 'off' | 'messages' | 'verbose';
}

/** The server's initializationOptions / workspace/configuration answer. */
export interface ServerSettings {
  targets: Target[];
  provider: string;
  devices: number;
  maxJobs: number;
  python?: string;
  storePath?: string;
  autoProbe: boolean;
  trace: string;
}

/** Reads one key with a default, as vscode.WorkspaceConfiguration.get does. */
export type SettingGetter = <T>(key: string, fallback: T) => T;

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** "cpu/cpp", "cuda/triton/a100" or {backend, dsl, arch?}; undefined when malformed
 * (the server applies the same rule and ignores such entries). */
export function parseTarget(value: unknown): Target | undefined {
  let backend: unknown, dsl: unknown, arch: unknown;
  if (typeof value === 'string') {
    const parts = value.split('/');
    if (parts.length < 2 || parts.length > 3) return undefined;
    [backend, dsl, arch] = parts;
  } else if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    backend = o.backend;
    dsl = o.dsl;
    arch = o.arch === null ? undefined : o.arch;
  } else {
    return undefined;
  }
  if (typeof backend !== 'string' || !NAME.test(backend)) return undefined;
  if (typeof dsl !== 'string' || !NAME.test(dsl)) return undefined;
  if (arch !== undefined && (typeof arch !== 'string' || !NAME.test(arch))) return undefined;
  const t: Target = { backend, dsl };
  if (arch !== undefined) t.arch = arch as string;
  return t;
}

export function targetLabel(t: Target): string {
  return t.arch ? `${t.backend}/${t.dsl}/${t.arch}` : `${t.backend}/${t.dsl}`;
}

/** Parses a target list; malformed entries go to `rejected` so the UI can say so. */
export function parseTargets(raw: unknown): { targets: Target[]; rejected: string[] } {
  const targets: Target[] = [];
  const rejected: string[] = [];
  if (!Array.isArray(raw)) return { targets: [{ backend: 'cpu', dsl: 'cpp' }], rejected };
  for (const item of raw) {
    const t = parseTarget(item);
    if (t) targets.push(t);
    else rejected.push(JSON.stringify(item));
  }
  if (targets.length === 0) targets.push({ backend: 'cpu', dsl: 'cpp' });
  return { targets, rejected };
}

function str(v: unknown, fallback: string): string {
  return typeof v === 'string' ? v.trim() : fallback;
}

function count(v: unknown): number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 64 ? v : 0;
}

/** Reads the `akg` section through a getter (WorkspaceConfiguration.get in the
 * extension, a plain object in tests). */
export function readSettings(get: SettingGetter): AkgSettings {
  const trace = str(get<unknown>('trace.server', 'off'), 'off');
  const args = get<unknown>('serverArgs', []);
  return {
    targets: parseTargets(get<unknown>('targets', ['cpu/cpp'])).targets,
    provider: str(get<unknown>('provider', 'builtin'), 'builtin') || 'builtin',
    devices: count(get<unknown>('devices', 0)),
    maxJobs: count(get<unknown>('maxJobs', 0)),
    serverPath: str(get<unknown>('serverPath', ''), ''),
    serverArgs: Array.isArray(args) ? args.filter((a): a is string => typeof a === 'string') : [],
    python: str(get<unknown>('python', ''), ''),
    storePath: str(get<unknown>('storePath', ''), ''),
    autoProbe: get<unknown>('autoProbe', false) === true,
    trace: trace === 'messages' || trace === 'verbose' ? trace : 'off',
  };
}

/** A getter over a plain object with dotted keys ("trace.server"). */
export function objectGetter(obj: Record<string, unknown>): SettingGetter {
  return <T>(key: string, fallback: T): T => {
    let cur: unknown = obj;
    for (const part of key.split('.')) {
      if (cur === null || typeof cur !== 'object' || !(part in (cur as object))) return fallback;
      cur = (cur as Record<string, unknown>)[part];
    }
    return cur === undefined ? fallback : (cur as T);
  };
}

/** What the server reads as its `akg` section. Paths are expanded by the
 * caller (expand), empty strings are left out so the server keeps its defaults. */
export function serverSettings(s: AkgSettings, expand: (p: string) => string = (p) => p): ServerSettings {
  const out: ServerSettings = {
    targets: s.targets.map((t) => ({ ...t })),
    provider: s.provider,
    devices: s.devices,
    maxJobs: s.maxJobs,
    autoProbe: s.autoProbe,
    trace: s.trace,
  };
  if (s.python) out.python = expand(s.python);
  if (s.storePath) out.storePath = expand(s.storePath);
  return out;
}

/** The server process's environment: the editor's, plus AKG_PYTHON / AKG_STORE
 * when configured (the server reads these before any settings arrive). */
export function serverEnvironment(
  s: AkgSettings,
  base: Record<string, string | undefined>,
  expand: (p: string) => string = (p) => p,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) env[k] = v;
  if (s.python) env.AKG_PYTHON = expand(s.python);
  if (s.storePath) env.AKG_STORE = expand(s.storePath);
  return env;
}
