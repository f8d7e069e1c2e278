import { buffer } from 'node:stream/consumers';
import t from 'tap';
import { NO_BLOBS } from '../../sandbox/repository/store.js';
import { SIGNED, servedEnv, type ServedEnv } from '../helpers/content-server.js';

const { urls, docIds } = SIGNED;
const BOUNDARY = 'KoZIhvcNAQcB';

/** A multipart/form-data body as SAP frames it: each part with its X- headers and Content-Length. */
function multipart(parts: Array<{ headers: Record<string, string>; body: string }>): Buffer {
  const text = parts
    .map(
      (p) =>
        `--${BOUNDARY}\r\n${Object.entries({ ...p.headers, 'Content-Length': String(Buffer.byteLength(p.body)) })
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join('')}\r\n${p.body}\r\n`,
    )
    .join('');
  return Buffer.from(`${text}--${BOUNDARY}--\r\n`);
}
const MULTIPART = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };

/** The documents below the content repository's storage folder, by name. */
function stored(env: ServedEnv): string[] {
  return [...env.sandbox.store.all()]
    .filter((d) => d.path.startsWith('/default-domain/workspaces/sap-archive/Z1/'))
    .map((d) => d.path.slice('/default-domain/workspaces/sap-archive/Z1/'.length));
}

t.test('create POST stores every component; a failing component leaves nothing behind', async (t) => {
  const env = await servedEnv(t);
  await env.trust('dsa.crt');
  const body = multipart([
    { headers: { 'X-compId': 'data1', 'Content-Type': 'application/pdf; charset=; version=' }, body: 'page one' },
    { headers: { 'X-compId': 'data2', 'Content-Type': 'application/pdf' }, body: 'page two' },
  ]);
  const created = await env.call('POST', urls.createPostB, body, MULTIPART);
  t.equal(created.status, 201, String(created.error));
  const info = await env.call('GET', urls.infoB);
  t.equal(info.headers['x-numbercomps'], '2');
  t.match(info.body.toString(), /X-compId: data1[\s\S]*X-compId: data2/);
  t.same(stored(env).sort(), [docIds.B, `${docIds.B}/data1`, `${docIds.B}/data2`]);
  const first = await env.call('GET', urls.infoB.replace('info&', 'get&'));
  t.equal(first.body.toString(), 'page one', 'get without compId: data, else data1');

  const failing = multipart([
    { headers: { 'X-compId': 'data', 'Content-Type': 'text/plain' }, body: 'fine' },
    { headers: { 'X-compId': 'data', 'Content-Type': 'text/plain' }, body: 'the same component again' },
  ]);
  const refused = await env.call('POST', urls.createPostE, failing, MULTIPART);
  t.equal(refused.status, 400);
  t.match(refused.error, /component data is sent twice/);
  t.notOk(
    stored(env).some((name) => name.startsWith(docIds.E)),
    'no trace of the failed create',
  );
  t.equal((await env.call('GET', urls.infoE)).status, 404);
});

t.test('mCreate creates each document on its own and lists them; a repeat answers 250', async (t) => {
  const env = await servedEnv(t);
  await env.trust('dsa.crt');
  const body = multipart([
    { headers: { 'X-docId': docIds.C, 'X-compId': 'data', 'Content-Type': 'text/plain' }, body: 'C' },
    { headers: { 'X-docId': docIds.D, 'X-compId': 'data', 'Content-Type': 'text/plain' }, body: 'D' },
    { headers: { 'X-docId': docIds.D, 'X-compId': 'note', 'Content-Type': 'text/plain' }, body: 'D note' },
  ]);
  const first = await env.call('POST', urls.mCreateC, body, MULTIPART);
  t.equal(first.status, 201, String(first.error));
  t.equal(
    first.body.toString(),
    `docId="${docIds.C}";retCode="201";errorDescription="";\r\ndocId="${docIds.D}";retCode="201";errorDescription="";\r\n`,
    'each line with its errorDescription, empty when created',
  );
  t.equal((await env.call('GET', urls.infoD)).headers['x-numbercomps'], '2');
  const again = await env.call('POST', urls.mCreateC, body, MULTIPART);
  t.equal(again.status, 250);
  t.match(again.body.toString(), /retCode="403";errorDescription="document \w+ already exists";/);
  const mixed = multipart([
    { headers: { 'X-docId': docIds.C, 'X-compId': 'data', 'Content-Type': 'text/plain' }, body: 'C again' },
    { headers: { 'X-docId': 'NEIGHBOUR', 'X-compId': 'data', 'Content-Type': 'text/plain' }, body: 'new' },
    { headers: { 'X-docId': 'BAD.', 'X-compId': '..', 'Content-Type': 'text/plain' }, body: 'refused' },
  ]);
  const third = await env.call('POST', urls.mCreateC, mixed, MULTIPART);
  t.equal(third.status, 500, 'one document failed…');
  t.match(
    third.body.toString(),
    new RegExp(
      `docId="${docIds.C}";retCode="403";.*\r\ndocId="NEIGHBOUR";retCode="201";errorDescription="";\r\ndocId="BAD.";retCode="500";`,
    ),
  );
  t.ok(stored(env).includes('NEIGHBOUR/data'), '…its neighbours are created all the same');
  t.notOk(
    stored(env).some((name) => name.startsWith('BAD.')),
    'and nothing of it is left',
  );
});

