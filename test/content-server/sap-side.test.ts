import { buffer } from 'node:stream/consumers';
import t from 'tap';
import { openableDocument, servedEnv } from '../helpers/content-server.js';
import type { StoredBlob, StoredDoc } from '../../sandbox/repository/store.js';

t.test("OAC0's connection test and certificate, then an RSCMST-like sequence from the ERP sandbox", async (t) => {
  const env = await servedEnv(t);
  const info = await env.caller.serverInfo();
  t.equal(info.status, 200);
  const [server, repository, end] = info.body.toString().split('\r\n');
  t.match(
    server,
    /^serverStatus="running";serverVendorId="connect2erp 0\.0\.0-test";.*serverTime="\d\d:\d\d:\d\d";serverDate="\d{4}-\d\d-\d\d";.*pVersion="0047";$/,
  );
  t.match(repository, /^contRep="Z1";.*contRepStatus="running";.*pVersion="0047";$/);
  t.equal(end, '');

  const before = await env.caller.checkSequence();
  t.same(
    before.map((s) => [s.step, s.status]).slice(0, 1),
    [['create', 401]],
    'nothing passes before a certificate is approved',
  );
  t.match(before[0].detail, /no approved certificate of CN=S4H,OU=connect2erp test system/);

  t.equal((await env.caller.putCert()).status, 200, 'putCert: the SSF structure SAP sends');
  t.equal((await env.caller.putCert()).status, 200, 'sent twice: still one certificate');
  const filed = await env.certificates.list();
  t.equal(filed.length, 1);
  t.match(filed[0], { status: 'pending', contRep: 'Z1', connection: 'S4H', authId: env.caller.signer.authId });
  t.equal((await env.caller.checkSequence())[0].status, 401, 'pending signs nothing');
  await env.certificates.setStatus(filed[0], 'approved');
  const steps = await env.caller.checkSequence();
  t.same(
    steps.filter((s) => !s.ok),
    [],
    steps.map((s) => `${s.step} ${s.status} ${s.detail}`).join('\n'),
  );
  t.same(
    steps.map((s) => s.step),
    ['create', 'info', 'get', 'get range', 'search', 'update', 'append', 'docGet', 'delete', 'info after delete'],
  );
  await env.certificates.setStatus(filed[0], 'approved');
  t.equal((await env.caller.putCert()).status, 200);
  t.equal((await env.certificates.list())[0].status, 'approved', 'a putCert never undoes an approval');
});

t.test(
  "SAP opens the documents the job linked: the bytes are the repository's, ranges are asked of the repository",
  async (t) => {
    const env = await servedEnv(t);
    const uid = await openableDocument(env, 'invoice-7.pdf');
    env.fill(uid, { 'erpCreateALDocument:erpObjectId': '100019000000222023' });
    await env.job();
    const [link] = env.erp.tables.links;
    t.equal(link.ARC_DOC_ID, uid, 'the link names the repository document');
    const blob = env.props(uid)['file:content'] as StoredBlob;
    const bytes = await buffer(env.sandbox.store.blobStream(blob));
    const opened = await env.caller.get(link.ARC_DOC_ID);
    t.equal(opened.status, 200, String(opened.error));
    t.same(opened.body, bytes);
    t.equal(opened.headers['content-type'], 'application/pdf');

    const ranges: Array<string | undefined> = [];
    env.sandbox.faults.observe = (req) => {
      if (req.url?.includes('@blob')) ranges.push(req.headers.range);
    };
    const part = await env.caller.get(uid, [
      ['fromOffset', '2'],
      ['toOffset', '6'],
    ]);
    t.same(part.body, bytes.subarray(2, 7));
    t.same(ranges, ['bytes=2-6'], 'the range went to the repository');
    const past = await env.caller.get(uid, [
      ['fromOffset', '3'],
      ['toOffset', '99999'],
    ]);
    t.same(past.body, bytes.subarray(3), 'a range past the end is clamped before it is asked');

    // The same document read by another content repository, another connection or without the facet: not found.
    const doc = env.sandbox.store.get(uid) as StoredDoc;
    env.fill(uid, { 'erpHttpContent:archiveId': 'Z9' });
    t.equal((await env.caller.get(uid)).status, 404, 'another archiveId');
    env.fill(uid, { 'erpHttpContent:archiveId': 'Z1', 'erpHttpContent:source': 'ECC' });
    t.equal((await env.caller.get(uid)).status, 404, 'another source');
    const plain = await env.upload('ERP', 'not-for-sap.pdf');
    t.equal((await env.caller.get(plain)).status, 404, 'a document without fct_erp_http_content');
    env.fill(uid, { 'erpHttpContent:source': 'S4H', 'erpHttpContent:docId': 'another' });
    t.equal((await env.caller.get(uid)).status, 404, 'another docId');
    env.fill(uid, { 'erpHttpContent:docId': uid, 'erpHttpContent:compId': null });
    t.same((await env.caller.get(uid)).body, bytes, 'no compId on the document: it is data');
    env.fill(uid, { 'erpHttpContent:compId': '\u03a9' });
    const omega = await env.caller.get(uid, [['compId', '\u03a9']]);
    t.equal(omega.status, 200, 'a compId a header cannot carry…');
    t.equal(omega.headers['x-compid'], '?', '…is sent as ASCII');
    env.fill(uid, { 'erpHttpContent:compId': null });
    env.fill(uid, { 'file:content': null });
    const empty = await env.caller.get(uid);
    t.equal(empty.status, 200);
    t.equal(
      empty.headers['content-type'],
      'application/octet-stream',
      'a document without content: an empty component',
    );
    t.equal(empty.body.length, 0);
    env.sandbox.store.trash(env.sandbox.actor(), doc);
    t.equal((await env.caller.get(uid)).status, 404, 'in the trash');
  },
);

t.test(
  'a repository that sends the content chunked, without a length: SAP still gets a Content-Length, the right one',
  async (t) => {
    const env = await servedEnv(t);
    const uid = await openableDocument(env, 'invoice-9.pdf');
    const bytes = await buffer(env.sandbox.store.blobStream(env.props(uid)['file:content'] as StoredBlob));
    env.sandbox.faults.observe = (req, res) => {
      if (!req.url?.includes('@blob')) return;
      // As a repository behind a proxy that re-chunks: the length header is dropped.
      const writeHead = res.writeHead.bind(res) as (status: number, headers: Record<string, unknown>) => unknown;
      res.writeHead = ((status: number, headers: Record<string, unknown> = {}) => {
        const { 'Content-Length': _dropped, ...rest } = headers;
        return writeHead(status, rest);
      }) as typeof res.writeHead;
    };
    const cases: Array<[string, Array<[string, string]>, Buffer]> = [
      ['whole', [], bytes],
      [
        'a range',
        [
          ['fromOffset', '2'],
          ['toOffset', '5'],
        ],
        bytes.subarray(2, 6),
      ],
    ];
    for (const [what, extra, expected] of cases) {
      const answer = await env.caller.get(uid, extra);
      t.equal(answer.status, 200, what);
      t.equal(answer.headers['content-length'], String(expected.length), `${what}: its length`);
      t.same(answer.body, expected, what);
    }
  },
);
