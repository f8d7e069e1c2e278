import t from 'tap';
import got from 'got';
import { RepositorySandbox } from '../../sandbox/repository/server.js';
import { NO_BLOBS } from '../../sandbox/repository/store.js';
import { nxqlString } from '../../src/nxql/literal.js';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox } from '../../sandbox/start.js';
import { loadSandboxSettings } from '../../sandbox/settings.js';

const ADMIN = { username: 'Administrator', password: 'Administrator' };

t.test("the sandbox keeps the real server's traps", async (t) => {
  const sandbox = new RepositorySandbox({
    users: { jdoe: { password: 'jdoe', groups: ['members'] }, eve: { password: 'eve', groups: [] } },
  });
  const base = await sandbox.start();
  t.teardown(() => sandbox.stop());
  const api = got.extend({
    prefixUrl: `${base}/api/v1`,
    ...ADMIN,
    responseType: 'json',
    throwHttpErrors: false,
    headers: { properties: '*' },
  });
  const ws = '/default-domain/workspaces';
  const create = async (name: string, type = 'File', properties: Record<string, unknown> = {}) =>
    (await api.post(`path${ws}`, { json: { 'entity-type': 'document', type, name, properties } }))
      .body as unknown as Record<string, any>;

  const long = await create('a-name-that-is-longer-than-twenty-four.pdf');
  t.equal(long.path, `${ws}/a-name-that-is-longer-th`, 'names are cut to 24 characters');
  const twin = await create('a-name-that-is-longer-than-twenty-four.pdf');
  t.match(twin.path, /\/a-name-that-is-longer-th\.\d+$/, 'a clash appends .<millis>, no 409');

  const dropped = await api.put(`id/${long.uid}`, {
    json: { properties: { 'erpHttpContent:docId': 'x', 'dc:description': 'kept' } },
  });
  t.equal(dropped.statusCode, 200, 'PUT of a property whose facet is missing still answers 200');
  t.equal((dropped.body as any).properties['dc:description'], 'kept');
  t.notOk('erpHttpContent:docId' in (dropped.body as any).properties, '…and the property is silently dropped');

  const stale = await api.put(`id/${long.uid}`, {
    json: { changeToken: '9999-1234', properties: { 'dc:title': 'x' } },
  });
  t.equal(stale.statusCode, 409);
  t.equal((stale.body as any).message, `${long.uid}, Invalid change token`);

  const noProps = await got(`${base}/api/v1/id/${long.uid}`, { ...ADMIN }).json<Record<string, unknown>>();
  t.notOk('properties' in noProps, 'no properties header, no properties key');

  await create("it's \\ quoted", 'File', { 'dc:title': "it's \\ quoted" });
  const quoted = await api.get('search/execute', {
    searchParams: { query: `SELECT * FROM File WHERE dc:title = ${nxqlString("it's \\ quoted")}`, pageSize: 10 },
  });
  t.equal((quoted.body as any).resultsCount, 1, 'backslash escaping finds the document');
  const doubled = await api.get('search/execute', {
    searchParams: { query: "SELECT * FROM File WHERE dc:title = 'it''s'", pageSize: 10 },
  });
  t.equal(doubled.statusCode, 400, "SQL-style '' is a parse error");
  t.match((doubled.body as any).message, /Failed to execute query/);

  const self = await api.get('search/execute', {
    searchParams: { query: `SELECT * FROM Document WHERE ecm:path STARTSWITH '${ws}'`, pageSize: 50 },
  });
  t.notOk(
    (self.body as any).entries.some((d: any) => d.path === ws),
    'STARTSWITH excludes the path itself',
  );

  for (let i = 0; i < 1005; i++)
    sandbox.store.create(
      sandbox.actor(),
      sandbox.store.getByPath(ws)!,
      { type: 'Note', name: `n${i}`, properties: {} },
      NO_BLOBS,
    );
  const capped = await api.get('search/execute', { searchParams: { query: 'SELECT * FROM Note' } });
  t.equal((capped.body as any).entries.length, 1000, 'without pageSize the search stops at 1000');
  t.equal((capped.body as any).isNextPageAvailable, false, '…and says there is no next page');
  const sorted = await api.get('search/execute', {
    searchParams: { query: 'SELECT * FROM Note', pageSize: 2, sortBy: 'ecm:name' },
  });
  t.same(
    (sorted.body as any).entries.map((d: any) => d.path.split('/').pop()),
    ['n999', 'n998'],
    'sortBy without sortOrder sorts descending',
  );

  const unknown = await api.post(`id/${long.uid}/@op/Document.AddFacet`, { json: { params: { facet: 'nope' } } });
  t.equal(unknown.statusCode, 500, 'unknown facet is a 500');
  t.equal((unknown.body as any).message, 'Internal Server Error');

  const anonymous = await got(`${base}/api/v1/path${ws}`, { throwHttpErrors: false });
  t.equal(anonymous.statusCode, 401);
  t.equal(anonymous.headers['www-authenticate'], 'Basic realm="Nuxeo Automation"');

  const admin = await create('private', 'Folder');
  await api.post(`id/${admin.uid}/@op/Document.BlockPermissionInheritance`, { json: { params: {} } });
  const secret = (
    await api.post(`id/${admin.uid}`, { json: { 'entity-type': 'document', type: 'File', name: 'secret' } })
  ).body as unknown as any;
  const asUser = got.extend({
    prefixUrl: `${base}/api/v1`,
    username: 'jdoe',
    password: 'jdoe',
    throwHttpErrors: false,
    responseType: 'json',
  });
  t.equal((await asUser.get(`id/${secret.uid}`)).statusCode, 403, 'a blocked folder cannot be read by members');
  t.equal((await asUser.get(`id/${long.uid}`)).statusCode, 200, 'members read the workspaces');
  t.equal(
    (await asUser.put(`id/${long.uid}`, { json: { properties: { 'dc:title': 'x' } } })).statusCode,
    403,
    'but cannot write',
  );
  const found = await asUser.get('search/execute', {
    searchParams: { query: "SELECT * FROM File WHERE ecm:name = 'secret'", pageSize: 10 },
  });
  t.equal((found.body as any).resultsCount, 0, 'search results are filtered by permission');
  const eve = got.extend({ prefixUrl: `${base}/api/v1`, username: 'eve', password: 'eve', throwHttpErrors: false });
  t.equal((await eve.get(`id/${long.uid}`)).statusCode, 403, 'a user in no group reads nothing');
});