t.test(
  'mCreate begins with the document its URL signs, or creates nothing: a signed URL for one document never creates only others',
  async (t) => {
    const env = await servedEnv(t);
    await env.trust('dsa.crt');
    const others = multipart([
      { headers: { 'X-docId': docIds.D, 'X-compId': 'data', 'Content-Type': 'text/plain' }, body: 'D' },
      { headers: { 'X-docId': docIds.C, 'X-compId': 'data', 'Content-Type': 'text/plain' }, body: 'C' },
    ]);
    const refused = await env.call('POST', urls.mCreateC, others, MULTIPART);
    t.equal(refused.status, 401);
    t.equal(
      refused.error,
      `the first document of mCreate is "${docIds.D}", not the URL's signed docId "${docIds.C}": nothing created`,
    );
    t.same(stored(env), [], 'nothing created');
  },
);

t.test(
  'mCreate streams: a document whose upload the repository refuses fails alone, a part too large or a header sent twice fails the request',
  async (t) => {
    const env = await servedEnv(t, { connection: { signatures: 'off' }, server: { maxPartBytes: 1_048_576 } });
    const create = (parts: Parameters<typeof multipart>[0]): ReturnType<ServedEnv['call']> =>
      env.call('POST', 'mCreate&pVersion=0047&contRep=Z1&docId=S1', multipart(parts), MULTIPART);
    const text = { 'X-compId': 'data', 'Content-Type': 'text/plain' };
    // The first upload is refused while SAP still sends its 600 KB: the rest of it is read off.
    env.sandbox.faults.add({ method: 'POST', path: '/upload/batchId-', status: 500 });
    const failed = await create([
      { headers: { 'X-docId': 'S1', ...text }, body: 'x'.repeat(600_000) },
      { headers: { 'X-docId': 'S2', ...text }, body: 'second' },
    ]);
    t.equal(failed.status, 500);
    t.match(failed.body.toString(), /docId="S1";retCode="500";.*\r\ndocId="S2";retCode="201";errorDescription="";/);
    t.same(stored(env), ['S2', 'S2/data'], 'the neighbour is created, nothing left of the failed one');

    const tooLarge = await create([
      { headers: { 'X-docId': 'S1', ...text }, body: 'small' },
      { headers: { 'X-docId': 'S3', ...text }, body: 'y'.repeat(1_100_000) },
    ]);
    t.equal(tooLarge.status, 400);
    t.equal(tooLarge.error, 'multipart body: a part is larger than maxPartBytes (1048576 bytes)');
    t.same(
      stored(env).filter((name) => name.startsWith('S3')),
      [],
      'nothing of the document cut off',
    );
    const twice = await env.call(
      'POST',
      'mCreate&pVersion=0047&contRep=Z1&docId=S4',
      `--${BOUNDARY}\r\nX-docId: S4\r\nX-docId: S5\r\nX-compId: data\r\n\r\nx\r\n--${BOUNDARY}--\r\n`,
      MULTIPART,
    );
    t.equal(twice.status, 400);
    t.equal(twice.error, 'a part carries x-docid more than once');
  },
);

