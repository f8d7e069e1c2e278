import { ContentInfo, SignedData } from '@peculiar/asn1-cms';
import { AsnConvert } from '@peculiar/asn1-schema';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { channel } from 'node:diagnostics_channel';
import { once } from 'node:events';
import { connect } from 'node:net';
import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import t from 'tap';
import { request } from 'undici';
import { FIXTURE_AUTH_ID, FIXTURES, SIGNED, fixture, servedEnv } from '../helpers/content-server.js';
import { until } from '../helpers/until.js';
import { createLogger } from '../../src/log.js';
import type { StoredDoc } from '../../sandbox/repository/store.js';

// Requests over real HTTP: 2 s idle, several times that on a busy machine.
t.setTimeout(120_000);

const { urls, docIds } = SIGNED;
const Z1 = '/default-domain/workspaces/sap-archive/Z1';

t.test('signatures: by subject key identifier, a digest not accepted, an impossible expiration', async (t) => {
  const env = await servedEnv(t);
  await env.trust('dsa.crt');
  await env.trust('rsa.crt', 'CN%3DS4H-RSA,OU%3Dconnect2erp,O%3DSAP%20Trust%20Community,C%3DDE');
  t.equal((await env.call('PUT', urls.createPutA, 'x')).status, 201);
  t.equal((await env.call('GET', urls.infoAByKeyId)).status, 200, 'signer named by its key identifier');
  const sha224 = await env.call('GET', urls.infoARsaSha224);
  t.equal(sha224.status, 401);
  t.match(sha224.error, /digest 2\.16\.840\.1\.101\.3\.4\.2\.4, which is not accepted/);
  t.match((await env.call('GET', urls.getABadExpiration)).error, /expiration "20990231120000" is not YYYYMMDDHHMMSS/);
  const corrupt = urls.getA.replace(/(expiration=)\d+/, '$1abc');
  t.match((await env.call('GET', corrupt)).error, /is not YYYYMMDDHHMMSS/);
  // A certificate whose stored text no longer reads signs nothing.
  for (const c of await env.certificates.list()) env.fill(c.uid, { 'note:note': 'not a certificate' });
  t.match((await env.call('GET', urls.getA)).error, /no approved certificate/);
  // The signed content of a secKey is not a certificate: putCert refuses it.
  const secKey = Buffer.from(decodeURIComponent(/secKey=([^&]+)/.exec(urls.getA)![1]), 'base64');
  t.equal((await env.call('PUT', 'putCert&pVersion=0047&contRep=Z1&authId=x', secKey)).status, 406);
  t.equal(
    (await env.call('PUT', 'putCert&pVersion=0047&contRep=Z1', fixture('dsa.crt'))).status,
    400,
    'putCert needs authId',
  );
});

t.test(
  "the repository's failures: a lost certificate list is read again, an account without rights is 409",
  async (t) => {
    const env = await servedEnv(t, {}, { users: { sapcs: { password: 'sapcs', groups: ['members'] } } });
    await env.trust('dsa.crt');
    env.sandbox.faults.add({ path: '@children', status: 500, times: 1 });
    const failed = await env.call('GET', urls.infoA);
    t.equal(failed.status, 500);
    t.match(failed.error, /internal error/);
    t.equal((await env.call('GET', urls.infoA)).status, 404, 'read again at the next request');
    env.sandbox.faults.add({ path: 'sap-archive', status: 503, times: 10 });
    t.equal((await env.call('GET', urls.infoA)).status, 500, 'a repository that keeps failing');
    env.sandbox.faults.clear();

    const limited = await servedEnv(
      t,
      { connection: { repositoryAuth: { type: 'basic', username: 'sapcs', password: 'sapcs' }, signatures: 'off' } },
      { users: { sapcs: { password: 'sapcs', groups: ['members'] } } },
    );
    const refused = await limited.call('PUT', `create&pVersion=0047&contRep=Z1&docId=${docIds.A}&compId=data`, 'x');
    t.equal(refused.status, 409, String(refused.error));
    const cert = await limited.call('PUT', 'putCert&pVersion=0047&contRep=Z1&authId=x', fixture('dsa.crt'));
    t.equal(cert.status, 409, "its certificates folder is administrators' only");
  },
);

