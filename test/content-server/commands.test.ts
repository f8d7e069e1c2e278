import t from 'tap';
import { SIGNED, servedEnv } from '../helpers/content-server.js';

const { urls, docIds } = SIGNED;
const PDF = Buffer.from('%PDF-1.4 an outgoing document from SAP, 0123456789 abcdef ABCDEF\n');

t.test(
  "SAP's basic sequence with OpenSSL-signed URLs: create, info, get, search, update, append, docGet, delete",
  async (t) => {
    const env = await servedEnv(t);
    await env.trust('dsa.crt');
    const created = await env.call('PUT', urls.createPutA, PDF, { 'content-type': 'application/pdf' });
    t.equal(created.status, 201, String(created.error));
    t.equal((await env.call('PUT', urls.createPutA, PDF)).status, 403, 'a second create of the same docId');

    const info = await env.call('GET', urls.infoA);
    t.equal(info.status, 200, String(info.error));
    t.equal(info.headers['x-numbercomps'], '1');
    t.equal(info.headers['x-numcomps'], '1');
    t.equal(info.headers['x-contentrep'], 'Z1');
    t.equal(info.headers['x-docid'], docIds.A);
    const text = info.body.toString('latin1');
    t.match(text, /X-compId: data\r\n/);
    t.match(text, new RegExp(`X-Content-Length: ${PDF.length}\\r\\n`));
    t.match(text, /Content-Length: 0\r\n/);
    t.match(String(info.headers['content-type']), /^multipart\/form-data; boundary=/);

    const got = await env.call('GET', urls.getA);
    t.equal(got.status, 200);
    t.same(got.body, PDF, 'the bytes SAP stored');
    const range = await env.call('GET', `${urls.getA}&compId=data&fromOffset=5&toOffset=9`);
    t.equal(range.status, 200, 'a range is 200, not 206');
    t.equal(range.body.toString(), PDF.subarray(5, 10).toString());

    const search = await env.call('GET', `${urls.searchA}&compId=data&pattern=abcdef&caseSensitive=n&numResults=5`);
    t.equal(
      search.body.toString(),
      `2;${PDF.indexOf('abcdef')};${PDF.indexOf('ABCDEF')};`,
      'case-insensitive, both hits',
    );
    const backwards = await env.call(
      'GET',
      `${urls.searchA}&compId=data&pattern=abcdef&fromOffset=65&toOffset=0&numResults=1`,
    );
    t.equal(backwards.body.toString(), `1;${PDF.indexOf('ABCDEF')};`, 'backwards from fromOffset: the nearest first');
    t.equal(
      (await env.call('PUT', urls.updatePutADescr, Buffer.from('Stra\xdfe \xd6L \xd7 \xf6l', 'latin1'))).status,
      200,
    );
    const latin = await env.call('GET', `${urls.searchA}&compId=descr&pattern=%F6l&numResults=5`);
    t.equal(latin.body.toString(), '2;7;12;', 'Latin-1 letters fold too (\xd6 and \xf6), the sign \xd7 stays');
    const times = await env.call('GET', `${urls.searchA}&compId=descr&pattern=%D7`);
    t.equal(times.body.toString(), '1;10;');
    const none = await env.call('GET', `${urls.searchA}&compId=data&pattern=zzz`);
    t.equal(none.body.toString(), '0;');

    const descr = Buffer.from('description\n');
    t.equal((await env.call('PUT', urls.updatePutADescr, descr, { 'content-type': 'text/plain' })).status, 200);
    const bare = await env.call('GET', urls.infoA.replace('pVersion=0047&', ''));
    t.equal(bare.headers['x-pversion'], '0047', 'no pVersion in the URL: this server answers 0047');
    t.equal((await env.call('PUT', urls.appendAData, Buffer.from('MORE'))).status, 200);
    const whole = await env.call('GET', urls.docGetA);
    t.equal(whole.status, 200);
    t.equal(whole.headers['x-numcomps'], '2');
    const body = whole.body.toString('latin1');
    t.ok(body.includes(`${PDF.toString('latin1')}MORE\r\n`), 'data with the appended bytes');
    t.ok(body.includes('description\n\r\n'), 'descr');
    t.match(body, new RegExp(`Content-Length: ${PDF.length + 4}\\r\\n`), 'part length = component length');

    t.equal((await env.call('GET', urls.deleteADescr)).status, 200);
    t.equal((await env.call('GET', urls.infoA)).headers['x-numbercomps'], '1');
    t.equal((await env.call('GET', urls.deleteA)).status, 200);
    const gone = await env.call('GET', urls.infoA);
    t.equal(gone.status, 404);
    t.match(gone.error, /not found/);
  },
);