t.test(
  'update POST makes the document exactly what is sent; append and update need an existing document',
  async (t) => {
    const env = await servedEnv(t);
    await env.trust('dsa.crt');
    t.equal((await env.call('PUT', urls.createPutA, 'first')).status, 201);
    t.equal((await env.call('PUT', urls.updatePutADescr, 'descr')).status, 200, 'update PUT adds a missing component');
    const body = multipart([{ headers: { 'X-compId': 'data', 'Content-Type': 'text/plain' }, body: 'second' }]);
    t.equal((await env.call('POST', urls.updatePostA, body, MULTIPART)).status, 200);
    const info = await env.call('GET', urls.infoA);
    t.equal(info.headers['x-numbercomps'], '1', 'descr, not sent, is gone');
    const descr = [...env.sandbox.store.all()].find((d) => d.path.includes(`/${docIds.A}/descr.`));
    t.equal(descr?.trashed, true, 'into the trash (onDelete: trash), not deleted for good');
    t.equal((await env.call('GET', urls.getA)).body.toString(), 'second');
    const failing = multipart([
      { headers: { 'X-compId': 'data', 'Content-Type': 'text/plain' }, body: 'third' },
      { headers: { 'X-compId': 'data', 'Content-Type': 'text/plain' }, body: 'again' },
    ]);
    t.equal((await env.call('POST', urls.updatePostA, failing, MULTIPART)).status, 400);
    t.equal((await env.call('GET', urls.getA)).body.toString(), 'second', 'a failed update POST changes nothing');
    const downgrade = urls.updatePostA.replace('docProt=rud', 'docProt=');
    t.equal(
      (await env.call('POST', downgrade, body, MULTIPART)).status,
      200,
      'docProt is not signed in an update POST…',
    );
    t.equal(
      (await env.call('GET', urls.getA.replace(/&secKey=[^&]*/, ''))).status,
      401,
      '…so it changes nothing: the protection stays what create gave',
    );
    env.sandbox.faults.observe = (req) => {
      // Another request changes the component while the append uploads…
      if (req.method !== 'POST' || !req.url?.includes('/upload/batchId')) return;
      const data = env.sandbox.store.getByPath(`/default-domain/workspaces/sap-archive/Z1/${docIds.A}/data`)!;
      // As another append or update PUT of the server writes it: with the token it read.
      const changeToken = env.sandbox.store.changeToken(data);
      env.sandbox.store.update(env.sandbox.actor(), data, { 'dc:description': 'changed' }, NO_BLOBS, { changeToken });
    };
    const lost = await env.call('PUT', urls.appendAData, 'more');
    t.equal(lost.status, 409, 'an append that would overwrite a change made meanwhile');
    t.match(lost.error, /changed by another request meanwhile/);
    env.sandbox.faults.observe = () => undefined;
    t.equal((await env.call('GET', urls.getA)).body.toString(), 'second');
    t.equal((await env.call('GET', urls.deleteA)).status, 200);
    const append = await env.call('PUT', urls.appendAData, 'more');
    t.equal(append.status, 404, 'append to a deleted document');
    t.equal((await env.call('PUT', urls.updatePutADescr, 'x')).status, 404, 'update of a deleted document');
    t.ok(
      [...env.sandbox.store.all()].some((d) => d.trashed && d.name.startsWith(`${docIds.A}._`)),
      'delete put the document in the trash (onDelete: trash)',
    );
  },
);

t.test('onDelete: remove deletes for good; a document with no data component; a PUT without compId', async (t) => {
  const env = await servedEnv(t, {
    connection: {
      signatures: 'off',
      contentRepositories: [
        { contRep: 'Z1', storagePath: '/default-domain/workspaces/sap-archive/Z1', onDelete: 'remove' },
      ],
    },
  });
  const missing = await env.call('PUT', 'create&pVersion=0047&contRep=Z1&docId=N', 'x');
  t.equal(missing.status, 400);
  t.match(missing.error, /compId "" is missing/);
  t.equal((await env.call('PUT', 'create&pVersion=0047&contRep=Z1&docId=N&compId=note', 'a note')).status, 201);
  const none = await env.call('GET', 'get&pVersion=0047&contRep=Z1&docId=N');
  t.equal(none.status, 404);
  t.match(none.error, /component data of document N not found/);
  t.equal((await env.call('GET', 'delete&pVersion=0047&contRep=Z1&docId=N')).status, 200);
  t.same(stored(env), [], 'gone for good, not in the trash');
});

t.test("the job's documents are read from SAP, but changed only in the repository", async (t) => {
  const env = await servedEnv(t, { connection: { signatures: 'off' } });
  const uid = await env.upload('ERP/Invoices', 'invoice-1.pdf');
  await env.job();
  const docId = uid;
  const got = await env.call('GET', `get&pVersion=0047&contRep=Z1&docId=${docId}`);
  t.equal(got.status, 200, String(got.error));
  t.same(got.body, await buffer(env.sandbox.store.blobStream(env.props(uid)['file:content'] as never)));
  const update = await env.call('PUT', `update&pVersion=0047&contRep=Z1&docId=${docId}&compId=data`, 'overwrite');
  t.equal(update.status, 409);
  t.match(update.error, /repository document/);
});

t.test(
  'docGet of a document of 12 components streams each in turn and leaves no listener behind on the answer',
  async (t) => {
    const env = await servedEnv(t);
    await env.trust('dsa.crt');
    t.equal((await env.call('PUT', urls.createPutA, 'first')).status, 201);
    const pages = Array.from({ length: 12 }, (_, i) => ({
      headers: { 'X-compId': `page${i}`, 'Content-Type': 'text/plain' },
      body: `page ${i} `.repeat(1000),
    }));
    t.equal((await env.call('POST', urls.updatePostA, multipart(pages), MULTIPART)).status, 200);
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    const whole = await env.call('GET', urls.docGetA);
    await new Promise((resolve) => setImmediate(resolve)); // a warning is emitted on the next tick
    process.off('warning', onWarning);
    t.equal(whole.status, 200, String(whole.error));
    const text = whole.body.toString();
    t.equal(text.match(/X-compId: page\d+/g)?.length, 12, 'every component');
    t.ok(text.includes(`page 11 `.repeat(1000)), 'each component whole');
    t.same(
      warnings.filter((w) => w.startsWith('MaxListenersExceededWarning')),
      [],
      'no listener-leak warning',
    );
  },
);