t.test(
  'storing: a missing storage folder, a lost upload, a crashed create, two creates of one docId at once',
  async (t) => {
    const env = await servedEnv(t, { connection: { signatures: 'off' }, server: { staleCreateSeconds: 0 } });
    const create = (docId: string, body = 'content'): Promise<{ status: number; error?: string }> =>
      env.call('PUT', `create&pVersion=0047&contRep=Z1&docId=${docId}&compId=data`, body);
    env.sandbox.faults.add({ path: '/upload/', method: 'POST', status: 500, skip: 1, times: 1 });
    t.equal((await create('LOST')).status, 500, 'the upload failed');
    t.notOk(env.sandbox.store.getByPath(`${Z1}/LOST`), 'and nothing is left');
    env.sandbox.faults.add({ path: '/upload/', method: 'POST', status: 500, skip: 1, times: 1 });
    env.sandbox.faults.add({ method: 'DELETE', status: 500, times: 1 });
    t.equal((await create('STUCK')).status, 500, 'the upload failed and so did the clean-up');
    const stuck = env.sandbox.store.getByPath(`${Z1}/STUCK`) as StoredDoc;
    t.equal(stuck.properties['erpSapDocument:complete'], false, 'left incomplete…');
    t.equal((await env.call('GET', 'info&pVersion=0047&contRep=Z1&docId=STUCK')).status, 404, '…which is never served');
    t.equal((await create('STUCK', 'again')).status, 201, 'the next create clears it');
    t.equal((await env.call('GET', 'get&pVersion=0047&contRep=Z1&docId=STUCK')).body.toString(), 'again');

    env.sandbox.faults.hold();
    const both = [create('TWICE', 'one'), create('TWICE', 'two')];
    await env.sandbox.faults.whenHeld(2);
    env.sandbox.faults.release();
    const statuses = (await Promise.all(both)).map((a) => a.status).sort();
    t.same(statuses, [201, 403], 'one wins, the other is told it exists');
    t.same(
      [...env.sandbox.store.childIds((env.sandbox.store.getByPath(Z1) as StoredDoc).uid)]
        .map((id) => (env.sandbox.store.get(id) as StoredDoc).name)
        .filter((n) => n.startsWith('TWICE')),
      ['TWICE'],
      'no second folder is left behind',
    );
    t.equal((await create('EMPTY', '')).status, 201);
    const empty = await env.call('GET', 'get&pVersion=0047&contRep=Z1&docId=EMPTY');
    t.equal(empty.headers['content-length'], '0');
    t.equal((await create('bad/id')).status, 400);
    t.equal((await create('..')).status, 400, 'never . or ..');
    const odd = await env.call('PUT', 'create&pVersion=0047&contRep=Z1&docId=P&compId=data&docProt=x', 'x');
    t.match(odd.error, /docProt "x"/);
    const uuid = 'ea5e1c4a-7c2b-4a53-9d0e-0123456789ab';
    t.equal((await create(uuid, 'stored by SAP under a UUID')).status, 201);
    const byUuid = await env.call('GET', `get&pVersion=0047&contRep=Z1&docId=${uuid}`);
    t.equal(byUuid.body.toString(), 'stored by SAP under a UUID', 'found by path once no document has that id');
    t.match(
      (await env.call('GET', 'get&pVersion=0047&contRep=Z1&docId=EMPTY&compId=note')).error,
      /component note of document EMPTY not found/,
    );
    const young = await servedEnv(t, { connection: { signatures: 'off' } });
    young.sandbox.faults.add({ path: '/upload/', method: 'POST', status: 500, skip: 1, times: 1 });
    young.sandbox.faults.add({ method: 'DELETE', status: 500, times: 1 });
    const first = await young.call('PUT', 'create&pVersion=0047&contRep=Z1&docId=Y&compId=data', 'x');
    t.equal(first.status, 500);
    const second = await young.call('PUT', 'create&pVersion=0047&contRep=Z1&docId=Y&compId=data', 'x');
    t.equal(second.status, 409, 'an incomplete create of a moment ago may still be on its way');
    t.match(second.error, /being stored by another request/);
    const missing = await servedEnv(t, {
      connection: {
        signatures: 'off',
        contentRepositories: [{ contRep: 'Z1', storagePath: '/default-domain/workspaces/nowhere' }],
      },
    });
    const nowhere = await missing.call('PUT', `create&pVersion=0047&contRep=Z1&docId=X&compId=data`, 'x');
    t.equal(nowhere.status, 409);
    t.match(nowhere.error, /storage folder of this content repository is not accessible/);
  },
);

t.test('certificates filed by two replicas at once: one document', async (t) => {
  const env = await servedEnv(t);
  const put = (): Promise<{ status: number }> =>
    env.call('PUT', 'putCert&pVersion=0047&contRep=Z1&authId=x', fixture('dsa.crt'));
  env.sandbox.faults.hold();
  const both = [put(), put()];
  await env.sandbox.faults.whenHeld(2);
  env.sandbox.faults.release();
  t.same(
    (await Promise.all(both)).map((a) => a.status),
    [200, 200],
  );
  t.equal((await env.certificates.list()).length, 1);
  const putRsa = (): Promise<{ status: number }> =>
    env.call('PUT', 'putCert&pVersion=0047&contRep=Z1&authId=y', fixture('rsa.crt'));
  env.sandbox.faults.hold();
  const third = [putRsa(), putRsa()];
  await env.sandbox.faults.whenHeld(2);
  env.sandbox.faults.release();
  t.same(
    (await Promise.all(third)).map((a) => a.status),
    [200, 200],
  );
  t.equal((await env.certificates.list()).length, 2, 'the folder existed: the second certificate document too');
  env.sandbox.faults.add({ path: 'sap-certificates', status: 503, times: 10 });
  t.equal((await put()).status, 500, 'a repository that fails');
});

