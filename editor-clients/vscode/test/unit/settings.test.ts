import { test } from 'node:test';
import assert from 'node:assert/strict';

import { objectGetter, parseTarget, parseTargets, readSettings, serverEnvironment, serverSettings } from '../../src/settings';

test('parseTarget reads "backend/dsl[/arch]" and objects, like the server', () => {
  assert.deepEqual(parseTarget('cpu/cpp'), { backend: 'cpu', dsl: 'cpp' });
  assert.deepEqual(parseTarget('cuda/triton/a100'), { backend: 'cuda', dsl: 'triton', arch: 'a100' });
  assert.deepEqual(parseTarget({ backend: 'cuda', dsl: 'cuda_c', arch: 'h100' }), { backend: 'cuda', dsl: 'cuda_c', arch: 'h100' });
  assert.deepEqual(parseTarget({ backend: 'cpu', dsl: 'cpp', arch: null }), { backend: 'cpu', dsl: 'cpp' });
  for (const bad of ['cpu', 'cpu/', '/cpp', 'a/b/c/d', 'cpu/c pp', 'cpu/../x', 42, null, [], { backend: 'cpu' }, { backend: 'cpu', dsl: 3 }])
    assert.equal(parseTarget(bad), undefined, JSON.stringify(bad));
});

test('parseTargets keeps the good entries, reports the rest, never ends empty', () => {
  const r = parseTargets(['cpu/cpp', 'nope', { backend: 'cuda', dsl: 'triton' }]);
  assert.deepEqual(r.targets, [{ backend: 'cpu', dsl: 'cpp' }, { backend: 'cuda', dsl: 'triton' }]);
  assert.deepEqual(r.rejected, ['"nope"']);
  assert.deepEqual(parseTargets([]).targets, [{ backend: 'cpu', dsl: 'cpp' }]);
  assert.deepEqual(parseTargets('cpu/cpp').targets, [{ backend: 'cpu', dsl: 'cpp' }]);
});

test('readSettings applies defaults and drops values of the wrong type', () => {
  const d = readSettings(objectGetter({}));
  assert.deepEqual(d.targets, [{ backend: 'cpu', dsl: 'cpp' }]);
  assert.equal(d.provider, 'builtin');
  assert.equal(d.devices, 0);
  assert.equal(d.trace, 'off');
  assert.equal(d.serverPath, '');
  const s = readSettings(objectGetter({
    targets: ['cuda/triton/a100'], provider: ' builtin ', devices: 2, maxJobs: -1, serverPath: '~/bin/akg-lsp',
    serverArgs: ['--log', '/tmp/x', 3], python: '/usr/bin/python3', storePath: '', autoProbe: 'yes',
    trace: { server: 'verbose' },
  }));
  assert.deepEqual(s.targets, [{ backend: 'cuda', dsl: 'triton', arch: 'a100' }]);
  assert.equal(s.provider, 'builtin', 'surrounding spaces are trimmed');
  assert.equal(s.devices, 2);
  assert.equal(s.maxJobs, 0, 'a negative count falls back to the default');
  assert.deepEqual(s.serverArgs, ['--log', '/tmp/x']);
  assert.equal(s.autoProbe, false, 'only a real boolean turns autoProbe on');
  assert.equal(s.trace, 'verbose');
});

test('serverSettings is what the server reads: empty paths left out, paths expanded', () => {
  const s = readSettings(objectGetter({ targets: ['cpu/cpp', 'cuda/triton'], python: '~/venv/bin/python', devices: 4 }));
  const out = serverSettings(s, (p) => p.replace(/^~/, '/home/u'));
  assert.deepEqual(out, {
    targets: [{ backend: 'cpu', dsl: 'cpp' }, { backend: 'cuda', dsl: 'triton' }],
    provider: 'builtin', devices: 4, maxJobs: 0, autoProbe: false, trace: 'off',
    python: '/home/u/venv/bin/python',
  });
  assert.equal('storePath' in out, false);
  assert.equal('serverPath' in out, false, 'the client-only keys stay in the client');
});

test('serverEnvironment adds AKG_PYTHON / AKG_STORE only when configured', () => {
  const base = { PATH: '/usr/bin', HOME: '/home/u', AKG_PYTHON: '/opt/py', GONE: undefined };
  const plain = serverEnvironment(readSettings(objectGetter({})), base);
  assert.deepEqual(plain, { PATH: '/usr/bin', HOME: '/home/u', AKG_PYTHON: '/opt/py' });
  const set = serverEnvironment(readSettings(objectGetter({ python: '/usr/bin/python3', storePath: '~/s.db' })), base,
    (p) => p.replace(/^~/, '/home/u'));
  assert.equal(set.AKG_PYTHON, '/usr/bin/python3');
  assert.equal(set.AKG_STORE, '/home/u/s.db');
  assert.equal(base.AKG_PYTHON, '/opt/py', 'the base environment is not modified');
});
