import { test } from 'node:test';
import assert from 'node:assert/strict';

import { JobTracker } from '../../src/jobs';

test('the status bar follows jobs from start to end', () => {
  const t = new JobTracker();
  assert.equal(t.view().visible, false);
  t.started(1, 'generate cpu/cpp');
  assert.equal(t.count, 1);
  assert.match(t.view().text, /sync~spin.*generate cpu\/cpp/);
  t.started(2, 'design');
  t.started(2, 'design');
  assert.match(t.view().text, /akg: 2 jobs/);
  assert.deepEqual(t.ids(), [1, 2]);
  t.finished({ id: 2, uri: 'file:///w/relu.py', status: 'cancelled' });
  t.finished({ id: 1, uri: 'file:///w/my%20relu.py', status: 'pass', speedup: 3.14159 });
  assert.equal(t.count, 0);
  const v = t.view();
  assert.equal(v.text, '$(check) akg: my relu.py pass 3.14x');
  assert.equal(v.visible, true);
  t.finished({ id: 3, uri: 'file:///w/bad.py', status: 'fail', error: { class: 'runtime_error', detail: 'boom' } });
  assert.match(t.view().text, /\$\(error\) akg: bad\.py fail$/);
  assert.equal(t.view().tooltip, 'runtime_error: boom');
});