t.test('TLS from the configured key and certificate', async (t) => {
  const env = await servedEnv(t, {
    server: { tls: { certFile: join(FIXTURES, 'rsa.crt'), keyFile: join(FIXTURES, 'rsa.key') } },
  });
  const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const sent = httpsRequest(
      `https://127.0.0.1:${new URL(env.origin).port}/archivelink/S4H?serverInfo&pVersion=0047`,
      { ca: fixture('rsa.crt'), checkServerIdentity: () => undefined },
      (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode as number, body }));
      },
    );
    sent.on('error', reject);
    sent.end();
  });
  t.equal(answer.status, 200);
  t.match(answer.body, /^serverStatus="running"/);
});

t.test(
  'reading: ranges on a repository that ignores them, info of one component, multipart limits, the URL',
  async (t) => {
    const env = await servedEnv(
      t,
      { connection: { signatures: 'off' }, server: { maxPartBytes: 1024 } },
      { storage: { pageSize: '1' } },
    );
    const content = Buffer.from('0123456789abcdefghij');
    await env.call('PUT', 'create&pVersion=0047&contRep=Z1&docId=R&compId=data', content);
    await env.call('PUT', 'update&pVersion=0047&contRep=Z1&docId=R&compId=note', 'a note');
    env.sandbox.faults.observe = (req) => void delete req.headers.range;
    const ranged = await env.call('GET', 'get&pVersion=0047&contRep=Z1&docId=R&compId=data&fromOffset=3&toOffset=7');
    t.equal(ranged.body.toString(), '34567', 'the repository sent it all; the server cut the range');
    const large = Buffer.alloc(300_000, 'abcdefghij');
    await env.call('PUT', 'update&pVersion=0047&contRep=Z1&docId=R&compId=large', large);
    const middle = await env.call(
      'GET',
      'get&pVersion=0047&contRep=Z1&docId=R&compId=large&fromOffset=70000&toOffset=209999',
    );
    t.same(middle.body, large.subarray(70_000, 210_000), 'a range across many chunks of the whole');
    const all = await env.call('GET', 'docGet&pVersion=0047&contRep=Z1&docId=R');
    t.equal(all.headers['x-numcomps'], '3', 'children read a page at a time');
    env.sandbox.faults.observe = () => undefined;
    const note = await env.call('GET', 'info&pVersion=0047&contRep=Z1&docId=R&compId=note');
    t.equal(note.headers['x-numbercomps'], '1');
    t.match(note.body.toString(), /X-compId: note/);
    t.equal(
      (await env.call('GET', 'get&pVersion=0047&contRep=Z1&docId=R&fromOffset=50')).body.length,
      0,
      'past the end: nothing',
    );
    t.equal((await env.call('GET', 'get&pVersion=0047&contRep=Z1&docId=R&fromOffset=5&toOffset=2')).status, 400);
    t.equal((await env.call('GET', 'get&pVersion=0047&contRep=Z1&docId=R&fromOffset=-5')).status, 400);
    t.equal((await env.call('GET', 'get&pVersion=0047&contRep=Z1&docId=R&fromOffset=x')).status, 400);
    t.equal(
      (await env.call('GET', 'search&pVersion=0047&contRep=Z1&docId=R&compId=data&pattern=x&numResults=0')).status,
      400,
    );
    t.equal(
      (await env.call('GET', 'search&pVersion=0047&contRep=Z1&docId=R&pattern=x')).status,
      400,
      'search needs compId',
    );
    t.equal(
      (await env.call('GET', 'search&pVersion=0047&contRep=Z1&docId=R&compId=data&pattern=x&fromOffset=-5')).status,
      400,
    );
    t.equal(
      (await env.call('GET', 'search&pVersion=0047&contRep=Z1&docId=R&compId=data')).status,
      400,
      'and a pattern',
    );
    t.equal(
      (
        await env.call('GET', 'search&pVersion=0047&contRep=Z1&docId=R&compId=data&pattern=789abc&fromOffset=8')
      ).body.toString(),
      '0;',
      'a hit that starts before fromOffset is not one',
    );
    t.equal((await env.call('GET', 'info&pVersion=0047&contRep=Z1')).status, 400, 'docId is missing');
    t.equal((await env.call('GET', 'info&pVersion=0047&contRep=Z1&docId=')).status, 400);

    const big = `--b\r\nX-compId: data\r\nContent-Type: text/plain\r\n\r\n${'x'.repeat(2048)}\r\n--b--\r\n`;
    const tooBig = await env.call('POST', 'create&pVersion=0047&contRep=Z1&docId=BIG', big, {
      'content-type': 'multipart/form-data; boundary=b',
    });
    t.equal(tooBig.status, 400);
    t.match(tooBig.error, /multipart body/);
    const plain = await env.call('POST', 'create&pVersion=0047&contRep=Z1&docId=BIG', 'x', {
      'content-type': 'text/plain',
    });
    t.match(plain.error, /multipart\/form-data/);
    const noDocId = `--b\r\nX-compId: data\r\n\r\nx\r\n--b--\r\n`;
    const mcreate = await env.call('POST', 'mCreate&pVersion=0047&contRep=Z1&docId=M', noDocId, {
      'content-type': 'multipart/form-data; boundary=b',
    });
    t.match(mcreate.error, /no X-docId/);
    const badDoc = `--b\r\nX-docId: M\r\nX-compId: data\r\n\r\nm\r\n--b\r\nX-docId: a/b\r\nX-compId: data\r\n\r\nx\r\n--b--\r\n`;
    const bad = await env.call('POST', 'mCreate&pVersion=0047&contRep=Z1&docId=M', badDoc, {
      'content-type': 'multipart/form-data; boundary=b',
    });
    t.equal(bad.status, 500);
    t.match(bad.body.toString(), /retCode="500";errorDescription="docId ""a\/b"" is not a document id/);

    const raw = (line: string): Promise<string> =>
      new Promise((resolve) => {
        // Written, not ended: a client that half-closes its side gives up its answer (Node's server
        // ends such a connection), and serverInfo may wait on the repository.
        const socket = connect(Number(new URL(env.origin).port), '127.0.0.1', () =>
          socket.write(`GET ${line} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
        );
        let answer = '';
        socket.on('data', (d) => (answer += d));
        socket.on('end', () => resolve(answer.split('\r\n')[0]));
      });
    t.match(await raw('/archivelink/S4H'), / 400 /, 'no function');
    t.match(await raw('/elsewhere?serverInfo'), / 404 /);
    t.match(await raw('/archivelink/S4H/x?serverInfo'), / 404 /);
    t.match(await raw('/archivelink/S4H?serverInfo&contRep=Z1&contRep=Z1'), / 400 /, 'a parameter twice');
    t.match(
      await raw('/archivelink/S4H?serverInfo&&flag&pVersion=0047'),
      / 200 /,
      'an empty pair, a key without value',
    );
    t.match(await raw('/archivelink/S4H?serverInfo&contRep=Z7'), / 404 /);
    t.match(await raw('/archivelink/S4H?info&contRep=Z1&docId=%E2%82%AC'), / 404 /, 'UTF-8 in a value');
  },
);

t.test('secKey structures: attached content, another content type, no messageDigest, not a signature', async (t) => {
  const env = await servedEnv(t);
  await env.trust('dsa.crt');
  t.equal((await env.call('PUT', urls.createPutA, 'x')).status, 201);
  t.equal((await env.call('GET', urls.infoAAttached)).status, 200, 'content inside, equal to the URL');
  const altered = await env.call(
    'GET',
    urls.infoAAttached.replace('contRep=Z1&docId', 'contRep=Z1&pVersion2=x&docId').replace(/(authId=)CN/, '$1CN'),
  );
  t.equal(altered.status, 200, 'an unsigned parameter added changes nothing');
  const moved = await env.call('GET', urls.infoAAttached.replace(/expiration=(\d+)/, 'expiration=20991231235958'));
  t.match(moved.error, /carries content other than the URL/);
  t.match((await env.call('GET', urls.infoAOtherContentType)).error, /signed content type is missing or not data/);
  const data = encodeURIComponent(fixture('data-content.der').toString('base64'));
  t.match(
    (await env.call('GET', urls.getA.replace(/secKey=[^&]+/, `secKey=${data}`))).error,
    /not a PKCS#7 SignedData/,
  );
  // OpenSSL always signs a messageDigest and a contentType; one taken out leaves the URL unchecked, or its type.
  const without = (type: string): string => {
    const der = Buffer.from(decodeURIComponent(/secKey=([^&]+)/.exec(urls.getA)![1]), 'base64');
    const info = AsnConvert.parse(der, ContentInfo);
    const signed = AsnConvert.parse(info.content, SignedData);
    const [signer] = signed.signerInfos;
    signer.signedAttrs = signer.signedAttrs!.filter((a) => a.attrType !== type);
    signer.signedAttrsRaw = undefined;
    info.content = AsnConvert.serialize(signed);
    const key = encodeURIComponent(Buffer.from(AsnConvert.serialize(info)).toString('base64'));
    return urls.getA.replace(/secKey=[^&]+/, `secKey=${key}`);
  };
  t.match((await env.call('GET', without('1.2.840.113549.1.9.4'))).error, /no messageDigest/);
  t.match((await env.call('GET', without('1.2.840.113549.1.9.3'))).error, /signed content type is missing/);
});

t.test(
  'interrupted filings are completed, missing administration data is 409, a broken stream is cut off',
  async (t) => {
    const env = await servedEnv(t, { server: { maxCertificateBytes: 1024 } });
    const put = (): Promise<{ status: number; error?: string }> =>
      env.call('PUT', 'putCert&pVersion=0047&contRep=Z1&authId=x', fixture('dsa.der'));
    env.sandbox.faults.add({ path: 'Document.AddFacet', status: 500, times: 10 });
    t.equal((await put()).status, 500, 'cut short before the label');
    env.sandbox.faults.clear();
    t.same(await env.certificates.list(), [], 'a document without the label is no certificate');
    env.sandbox.faults.add({ method: 'PUT', path: '/api/v1/id/', status: 500, times: 10 });
    t.equal((await put()).status, 500, 'cut short before the properties');
    env.sandbox.faults.clear();
    t.match(await env.certificates.list(), [{ status: 'pending', fingerprint: '', pem: '' }], 'labelled, nothing else');
    t.equal((await put()).status, 200, 'the next putCert completes it');
    t.match(await env.certificates.list(), [{ status: 'pending', fingerprint: /^[0-9A-F]{64}$/ }]);
    const large = await env.call('PUT', 'putCert&pVersion=0047&contRep=Z1&authId=x', Buffer.alloc(2048, 65));
    t.equal(large.status, 406);
    t.match(large.error, /larger than 1024 bytes/);

    const lost = await servedEnv(t, {}, { storage: { adminPath: '/default-domain/workspaces/nowhere' } });
    const nowhere = await lost.call('PUT', 'putCert&pVersion=0047&contRep=Z1&authId=x', fixture('dsa.crt'));
    t.equal(nowhere.status, 409);
    t.match(nowhere.error, /administration data inaccessible/);

    const open = await servedEnv(t, { connection: { signatures: 'off' } });
    await open.call('PUT', 'create&pVersion=0047&contRep=Z1&docId=S&compId=data', 'first');
    await open.call('PUT', 'update&pVersion=0047&contRep=Z1&docId=S&compId=note', 'second');
    open.sandbox.faults.add({ path: '@blob', status: 500, skip: 1, times: 10 });
    await t.rejects(
      open.call('GET', 'docGet&pVersion=0047&contRep=Z1&docId=S'),
      'the answer under way is broken off, not completed',
    );
    open.sandbox.faults.clear();
    const folder = open.sandbox.store.getByPath(`${Z1}/S`) as StoredDoc;
    open.sandbox.store.mirror(folder.uid, { ...folder, properties: { ...folder.properties, 'dc:created': null } });
    t.equal(
      (await open.call('GET', 'info&pVersion=0047&contRep=Z1&docId=S')).headers['x-datec'],
      '1970-01-01',
      'no creation date: the epoch',
    );
    t.match((await open.call('PUT', 'create&pVersion=0047&contRep=Z1&compId=data', 'x')).error, /docId "" is missing/);
    t.match((await open.call('PUT', 'update&pVersion=0047&contRep=Z1&compId=data', 'x')).error, /docId is missing/);
    const named = `--b\r\nContent-Disposition: form-data; name="data"\r\n\r\nfrom the disposition\r\n--b--\r\n`;
    t.equal(
      (
        await open.call('POST', 'create&pVersion=0047&contRep=Z1&docId=CD', named, {
          'content-type': 'multipart/form-data; boundary=b',
        })
      ).status,
      201,
    );
    t.equal(
      (await open.call('GET', 'get&pVersion=0047&contRep=Z1&docId=CD&compId=data')).body.toString(),
      'from the disposition',
    );
  },
);

t.test(
  "putCert, unsigned by the protocol: at most maxPendingCertificates wait per content repository, the oldest giving way, so strangers never keep SAP's own out",
  async (t) => {
    const env = await servedEnv(t, { server: { maxPendingCertificates: 2 } });
    const put = (authId: string, file = 'dsa.der'): Promise<{ status: number; error?: string }> =>
      env.call('PUT', `putCert&pVersion=0047&contRep=Z1&authId=${authId}`, fixture(file));
    const waiting = async (): Promise<string[]> =>
      (await env.certificates.list())
        .filter((c) => c.status === 'pending')
        .map((c) => c.authId)
        .sort();
    t.equal((await put('stranger-1')).status, 200);
    t.equal((await put('stranger-2')).status, 200);
    t.equal((await put('stranger-2')).status, 200, 'one already filed is no new filing');
    t.same(await waiting(), ['stranger-1', 'stranger-2']);
    t.equal((await put(FIXTURE_AUTH_ID)).status, 200, "SAP's own, with the queue full, is filed");
    t.same(await waiting(), [decodeURIComponent(FIXTURE_AUTH_ID), 'stranger-2'], 'in place of the oldest');
    const sap = (await env.certificates.list()).find((c) => c.authId === decodeURIComponent(FIXTURE_AUTH_ID))!;
    await env.certificates.setStatus(sap, 'approved');
    t.equal((await put('stranger-3')).status, 200);
    t.equal((await put('stranger-4')).status, 200);
    t.same(await waiting(), ['stranger-3', 'stranger-4']);
    t.equal(
      (await env.certificates.list()).find((c) => c.uid === sap.uid)?.status,
      'approved',
      'an approved certificate never gives way',
    );
  },
);

t.test(
  'a request refused while its body is still coming: the rest is read off so that SAP gets the answer, for lingerSeconds at most',
  async (t) => {
    const env = await servedEnv(t, { server: { lingerSeconds: 1 } });
    const port = Number(new URL(env.origin).port);
    const opened = (): Promise<{ socket: ReturnType<typeof connect>; answers: () => string }> =>
      new Promise((resolve) => {
        let text = '';
        const socket = connect(port, '127.0.0.1', () => resolve({ socket, answers: () => text }));
        socket.on('data', (d: Buffer) => (text += d.toString()));
      });
    const head = (length: number): string =>
      `PUT /archivelink/S4H?create&pVersion=0047&contRep=Z1&docId=L&compId=data HTTP/1.1\r\nHost: x\r\nContent-Length: ${length}\r\n\r\n`;
    const answered = (answers: () => string, count: number): Promise<void> =>
      until(() => (answers().match(/HTTP\/1\.1 /g) ?? []).length >= count, `${count} answers`);

    const { socket, answers } = await opened();
    socket.write(head(2_000_000) + 'x'.repeat(1_000));
    await answered(answers, 1);
    t.match(answers(), /^HTTP\/1\.1 401 /, 'refused before its body is read (unsigned)');
    t.notMatch(answers(), /Connection: close/i);
    socket.write('x'.repeat(1_999_000));
    socket.write(head(0));
    await answered(answers, 2);
    t.match(
      answers(),
      /HTTP\/1\.1 401 [\s\S]*HTTP\/1\.1 401 /,
      'the rest was read off: the connection serves the next request',
    );
    socket.destroy();

    const stalled = await opened();
    stalled.socket.write(head(2_000_000) + 'x'.repeat(1_000));
    await once(stalled.socket, 'close');
    t.match(
      stalled.answers(),
      /^HTTP\/1\.1 401 /,
      'a client that stops sending: answered, then closed after lingerSeconds',
    );
  },
);

t.test(
  'legacy digests (MD5, RIPEMD-160) only where the content repository accepts them; content repositories as long as OAC0 allows',
  async (t) => {
    const repositories = (legacyDigests: string[]): Record<string, unknown> => ({
      contentRepositories: [
        { contRep: 'Z1', storagePath: Z1, legacyDigests },
        { contRep: 'ZDMS_2017', storagePath: '/default-domain/workspaces/sap-archive' },
      ],
    });
    const strict = await servedEnv(t, { connection: repositories([]) });
    await strict.trust('dsa.crt');
    await strict.trust('rsa.crt', 'CN%3DS4H-RSA,OU%3Dconnect2erp,O%3DSAP%20Trust%20Community,C%3DDE');
    t.equal((await strict.call('PUT', urls.createPutA, 'x')).status, 201);
    const md5 = await strict.call('GET', urls.infoARsaMd5);
    t.equal(md5.status, 401);
    t.equal(md5.error, 'secKey uses the legacy digest md5, not accepted for this content repository (legacyDigests)');
    t.equal((await strict.call('GET', urls.infoARsaRipemd160)).status, 401);

    const legacy = await servedEnv(t, { connection: repositories(['md5', 'ripemd160']) });
    await legacy.trust('dsa.crt');
    await legacy.trust('rsa.crt', 'CN%3DS4H-RSA,OU%3Dconnect2erp,O%3DSAP%20Trust%20Community,C%3DDE');
    t.equal((await legacy.call('PUT', urls.createPutA, 'x')).status, 201);
    t.equal((await legacy.call('GET', urls.infoARsaMd5)).status, 200, 'MD5 accepted where turned on');
    t.equal((await legacy.call('GET', urls.infoARsaRipemd160)).status, 200, 'RIPEMD-160 too');

    const kpro = await legacy.call('GET', 'serverInfo&pVersion=0047&contRep=ZDMS_2017');
    t.equal(kpro.status, 200, 'a KPro repository of 9 characters is configured and answered');
  },
);

t.test(
  'getCert lists the active certificates; resultAs=html answers a page; info parts name charset and version',
  async (t) => {
    const env = await servedEnv(t);
    const before = await env.call('GET', 'getCert&pVersion=0046&contRep=Z1');
    t.equal(before.status, 200);
    t.equal(before.body.toString(), 'security="1";\r\n', 'signatures checked, no certificate yet');
    await env.trust('dsa.crt');
    // Filed but never approved: not active.
    await env.call('PUT', 'putCert&pVersion=0047&contRep=Z1&authId=other', fixture('rsa.crt'));
    const lines = (await env.call('GET', 'getCert&pVersion=0046&contRep=Z1')).body.toString().split('\r\n');
    t.equal(lines.length, 3);
    t.match(
      lines[1],
      /^Subject="C=DE, O=SAP Trust Community, OU=connect2erp, CN=S4H";Issuer="C=DE, .*CN=S4H";serialNumber="[0-9A-F]+";notBefore="\d{4}-.*Z";notAfter="2\d{3}-.*Z";certificate="3082[0-9a-f]+";$/,
    );
    t.equal((await env.call('GET', 'getCert&pVersion=0046&contRep=Q9')).status, 404, 'a content repository not served');
    const off = await servedEnv(t, { connection: { signatures: 'off' } });
    t.equal((await off.call('GET', 'getCert&pVersion=0046&contRep=Z1')).body.toString(), 'security="2";\r\n');

    t.equal((await env.call('PUT', urls.createPutA, 'x')).status, 201);
    const info = await env.call('GET', urls.infoA);
    t.match(info.body.toString(), /Content-Type: application\/octet-stream; charset=; version=\r\n/);
    const page = await env.call('GET', `${urls.infoA}&resultAs=html`);
    t.equal(page.headers['content-type'], 'text/html; charset=us-ascii');
    t.match(
      page.body.toString(),
      new RegExp(`<title>Document ${docIds.A}</title>[\\s\\S]*<th>X-compId</th><td>data</td>`),
    );
    t.equal(
      (await env.call('GET', `${urls.infoA}&resultAs=ascii`)).headers['content-type']?.toString().split(';')[0],
      'multipart/form-data',
    );
    t.equal((await env.call('GET', `${urls.infoA}&resultAs=xml`)).error, 'resultAs "xml" is neither ascii nor html');
    const server = await env.call('GET', 'serverInfo&pVersion=0047&resultAs=html');
    t.match(server.body.toString(), /<th>serverStatus<\/th><td>running<\/td>[\s\S]*<th>contRep<\/th><td>Z1<\/td>/);
    t.match(
      (await env.call('GET', 'serverInfo&pVersion=0047&contRep=Z1&resultAs=html')).body.toString(),
      /<title>connect2erp content server<\/title>/,
    );
  },
);

t.test('a client that leaves, downloading or uploading: one access line at info, no error', async (t) => {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new PassThrough();
  stream.on('data', (line: Buffer) => lines.push(JSON.parse(line.toString()) as Record<string, unknown>));
  const env = await servedEnv(t, {
    connection: { signatures: 'off' },
    log: createLogger({ stream, json: true, level: 'info' }),
  });
  const port = Number(new URL(env.origin).port);
  t.equal(
    (await env.call('PUT', 'create&pVersion=0047&contRep=Z1&docId=BIG&compId=data', Buffer.alloc(8 << 20, 1))).status,
    201,
  );
  const leaving = async (request: string, leaveWhen: (received: number) => boolean): Promise<void> => {
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    let received = 0;
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (leaveWhen(received)) socket.destroy();
    });
    socket.write(request);
    if (leaveWhen(0)) socket.destroy();
    await once(socket, 'close');
  };
  const accessLines = (docId: string): Array<Record<string, unknown>> =>
    lines.filter((l) => l.message === 'request' && l.docId === docId);

  await leaving(
    'GET /archivelink/S4H?get&pVersion=0047&contRep=Z1&docId=BIG HTTP/1.1\r\nHost: x\r\n\r\n',
    (n) => n > 0,
  );
  await until(() => accessLines('BIG').length === 2, 'the abandoned get is logged');
  t.match(accessLines('BIG')[1], { level: 'info', command: 'get', status: 200, clientGone: true });

  const head = (command: string, docId: string, type = 'application/pdf'): string =>
    `${command === 'create' ? 'PUT' : 'POST'} /archivelink/S4H?${command}&pVersion=0047&contRep=Z1&docId=${docId}&compId=data HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: 5000000\r\n\r\n`;
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write(head('create', 'CUT') + 'x'.repeat(100_000));
  await until(() => env.sandbox.store.getByPath(`${Z1}/CUT`) !== undefined, 'the create has begun');
  socket.destroy();
  await until(() => accessLines('CUT').length === 1, 'the cut create is logged');
  t.match(accessLines('CUT')[0], { level: 'info', status: 499, clientGone: true });

  const multipart = connect(port, '127.0.0.1');
  await once(multipart, 'connect');
  multipart.write(
    head('mCreate', 'MCUT', 'multipart/form-data; boundary=b') +
      `--b\r\nX-docId: MCUT\r\nX-compId: data\r\n\r\n${'y'.repeat(100_000)}`,
  );
  await until(() => env.sandbox.store.getByPath(`${Z1}/MCUT`) !== undefined, 'the mCreate has begun');
  multipart.destroy();
  await until(() => accessLines('MCUT').length === 1, 'the cut mCreate is logged');
  t.match(accessLines('MCUT')[0], { level: 'info', status: 499, clientGone: true });
  await until(() => env.sandbox.store.getByPath(`${Z1}/CUT`) === undefined, 'the cut create is cleared away');
  t.same(
    lines.filter((l) => l.level === 'error'),
    [],
    'no error logged',
  );
});

t.test('/metrics: requests per command and status, bytes, security refusals, the repository latency', async (t) => {
  const env = await servedEnv(t, { connection: { signatures: 'off' } });
  await env.call('PUT', 'create&pVersion=0047&contRep=Z1&docId=MET&compId=data', Buffer.alloc(10_000, 1));
  await env.call('GET', 'get&pVersion=0047&contRep=Z1&docId=MET');
  // A request the repository drops: its latency is counted as failed.
  env.sandbox.faults.add({ path: '/path/', drop: true, times: 10 });
  await env.call('GET', 'get&pVersion=0047&contRep=Z1&docId=GONE');
  env.sandbox.faults.clear();
  // A request undici began before the metrics did is not timed (nothing to time it from).
  channel('undici:request:headers').publish({ request: { method: 'GET' }, response: { statusCode: 200 } });
  const signed = await servedEnv(t);
  t.equal((await signed.call('GET', 'get&pVersion=0047&contRep=Z1&docId=MET')).status, 401);

  const text = async (origin: string): Promise<string> => {
    const answer = await request(`${origin}/metrics`);
    t.match(answer.headers['content-type'], /^text\/plain/);
    return answer.body.text();
  };
  const metrics = await text(env.origin);
  t.match(metrics, /connect2erp_serve_requests_total\{command="create",status="201"\} 1\n/);
  t.match(metrics, /connect2erp_serve_requests_total\{command="get",status="200"\} 1\n/);
  t.match(metrics, /connect2erp_serve_bytes_total\{command="create",direction="received"\} 10\d{3}\n/);
  t.match(metrics, /connect2erp_serve_bytes_total\{command="get",direction="sent"\} 10\d{3}\n/);
  t.match(metrics, /connect2erp_serve_repository_request_seconds_count\{method="GET",outcome="200"\} [1-9]/);
  t.match(metrics, /connect2erp_serve_repository_request_seconds_count\{method="GET",outcome="failed"\} [1-9]/);
  t.match(metrics, /connect2erp_serve_process_resident_memory_bytes /);
  t.match(await text(signed.origin), /connect2erp_serve_security_refusals_total\{command="get"\} 1\n/);

  const off = await servedEnv(t, { server: { metrics: false } });
  t.equal((await request(`${off.origin}/metrics`)).statusCode, 404, 'turned off: no such path');
});

t.test('CORS for the origins listed; more requests than maxRequestsInFlight: 503 with Retry-After', async (t) => {
  const env = await servedEnv(t, {
    connection: { signatures: 'off' },
    server: { corsOrigins: ['https://fiori.example.com'], maxRequestsInFlight: 1 },
  });
  const info = 'info&pVersion=0047&contRep=Z1&docId=CORS';
  t.equal((await env.call('PUT', 'create&pVersion=0047&contRep=Z1&docId=CORS&compId=data', 'x')).status, 201);
  const listed = await env.call('GET', info, undefined, { origin: 'https://fiori.example.com' });
  t.equal(listed.headers['access-control-allow-origin'], 'https://fiori.example.com');
  t.match(listed.headers['access-control-expose-headers'], /X-ErrorDescription/);
  t.equal(listed.headers.vary, 'Origin');
  const other = await env.call('GET', info, undefined, { origin: 'https://elsewhere.example.com' });
  t.equal(other.status, 200);
  t.equal(
    other.headers['access-control-allow-origin'],
    undefined,
    'another origin: its browser refuses the page the answer',
  );
  const preflight = await new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
    const sent = httpRequest(
      `${env.script}?${info}`,
      { method: 'OPTIONS', headers: { origin: 'https://fiori.example.com', 'access-control-request-method': 'GET' } },
      (res) => {
        res.resume();
        resolve({ status: res.statusCode as number, headers: res.headers });
      },
    );
    sent.on('error', reject);
    sent.end();
  });
  t.equal(preflight.status, 204);
  t.equal(preflight.headers['access-control-allow-methods'], 'GET, PUT, POST');
  const none = await servedEnv(t, { connection: { signatures: 'off' } });
  t.equal(
    (await none.call('GET', 'serverInfo&pVersion=0047', undefined, { origin: 'https://fiori.example.com' })).headers
      .vary,
    undefined,
    'no origins listed: no CORS at all',
  );

  // The repository holds the first request: it is the one in flight.
  env.sandbox.faults.hold();
  const first = env.call('GET', info);
  await env.sandbox.faults.whenHeld(1);
  const second = await env.call('GET', info);
  t.equal(second.status, 503);
  t.equal(second.headers['retry-after'], '2');
  t.equal(second.error, 'more requests than this server takes at once; try again');
  env.sandbox.faults.release();
  t.equal((await first).status, 200);
  t.equal((await env.call('GET', info)).status, 200, 'once it is done, the next is taken');
});
