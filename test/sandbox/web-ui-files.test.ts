import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { RepositorySandbox } from '../../sandbox/repository/server.js';

/** `/nuxeo/ui/`: a folder served to signed-in users as Nuxeo serves Web UI's files, and nothing outside it. */
t.test('Web UI files: to a signed-in user, by type; nothing outside the folder', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'c2e-ui-'));
  writeFileSync(join(dir, 'index.html'), '<p>hello</p>');
  writeFileSync(join(dir, 'data.bin'), Buffer.from([1, 2]));
  const sandbox = new RepositorySandbox({ webUiDir: dir });
  const base = await sandbox.start();
  t.teardown(() => sandbox.stop());
  const auth = { authorization: `Basic ${Buffer.from('Administrator:Administrator').toString('base64')}` };
  const get = (path: string, headers: Record<string, string> = auth): Promise<Response> =>
    fetch(`${base}/ui/${path}`, { headers });

  const index = await get('');
  t.equal(index.status, 200);
  t.equal(index.headers.get('content-type'), 'text/html; charset=utf-8');
  t.equal(await index.text(), '<p>hello</p>');
  t.equal((await get('data.bin')).headers.get('content-type'), 'application/octet-stream');
  t.equal((await get('missing.js')).status, 404);
  t.equal((await get('..%2F..%2Fetc%2Fpasswd')).status, 404, 'a path out of the folder');
  t.equal((await get('index.html', {})).status, 401, 'not signed in');
});
