import t from 'tap';
import { FIXTURE_AUTH_ID, SIGNED, fixture, openableDocument, servedEnv } from '../helpers/content-server.js';

const { urls, docIds } = SIGNED;
const CONTENT = Buffer.from('stored by SAP');

/** A URL with its secKey (and nothing else) removed. */
const unsigned = (url: string): string => url.replace(/&secKey=[^&]*/, '');

t.test('every refusal is 401 with its reason in X-ErrorDescription', async (t) => {
  const env = await servedEnv(t);
  await env.trust('dsa.crt');
  t.equal((await env.call('PUT', urls.createPutA, CONTENT)).status, 201);

  const cases: Array<[string, string, RegExp]> = [
    ['unsigned', unsigned(urls.getA), /not signed/],
    [
      'an altered signed parameter',
      urls.getA.replace(`docId=${docIds.A}`, `docId=${docIds.B}`),
      /digest does not match/,
    ],
    ['an altered contRep', urls.getA.replace('contRep=Z1', 'contRep=Z2'), /not served here/],
    ['expired', urls.getAExpired, /expired at 20200101000000 UTC/],
    ['the wrong access mode', urls.getAWithCreateMode, /accessMode "c" does not allow get/],
    ['a key nobody approved', urls.infoAStranger, /no approved certificate/],
    ['a certificate filed but not approved', urls.infoARsa, /no approved certificate of CN=S4H-RSA/],
    ['a broken secKey', urls.getA.replace(/secKey=[^&]*/, 'secKey=AAAA'), /not a PKCS#7/],
    [
      'a signed URL without its expiration',
      urls.getA.replace(/&expiration=\d+/, ''),
      /needs accessMode, authId and expiration/,
    ],
  ];
  for (const [what, query, reason] of cases) {
    const answer = await env.call('GET', query);
    t.equal(answer.status, what === 'an altered contRep' ? 404 : 401, what);
    t.match(answer.error, reason, what);
    t.match(answer.body.toString(), reason, `${what}: the body says it too`);
  }
  t.equal((await env.call('GET', urls.getA)).status, 200, 'the untouched URL still works');

  // putCert for RSA but no approval yet:
  const rsaAuthId = FIXTURE_AUTH_ID.replace('CN%3DS4H', 'CN%3DS4H-RSA');
  t.equal(
    (await env.call('PUT', `putCert&pVersion=0047&contRep=Z1&authId=${rsaAuthId}`, fixture('rsa.crt'))).status,
    200,
  );
  const pending = await env.call('GET', urls.infoARsa);
  t.equal(pending.status, 401);
  t.match(pending.error, /waits for an administrator's approval/);
  const rsa = (await env.certificates.list()).find((c) => c.authId.includes('S4H-RSA'))!;
  await env.certificates.setStatus(rsa, 'approved');
  t.equal((await env.call('GET', urls.infoARsa)).status, 200, 'approved: RSA/SHA-256 signatures pass');
  await env.certificates.setStatus(rsa, 'revoked');
  t.equal((await env.call('GET', urls.infoARsa)).status, 401, 'revoked: refused again');
});

t.test(
  'a badly signed URL is refused with 401 even while the repository fails: it learns nothing of the repository',
  async (t) => {
    const env = await servedEnv(t, { server: { certificateRefreshSeconds: 600 } });
    await env.trust('dsa.crt');
    t.equal((await env.call('PUT', urls.createPutA, CONTENT)).status, 201);
    t.equal((await env.call('GET', urls.getA)).status, 200, 'the certificate list is read, and kept');

    env.sandbox.faults.add({ method: 'GET', status: 500, times: 100 });
    const altered = await env.call('GET', urls.getA.replace(`docId=${docIds.A}`, `docId=${docIds.B}`));
    t.equal(altered.status, 401);
    t.match(altered.error, /digest does not match/);
    const failing = await env.call('GET', urls.getA);
    t.equal(failing.status, 500, 'the same URL, signed as it should be, is told of the failure');
    env.sandbox.faults.clear();
    t.equal((await env.call('GET', urls.getA)).status, 200, 'and the server goes on');
  },
);

t.test('docProt decides what needs a signature; a read-delete URL serves for delete', async (t) => {
  const env = await servedEnv(t);
  await env.trust('dsa.crt');
  t.equal(
    (await env.call('PUT', unsigned(urls.createPutFUnprotected), CONTENT)).status,
    401,
    'creating needs a signature (the server default protection includes c)',
  );
  t.equal((await env.call('PUT', urls.createPutFUnprotected, CONTENT)).status, 201);
  const open = await env.call('GET', `get&pVersion=0047&contRep=Z1&docId=${docIds.F}`);
  t.equal(open.status, 200, 'docProt= (empty): read without a signature');
  t.same(open.body, CONTENT);

  t.equal((await env.call('PUT', urls.createPutA, CONTENT)).status, 201);
  t.equal((await env.call('GET', unsigned(urls.getA))).status, 401, 'docProt=rud: reading needs one');
  t.equal(
    (await env.call('GET', urls.getAReadDelete.replace('get&', 'delete&'))).status,
    200,
    'accessMode=rd reused for delete',
  );
  t.equal((await env.call('GET', urls.infoA)).status, 404);
});

t.test(
  'an unknown document answers 404 only to a signed URL; an unknown connection or function is refused',
  async (t) => {
    const env = await servedEnv(t);
    await env.trust('dsa.crt');
    t.equal((await env.call('GET', urls.infoA)).status, 404);
    t.equal((await env.call('GET', unsigned(urls.infoA))).status, 401, 'unsigned callers learn nothing');
    const other = await fetch(`${env.origin}/archivelink/OTHER?serverInfo&pVersion=0047`);
    t.equal(other.status, 404);
    t.match(other.headers.get('x-errordescription'), /connection OTHER is not configured/);
    const unknown = await env.call('GET', 'frobnicate&pVersion=0047&contRep=Z1');
    t.equal(unknown.status, 400);
    t.match(unknown.error, /unknown function/);
    const method = await env.call('PUT', urls.getA);
    t.equal(method.status, 400);
    t.match(method.error, /get takes GET, not PUT/);
  },
);

t.test('with signatures off (an explicit setting), unsigned URLs pass', async (t) => {
  const env = await servedEnv(t, { connection: { signatures: 'off' } });
  t.equal((await env.call('PUT', unsigned(urls.createPutA), CONTENT)).status, 201);
  t.same((await env.call('GET', unsigned(urls.getA))).body, CONTENT);
});

t.test(
  "a refused get of a job's document makes the repository read none of its content; an allowed one reads it once",
  async (t) => {
    const env = await servedEnv(t);
    const uid = await openableDocument(env, 'invoice-8.pdf');
    let downloads = 0;
    env.sandbox.faults.observe = (req) => void (req.url?.includes('@blob') && downloads++);
    const signed = env.caller.url('get', [['docId', uid]]);
    const query = signed.slice(signed.indexOf('?') + 1);
    for (const [what, refused] of [
      ['unsigned', unsigned(query)],
      // Its last character changed, whatever it was (a uid ending in 0 once made this no change at all).
      [
        'an altered signed parameter',
        query.replace(`docId=${uid}`, `docId=${uid.slice(0, -1)}${uid.endsWith('0') ? '1' : '0'}`),
      ],
      ['a broken secKey', query.replace(/secKey=[^&]*/, 'secKey=AAAA')],
    ]) {
      const answer = await env.call('GET', refused);
      t.equal(answer.status, 401, what);
    }
    t.equal(downloads, 0, 'nothing of the content was asked for');
    const allowed = await env.call('GET', query);
    t.equal(allowed.status, 200);
    t.equal(downloads, 1, 'the content once, for the allowed get');
  },
);