t.test('state persists in the data directory', async (t) => {
  const dir = t.testdir();
  const first = new RepositorySandbox({ dataDir: dir });
  const base = await first.start();
  const created = await got
    .post(`${base}/api/v1/path/default-domain/workspaces`, {
      ...ADMIN,
      json: { 'entity-type': 'document', type: 'File', name: 'kept', properties: { 'dc:title': 'Kept' } },
    })
    .json<{ uid: string }>();
  // A user the set-up script makes (POST /user) is kept as Nuxeo keeps it in its user directory.
  await got.post(`${base}/api/v1/user`, {
    ...ADMIN,
    json: {
      'entity-type': 'user',
      id: 'connect2erp',
      properties: { username: 'connect2erp', password: 'job', groups: [] },
    },
  });
  await first.stop();
  const second = new RepositorySandbox({ dataDir: dir });
  const again = await second.start();
  t.teardown(() => second.stop());
  const doc = await got(`${again}/api/v1/id/${created.uid}`, { ...ADMIN, headers: { properties: 'dublincore' } }).json<{
    path: string;
    properties: Record<string, unknown>;
  }>();
  t.equal(doc.path, '/default-domain/workspaces/kept');
  t.equal(doc.properties['dc:title'], 'Kept');
  const me = await got(`${again}/api/v1/me`, { username: 'connect2erp', password: 'job', throwHttpErrors: false });
  t.equal(me.statusCode, 200, 'the user made before the restart signs in after it');
});

t.test('deletions persist too, and the journal is compacted at start', async (t) => {
  const dir = t.testdir();
  const first = new RepositorySandbox({ dataDir: dir });
  await first.start();
  const actor = first.actor();
  const ws = first.store.getByPath('/default-domain/workspaces')!;
  const kept = first.store.create(actor, ws, { type: 'Note', name: 'kept', properties: {} }, NO_BLOBS);
  const gone = first.store.create(actor, ws, { type: 'Note', name: 'gone', properties: {} }, NO_BLOBS);
  first.store.update(actor, first.store.get(kept.uid)!, { 'dc:title': 'v2' }, NO_BLOBS, {});
  first.store.remove(actor, first.store.get(gone.uid)!);
  await first.stop();
  const second = new RepositorySandbox({ dataDir: dir });
  await second.start();
  t.teardown(() => second.stop());
  t.equal(second.store.get(gone.uid), undefined, 'a removed document stays removed');
  t.equal(second.store.get(kept.uid)?.properties['dc:title'], 'v2', 'the last version of a document wins');
  const lines = readFileSync(join(dir, 'journal.jsonl'), 'utf8').trim().split('\n');
  t.equal(lines.filter((l) => l.includes(kept.uid)).length, 1, 'one line per live document after compaction');
});

t.test('the sandbox command keeps state in memory when no folder is given', async (t) => {
  const printed: string[] = [];
  let stop = (): void => undefined;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  let started = (): void => undefined;
  const ready = new Promise<void>((resolve) => (started = resolve));
  const empty = join(mkdtempSync(join(tmpdir(), 'c2e-settings-')), 'faults.yaml');
  writeFileSync(empty, '');
  t.same(loadSandboxSettings(empty), loadSandboxSettings(undefined), 'an empty settings file: the defaults');
  const running = startSandbox(
    { port: 0, erpPort: 0, settings: loadSandboxSettings(empty) },
    (line) => printed.push(line) === 3 && started(),
    stopped,
  );
  await ready;
  t.match(printed[0], /^repository sandbox: http:\/\/127\.0\.0\.1:\d+\/nuxeo/);
  t.match(printed[1], /^ERP sandbox: http:\/\/127\.0\.0\.1:\d+\/sap\/bc\/soap\/rfc/);
  t.equal(printed[2], 'state kept in memory (use --data DIR to keep it)');
  stop();
  await running;
});
