import t, { type Test } from 'tap';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingHttpHeaders } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Writable } from 'node:stream';
import winston from 'winston';
import { storageSchema } from '../src/config/storage-schema.js';
import {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  NotServedError,
  PermanentError,
  TransientError,
  UntrustedServerError,
} from '../common/errors.js';
import { FOLDER_CHAIN, RepositoryClient, PropertiesDroppedError } from '../src/repository/client.js';
import { shardCondition } from '../src/job/shard.js';
import { drain, eachPage, pagesAtOnce } from '../src/repository/pager.js';
import { featureRegistry } from '../common/nuxeo/schemas.js';
import { RepositorySandbox } from '../sandbox/repository/server.js';
import { NO_BLOBS } from '../sandbox/repository/store.js';
import { trickleServer } from './helpers/trickle.js';
import { AnswerTooLargeError } from '../src/repository/transport.js';
import { ANSWER_MAX_BYTES } from '../src/bounded-body.js';

// Every request over real HTTP: 7 s idle, several times that on a busy machine.
t.setTimeout(120_000);

const WS = '/default-domain/workspaces';

/** A logger whose lines the test can read. */
function capturingLog(): { log: winston.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write: (chunk, _enc, done) => {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return {
    log: winston.createLogger({
      format: winston.format.json(),
      transports: [new winston.transports.Stream({ stream })],
    }),
    lines,
  };
}

async function setUp(t: Test, storage: Record<string, unknown> = {}, refusedChains?: string[]) {
  const sandbox = new RepositorySandbox({ users: { jdoe: { password: 'jdoe', groups: ['members'] } }, refusedChains });
  const url = await sandbox.start();
  t.teardown(() => sandbox.stop());
  const config = storageSchema.parse({
    url,
    adminPath: '/default-domain/workspaces/admin',
    retryDelayMs: 5,
    auth: { type: 'basic', username: 'Administrator', password: 'Administrator' },
    ...storage,
  });
  const { log, lines } = capturingLog();
  return {
    sandbox,
    url,
    client: new RepositoryClient(config, log),
    lines,
    configFor: (extra: Record<string, unknown>) => storageSchema.parse({ ...config, ...extra }),
    log,
  };
}

t.test('transient failures are retried with back-off, and logged', async (t) => {
  const { sandbox, client, lines } = await setUp(t);
  sandbox.faults.add({ method: 'GET', path: '/path/default-domain', status: 503, times: 2 });
  const doc = await client.getByPath('/default-domain');
  t.equal(doc.path, '/default-domain', 'succeeds on the third try');
  t.match(
    lines.filter((l) => l.message === 'repository request retried'),
    [{ tries: 3, outcome: 'answered', status: 503 }],
    'one line for the request, with its tries',
  );
  t.equal(lines.filter((l) => l.message === 'repository request retried').length, 1);

  sandbox.faults.add({ method: 'GET', path: '/path/default-domain/workspaces', status: 503, times: 10 });
  await t.rejects(client.getByPath('/default-domain/workspaces'));
  t.match(
    lines.filter((l) => l.message === 'repository request retried').at(-1),
    { tries: 4, outcome: 'gave up', status: 503 },
    'one line when it gives up too (retries: 3)',
  );
  t.equal(lines.filter((l) => l.message === 'repository request retried').length, 2);
});

t.test('429 waits for Retry-After before trying again', async (t) => {
  const { sandbox, client } = await setUp(t);
  sandbox.faults.add({ path: '/search/execute', status: 429, headers: { 'Retry-After': '1' } });
  const started = Date.now();
  const page = await client.search('SELECT * FROM Domain');
  t.equal(page.resultsCount, 1);
  t.ok(Date.now() - started >= 900, 'waited about the second the server asked for');
});

t.test(
  'Retry-After as a date is waited for; one past the request time-out, or a 503 retried out, is left for a later run',
  async (t) => {
    const { sandbox, client, configFor, log } = await setUp(t);
    sandbox.faults.add({
      path: '/path/default-domain',
      status: 503,
      headers: { 'Retry-After': new Date(Date.now() + 2000).toUTCString() },
    });
    const started = Date.now();
    t.equal((await client.getByPath('/default-domain')).type, 'Domain');
    t.ok(Date.now() - started >= 900, 'waited until the date the server gave (second precision)');

    const impatient = new RepositoryClient(configFor({ timeouts: { connectMs: 1000, requestMs: 500 } }), log);
    sandbox.faults.add({
      path: '/path/default-domain',
      status: 429,
      headers: { 'Retry-After': '3600' },
      body: '{"entity-type":"exception","status":429}',
    });
    const error = await impatient.getByPath('/default-domain').catch((e: unknown) => e);
    t.type(error, TransientError, 'an hour is not waited for within a run');
    t.equal(
      (error as Error).message,
      'read /default-domain failed with HTTP 429',
      'an error entity without a message adds nothing',
    );

    sandbox.faults.add({ path: '/path/default-domain', status: 503, headers: { 'Retry-After': 'soon' } });
    t.equal(
      (await client.getByPath('/default-domain')).type,
      'Domain',
      'a Retry-After that is no time falls back to the back-off',
    );
  },
);

t.test('an answer that is not JSON is transient, retried, and named by its error', async (t) => {
  const { sandbox, client } = await setUp(t, { retries: 1 });
  sandbox.faults.add({
    path: '/path/default-domain',
    status: 200,
    headers: { 'Content-Type': 'application/json' },
    body: '<html>proxy page</html>',
    times: 2,
  });
  const error = await client.getByPath('/default-domain').catch((e: unknown) => e);
  t.type(error, TransientError);
  t.match((error as Error).message, /^read \/default-domain failed \(SyntaxError\)/);
});

t.test(
  'a web page where JSON belongs (a login page) is refused at once, never retried, and says to check the URL and the credentials',
  async (t) => {
    const { sandbox, client } = await setUp(t, { retries: 3 });
    let asked = 0;
    sandbox.faults.observe = () => void asked++;
    sandbox.faults.add({
      status: 200,
      headers: { 'Content-Type': 'text/html; charset=utf-8' },
      body: '<!DOCTYPE html><html><body><form action="/sso/login">Sign in</form></body></html>',
      times: 10,
    });
    const error = await client.getByPath('/default-domain').catch((e: unknown) => e);
    t.type(error, AuthenticationError, 'stops the run as refused credentials do (exit 2)');
    t.equal(
      (error as Error).message,
      'read /default-domain: the server answered a web page (a login page?) — check the URL and the credentials (url and auth in storage.yaml)',
    );
    t.equal(asked, 1, 'asked once');
    sandbox.faults.clear();
    sandbox.faults.add({ status: 200, headers: {}, body: '\n<HTML><body>Sign in</body></HTML>' });
    t.type(
      await client.getByPath('/default-domain').catch((e: unknown) => e),
      AuthenticationError,
      'told by how it begins when it says no content type',
    );
  },
);

t.test(
  'an answer larger than 4 MiB is refused as it comes, never held whole nor retried, with what to do',
  async (t) => {
    const { sandbox, client } = await setUp(t, { retries: 3 });
    let asked = 0;
    sandbox.faults.observe = () => void asked++;
    const page = JSON.stringify({ entries: [{ description: 'x'.repeat(9 * 1024 * 1024) }] });
    sandbox.faults.add({
      path: '/search/',
      status: 200,
      headers: { 'Content-Type': 'application/json' },
      body: page,
      times: 5,
    });
    const error = await client.search('SELECT * FROM File').catch((e: unknown) => e);
    t.type(error, AnswerTooLargeError);
    t.equal(
      (error as Error).message,
      "search: the repository's answer is larger than 4 MiB; a document holding a very large value? (a smaller pageSize in storage.yaml narrows a search down)",
    );
    t.equal(asked, 1, 'asked once');
    t.equal(ANSWER_MAX_BYTES, 4 * 1024 * 1024);
  },
);

t.test('a dropped connection is transient and retried', async (t) => {
  const { sandbox, client } = await setUp(t);
  sandbox.faults.add({ path: '/path/default-domain', drop: true });
  t.equal((await client.getByPath('/default-domain')).type, 'Domain');
});

t.test('when retries run out the error is transient', async (t) => {
  const { sandbox, client } = await setUp(t, { retries: 1 });
  sandbox.faults.add({ path: '/path/default-domain', status: 502, times: 5 });
  const error = await client.getByPath('/default-domain').catch((e: unknown) => e);
  t.type(error, TransientError);
  t.match((error as Error).message, /read \/default-domain failed with HTTP 502/);
});

t.test('a time-out is transient', async (t) => {
  const { sandbox, client } = await setUp(t, { retries: 0, timeouts: { connectMs: 1000, requestMs: 100 } });
  // undici checks its time-outs twice a second: a second's silence is well past 100 ms.
  sandbox.faults.add({ path: '/path/default-domain', delayMs: 1500 });
  const error = await client.getByPath('/default-domain').catch((e: unknown) => e);
  t.type(error, TransientError);
  t.match((error as Error).message, /ETIMEDOUT/);
});

t.test(
  'a download that pauses longer than the time-out fails as transient; one that keeps coming is not cut off',
  async (t) => {
    // Eight chunks 100 ms apart: 700 ms in all, against a time-out of 300 ms, to /slow;
    // the first chunk, then silence, to /stalled.
    const url = await trickleServer(t, ['0', '1', '2', '3', '4', '5', '6', '7'], 'application/octet-stream');
    const client = new RepositoryClient(
      storageSchema.parse({
        url: `${url}/nuxeo`,
        adminPath: '/a',
        retries: 0,
        auth: { type: 'basic', username: 'u', password: 'p' },
        timeouts: { connectMs: 1000, requestMs: 300 },
      }),
      capturingLog().log,
    );
    t.equal((await client.downloadBlob('slow')).toString(), '01234567', 'a large file on a slow link arrives whole');
    const stalled = await client.downloadBlob('stalled').catch((e: unknown) => e);
    t.type(stalled, TransientError);
    t.match((stalled as Error).message, /^download file:content of stalled failed \(ETIMEDOUT\)/);
  },
);

t.test('errors are typed by status and keep the server message', async (t) => {
  const { sandbox, client, url, log, configFor } = await setUp(t);
  const missing = await client.getById('00000000-0000-0000-0000-000000000000').catch((e: unknown) => e);
  t.type(missing, NotFoundError);
  t.notOk((missing as NotFoundError).transient);

  const bad = await client.search("SELECT * FROM File WHERE dc:title = 'it''s'").catch((e: unknown) => e);
  t.type(bad, BadRequestError);
  t.match((bad as Error).message, /search failed with HTTP 400: Failed to execute query/);

  const file = sandbox.store.create(
    sandbox.actor(),
    sandbox.store.getByPath(WS)!,
    { type: 'File', name: 'f', properties: {} },
    NO_BLOBS,
  );
  const stale = await client
    .update({ uid: file.uid, changeToken: '1-1' }, { 'dc:title': 'x' })
    .catch((e: unknown) => e);
  t.type(stale, ConflictError, 'a stale change token is a conflict');
  t.ok((stale as ConflictError).transient, '…which is worth trying again');

  const dropped = await client.update({ uid: file.uid }, { 'erpHttpContent:docId': 'x' }).catch((e: unknown) => e);
  t.type(dropped, PropertiesDroppedError);
  t.same((dropped as PropertiesDroppedError).dropped, ['erpHttpContent:docId']);

  sandbox.faults.add({ path: '/path/default-domain', status: 500, body: 'boom' });
  t.type(await client.getByPath('/default-domain').catch((e: unknown) => e), PermanentError, '500 is not retried');

  const member = new RepositoryClient(configFor({ auth: { type: 'basic', username: 'jdoe', password: 'jdoe' } }), log);
  const forbidden = await member.update({ uid: file.uid }, { 'dc:title': 'x' }).catch((e: unknown) => e);
  t.type(forbidden, ForbiddenError);

  const wrong = new RepositoryClient(configFor({ auth: { type: 'basic', username: 'jdoe', password: 'nope' } }), log);
  const refused = await wrong.getByPath('/default-domain').catch((e: unknown) => e);
  t.type(refused, AuthenticationError);
  t.match((refused as Error).message, /check the credentials in storage\.yaml/);
  t.ok(url);
});

t.test('whether the repository runs a chain for its user is asked with a call on no document', async (t) => {
  const { sandbox, client } = await setUp(t);
  const before = JSON.stringify([...sandbox.store.all()]);
  t.equal(
    await client.operationAccepted(FOLDER_CHAIN),
    true,
    "let through: it fails on its input, with the server's error",
  );
  t.equal(JSON.stringify([...sandbox.store.all()]), before, 'nothing written');
  sandbox.faults.add({ method: 'POST', path: FOLDER_CHAIN, status: 503 });
  await t.rejects(client.operationAccepted(FOLDER_CHAIN), TransientError, 'a failure to ask is not an answer');

  const refusing = await setUp(t, {}, [FOLDER_CHAIN]);
  t.equal(await refusing.client.operationInstalled(FOLDER_CHAIN), true, 'its description answers');
  t.equal(await refusing.client.operationAccepted(FOLDER_CHAIN), false, 'a call is refused: an empty 404');
  const call = await refusing.client
    .placeInNewFolder('f', 'p', { name: 'n', properties: {}, useCaseFacet: 'fct_erp_barcode', values: {} })
    .catch((e: unknown) => e);
  t.type(call, NotServedError, 'a call refused so is told from a document not found');
  const missing = await refusing.client.getById('00000000-0000-0000-0000-000000000000').catch((e: unknown) => e);
  t.ok(missing instanceof NotFoundError && !(missing instanceof NotServedError), '…which the server names');
});

t.test('token authentication', async (t) => {
  const { url, log, configFor } = await setUp(t);
  const token = await (
    await fetch(`${url}/authentication/token?applicationName=connect2erp&deviceId=ci&permission=rw`, {
      headers: { Authorization: `Basic ${Buffer.from('jdoe:jdoe').toString('base64')}` },
    })
  ).text();
  const client = new RepositoryClient(configFor({ auth: { type: 'token', token } }), log);
  t.equal((await client.getByPath(WS)).type, 'WorkspaceRoot', 'a token acquired once authenticates later calls');
  const revoked = new RepositoryClient(configFor({ auth: { type: 'token', token: 'not-a-token' } }), log);
  t.type(await revoked.getByPath(WS).catch((e: unknown) => e), AuthenticationError, 'an unknown token is refused');
});

t.test('blob download, missing blob and paths with spaces', async (t) => {
  const { sandbox, client } = await setUp(t);
  const actor = sandbox.actor();
  const folder = sandbox.store.create(
    actor,
    sandbox.store.getByPath(WS)!,
    { type: 'Folder', name: 'with space', properties: {} },
    NO_BLOBS,
  );
  const blob = sandbox.store.storeBlob(Buffer.from('hello'), 'hello.txt', 'text/plain');
  const file = sandbox.store.create(
    actor,
    folder,
    { type: 'File', name: 'f', properties: { 'file:content': { 'upload-batch': 'b', 'upload-fileId': '0' } } },
    () => blob,
  );
  t.equal((await client.getByPath(`${WS}/with space`)).uid, folder.uid, 'each path segment is encoded');
  t.equal((await client.downloadBlob(file.uid)).toString(), 'hello');
  t.type(
    await client.downloadBlob(folder.uid).catch((e: unknown) => e),
    NotFoundError,
    'a document without a blob is a 404',
  );
});

t.test('a blob served from elsewhere (direct download) is followed there; API calls are not redirected', async (t) => {
  const { sandbox, client, url } = await setUp(t);
  const blob = sandbox.store.storeBlob(Buffer.from('moved'), 'moved.txt', 'text/plain');
  const file = sandbox.store.create(
    sandbox.actor(),
    sandbox.store.getByPath(WS)!,
    { type: 'File', name: 'f', properties: { 'file:content': { 'upload-batch': 'b', 'upload-fileId': '0' } } },
    () => blob,
  );
  sandbox.faults.add({
    path: '/@blob/',
    status: 302,
    headers: { Location: `${url}/nxfile/default/${file.uid}/file:content/moved.txt` },
  });
  t.equal((await client.downloadBlob(file.uid)).toString(), 'moved');
  sandbox.faults.add({
    path: '/path/default-domain',
    status: 302,
    headers: { Location: `${url}/api/v1/path/default-domain/workspaces` },
  });
  t.type(
    await client.getByPath('/default-domain').catch((e: unknown) => e),
    PermanentError,
    'a redirect on the API is an error, not a silent other document',
  );
});

t.test(
  'a blob store on another host gets no credentials, and a redirect loop or a redirect without Location is an error',
  async (t) => {
    const { sandbox, client, url } = await setUp(t, { auth: { type: 'token', token: 'secret-token' } });
    const seen: IncomingHttpHeaders[] = [];
    const store = createHttpServer((req, res) => {
      seen.push(req.headers);
      if (req.url === '/back') {
        // Back to the repository: the credentials dropped on the way out stay dropped.
        res.writeHead(302, { Location: `${url}/api/v1/id/x/@blob/file:content?again` });
        return void res.end();
      }
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      res.end('from the blob store');
    });
    await new Promise<void>((resolve) => store.listen(0, '127.0.0.1', resolve));
    t.teardown(() => store.close());
    const elsewhere = `http://127.0.0.1:${(store.address() as AddressInfo).port}`;
    const tokens = () => seen.map((h) => h['x-authentication-token'] ?? h.authorization ?? null);

    sandbox.faults.add({
      path: '/@blob/',
      status: 302,
      headers: { Location: `${elsewhere}/bucket/scan.pdf?signature=abc` },
    });
    t.equal((await client.downloadBlob('x')).toString(), 'from the blob store');
    t.same(tokens(), [null], 'the token stays with the repository');

    sandbox.faults.add({ path: '/@blob/', status: 307, headers: { Location: `${elsewhere}/back` } });
    sandbox.faults.add({ path: '?again', status: 302, headers: { Location: `${elsewhere}/bucket/scan.pdf` } });
    t.equal((await client.downloadBlob('x')).toString(), 'from the blob store', 'several hops');
    t.same(tokens(), [null, null, null]);

    sandbox.faults.add({
      path: '/@blob/',
      status: 302,
      headers: { Location: `${url}/api/v1/id/x/@blob/file:content` },
      times: 6,
    });
    t.type(await client.downloadBlob('x').catch((e: unknown) => e), PermanentError, 'more than five redirects');
    sandbox.faults.add({ path: '/@blob/', status: 302 });
    t.type(await client.downloadBlob('x').catch((e: unknown) => e), PermanentError, 'a redirect to nowhere');
  },
);

t.test('TLS: verified against the configured CA, refused without it, unverified only when switched off', async (t) => {
  const tls = join(import.meta.dirname, 'fixtures', 'tls');
  const server = createHttpsServer(
    { key: readFileSync(join(tls, 'server.key')), cert: readFileSync(join(tls, 'server.pem')) },
    (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          'entity-type': 'document',
          uid: 'u',
          path: '/default-domain',
          type: 'Domain',
          properties: {},
        }),
      );
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/nuxeo`;
  const { log, lines } = capturingLog();
  const client = (tlsOptions: Record<string, unknown>) =>
    new RepositoryClient(
      storageSchema.parse({
        url,
        adminPath: '/a',
        retries: 2,
        retryDelayMs: 5,
        auth: { type: 'basic', username: 'u', password: 'p' },
        tls: tlsOptions,
      }),
      log,
    );
  t.equal(
    (await client({ caFile: join(tls, 'ca.pem') }).getByPath('/default-domain')).type,
    'Domain',
    'the private CA is trusted',
  );
  const refused = await client({})
    .getByPath('/default-domain')
    .catch((e: unknown) => e);
  t.match(
    (refused as Error).message,
    /self-signed certificate|unable to verify/,
    'an unknown CA is refused by default',
  );
  t.type(refused, UntrustedServerError, 'a configuration problem that stops the run, as refused credentials do');
  t.match(
    (refused as Error).message,
    /^read \/default-domain failed: the repository's TLS certificate is not trusted \(\w+: .*\); check tls\.caFile in storage\.yaml$/,
  );
  t.same(
    lines.filter((l) => l.message === 'repository request retried'),
    [],
    'never retried: trying again will not help',
  );
  t.equal(
    (await client({ rejectUnauthorized: false }).getByPath('/default-domain')).type,
    'Domain',
    'verification off only when asked',
  );
});

t.test(
  'a search asks back only the schemas of the properties read; every schema when one is unknown or none are named',
  async (t) => {
    const { sandbox, configFor, log } = await setUp(t);
    const client = new RepositoryClient(configFor({}), log, featureRegistry());
    const asked: string[] = [];
    sandbox.faults.observe = (req) => {
      asked.push(String(req.headers.properties));
    };
    const query = "SELECT * FROM Document WHERE ecm:path = '/default-domain/workspaces'";
    const narrow = await client.search(query, { reads: ['erpBarcode:barcode', 'file:content.name'] });
    const unknown = await client.search(query, { reads: ['erpBarcode:barcode', 'invoice:number'] });
    await client.search(query);
    t.same(asked, ['erp_barcode,file', '*', '*']);
    t.notOk('dc:title' in narrow.entries[0].properties, 'a schema not asked for does not come back');
    t.equal(unknown.entries[0].properties['dc:title'], 'Workspaces');
  },
);

t.test('values read back in another form still count as stored', async (t) => {
  const { sandbox, client } = await setUp(t);
  const file = sandbox.store.create(
    sandbox.actor(),
    sandbox.store.getByPath(WS)!,
    { type: 'File', name: 'f', properties: { 'dc:subjects': ['a'] } },
    NO_BLOBS,
  );
  const updated = await client.update(
    { uid: file.uid },
    { 'dc:valid': '2024-01-15', 'dc:subjects': null, 'dc:description': 'd' },
  );
  t.equal(updated.properties['dc:valid'], '2024-01-15T00:00:00.000Z', 'a date comes back as an instant');
  t.same(updated.properties['dc:subjects'], [], 'a cleared list comes back empty');
  const dropped = await client
    .update({ uid: file.uid }, { 'dc:description': 'not a date', 'erpHttpContent:source': 'S4H' })
    .catch((e: unknown) => e);
  t.same(
    (dropped as PropertiesDroppedError).dropped,
    ['erpHttpContent:source'],
    'only the property that did not stick is named',
  );
});

t.test('injected latency and faults that match a method only', async (t) => {
  const { sandbox, client } = await setUp(t);
  sandbox.faults.latencyMs = 150;
  sandbox.faults.add({ method: 'POST', path: '/path/default-domain', status: 500 });
  const started = Date.now();
  t.equal((await client.getByPath('/default-domain')).type, 'Domain', 'a POST-only fault leaves a GET alone');
  t.ok(Date.now() - started >= 140, 'every answer waits for the latency');
});

t.test(
  'the pager walks a large result by keyset: every document once, in uuid order, while documents leave the result',
  async (t) => {
    const { sandbox, client } = await setUp(t);
    const actor = sandbox.actor();
    const ws = sandbox.store.getByPath(WS)!;
    const folder = sandbox.store.create(actor, ws, { type: 'Folder', name: 'many', properties: {} }, NO_BLOBS);
    const uids = Array.from(
      { length: 2500 },
      (_, i) =>
        sandbox.store.create(
          actor,
          folder,
          { type: 'File', name: `f${i}`, properties: { 'dc:description': 'new' } },
          NO_BLOBS,
        ).uid,
    );
    const searches: string[] = [];
    sandbox.faults.observe = (req) => {
      if (req.url?.includes('/search/'))
        searches.push(decodeURIComponent(new URL(req.url, 'http://x').searchParams.get('query') ?? ''));
    };
    const seen: string[] = [];
    for await (const page of drain(
      client,
      `SELECT * FROM File WHERE ecm:path STARTSWITH '${WS}/many' AND dc:description = 'new'`,
      1000,
    )) {
      seen.push(...page.map((d) => d.uid));
      // Processed documents leave the result set, as labelled or claimed ones do.
      for (const doc of page.slice(0, 600))
        sandbox.store.update(actor, sandbox.store.get(doc.uid)!, { 'dc:description': 'done' }, NO_BLOBS);
    }
    t.same(
      seen,
      [...uids].sort(),
      'every document once, in uuid order, though most left the result set as they were seen',
    );
    t.equal(searches.length, 3);
    t.match(
      searches[1],
      new RegExp(`AND ecm:uuid > '${seen[999]}' ORDER BY ecm:uuid$`),
      'the next page starts after the last uuid of the one before',
    );

    sandbox.store.remove(actor, sandbox.store.get(uids[0])!);
    const added = sandbox.store.create(actor, folder, { type: 'File', name: 'late', properties: {} }, NO_BLOBS).uid;
    const again: string[] = [];
    for await (const page of drain(client, `SELECT * FROM File WHERE ecm:path STARTSWITH '${WS}/many'`, 1000))
      again.push(...page.map((d) => d.uid));
    t.same(
      again,
      [...uids.slice(1), added].sort(),
      'a removed document is gone and a new one found in its place in the order',
    );

    // Four shards (shard.ts): disjoint uuid ranges that together are the whole, each paged by keyset.
    const shards: string[][] = [];
    for (let index = 0; index < 4; index++) {
      const part: string[] = [];
      const query = `SELECT * FROM File WHERE ecm:path STARTSWITH '${WS}/many'${shardCondition({ index, count: 4 })}`;
      for await (const page of drain(client, query, 300)) part.push(...page.map((d) => d.uid));
      shards.push(part);
    }
    t.same(shards.flat(), again, 'the shards in order are every document once, in uuid order');
    t.ok(
      shards.every((part) => part.length > 400),
      `each shard has about a quarter: ${shards.map((p) => p.length).join(', ')}`,
    );
  },
);

t.test('the pager reads no page after the stop, and yields nothing from a search the stop came during', async (t) => {
  const { sandbox, client } = await setUp(t);
  sandbox.faults.add({ path: '/search/execute', delayMs: 300 });
  const stop = new AbortController();
  setTimeout(() => stop.abort('SIGTERM'), 100);
  const pages = [];
  for await (const page of drain(client, `SELECT * FROM Document WHERE ecm:path STARTSWITH '${WS}'`, 10, stop.signal))
    pages.push(page);
  t.same(pages, [], 'nothing is handed out once the run is stopping');
});

t.test(
  'a page read ahead that fails while the work waits for room is the failure of the whole, not a crash',
  async (t) => {
    async function* pages() {
      yield [0];
      throw new Error('search failed');
    }
    let open = (): void => undefined;
    const room = new Promise<void>((resolve) => (open = resolve));
    const work = eachPage(
      pages(),
      () => room,
      async () => undefined,
    );
    // The failed read settles, and Node looks for unhandled rejections, while the work waits for room.
    await new Promise((resolve) => setImmediate(resolve));
    open();
    await t.rejects(work, /search failed/);
  },
);

t.test(
  'pages are worked on a few at once with the next one read ahead; after a failure no further page is read and the failure comes out once the others settle',
  async (t) => {
    const read: number[] = [];
    async function* pages() {
      for (let i = 0; i < 10; i++) {
        read.push(i);
        yield [i];
      }
    }
    let running = 0;
    let most = 0;
    const finished: number[] = [];
    const work = eachPage(pages(), pagesAtOnce(3), async ([i]) => {
      most = Math.max(most, ++running);
      await sleep(i === 1 ? 10 : 50);
      running--;
      if (i === 1) throw new Error('page 1 failed');
      finished.push(i);
    });
    await t.rejects(work, /page 1 failed/);
    t.equal(most, 3, 'three pages at once');
    t.same(read, [0, 1, 2, 3], 'one page is read ahead, none after the failure');
    t.same(finished.sort(), [0, 2], 'the pages under way were finished before the failure came out');
  },
);

t.test(
  'documents with large values: a page too large to hold is read again half as large, down to one document; one alone too large stops the search',
  async (t) => {
    const { sandbox, client } = await setUp(t);
    const actor = sandbox.actor();
    const folder = sandbox.store.create(
      actor,
      sandbox.store.getByPath(WS)!,
      { type: 'Folder', name: 'large', properties: {} },
      NO_BLOBS,
    );
    const uids = Array.from(
      { length: 6 },
      (_, i) =>
        sandbox.store.create(
          actor,
          folder,
          { type: 'File', name: `f${i}`, properties: { 'dc:description': `${i}`.repeat(2 * 1024 * 1024) } },
          NO_BLOBS,
        ).uid,
    );
    sandbox.index.catchUp();
    const sizes: number[] = [];
    sandbox.faults.observe = (req) => {
      if (req.url?.includes('/search/')) sizes.push(Number(new URL(req.url, 'http://x').searchParams.get('pageSize')));
    };
    const query = `SELECT * FROM File WHERE ecm:path STARTSWITH '${WS}/large'`;
    const pages: string[][] = [];
    for await (const page of drain(client, query, 6, undefined, ['dc:description'])) pages.push(page.map((d) => d.uid));
    t.same(pages.flat(), [...uids].sort(), 'every document once');
    t.same(sizes.slice(0, 2), [6, 3], '12 MiB asked for, then half');
    t.ok(
      pages.every((page) => page.length <= 3),
      'the smaller pages from then on',
    );
    sandbox.store.update(
      actor,
      sandbox.store.get([...uids].sort()[5])!,
      { 'dc:description': 'x'.repeat(9 * 1024 * 1024) },
      NO_BLOBS,
    );
    sandbox.index.catchUp();
    const error = await (async () => {
      for await (const _ of drain(client, query, 6, undefined, ['dc:description'])) void _;
    })().catch((e: unknown) => e);
    t.type(error, AnswerTooLargeError, 'a document larger than an answer may be: the search stops, named');
    t.match(
      (error as Error).message,
      `; one document alone is: the first that "${query} AND ecm:uuid > '`,
      'found by its place in the search',
    );
    const passed: string[] = [];
    const read: string[] = [];
    for await (const page of drain(client, query, 6, undefined, ['dc:description'], undefined, (doc) =>
      passed.push(doc.uid),
    ))
      read.push(...page.map((d) => d.uid));
    t.same(passed, [[...uids].sort()[5]], 'with someone to hand it to: the document alone, passed by');
    t.same(read, [...uids].sort().slice(0, 5), 'the others read');
  },
);
