import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import got from 'got';
import { get as httpGet } from 'node:http';
import t, { type Test } from 'tap';
import { CookieJar } from 'tough-cookie';
import { uploadFile } from '../sandbox/demo.js';
import { templateYaml } from '../src/config/templates.js';
import { documentLinkPath, signedQuery } from '../src/document-link.js';
import { servedEnv, type ServedEnv } from './helpers/content-server.js';
import { cli } from './helpers/run-cli.js';

// Runs over real HTTP: the sandboxes, the job and `serve`.
t.setTimeout(120_000);

/**
 * Link by reference: SAP keeps a URL attachment (the attachment service's CreateUrlAsAttachment)
 * that points at the document, opened through `serve` with a signed, expiring link, or in Web UI.
 */

const KEY = 'k'.repeat(40);
const MB = 1024 * 1024;
const OLD_KEY = 'o'.repeat(40);

/** S4H's documentLinks in erpHttp.yaml, and the link task over Rest with the link-by-reference template. */
function linkByReference(env: ServedEnv, links: string): void {
  const erp = join(env.location.configDir, 'erpHttp.yaml');
  writeFileSync(erp, readFileSync(erp, 'utf8').replace(/( {4}maxConcurrentCalls: .*\n)/, `$1${links}`));
  const task = join(env.location.jobsDir, 'link.yaml');
  const yaml = readFileSync(task, 'utf8').replace(/^function: RFC.*$/m, 'function: Rest');
  writeFileSync(task, `${yaml}${templateYaml('link-by-reference', 'Rest') as string}`);
}

const viaServe = (env: ServedEnv, key = KEY): string =>
  `    documentLinks:\n      via: serve\n      url: ${env.origin}/\n      key: ${key}\n      validityDays: 30\n`;

async function servedLinks(t: Test): Promise<ServedEnv> {
  const env = await servedEnv(t, { connection: { documentLinks: { keys: [KEY, OLD_KEY] } } });
  linkByReference(env, viaServe(env));
  return env;
}

/** An invoice labelled, given its object key, ready for the link. */
async function invoice(env: ServedEnv, name: string, objectId: string): Promise<string> {
  const uid = await env.upload('ERP/Invoices', name);
  await env.job({ task: 'link' });
  env.fill(uid, { 'erpCreateALDocument:erpObjectId': objectId });
  return uid;
}

const open = (url: string) => got(url, { throwHttpErrors: false, responseType: 'buffer', retry: { limit: 0 } });

t.test('a URL attachment points at the document, and serve opens it while the link is signed and valid', async (t) => {
  const env = await servedLinks(t);
  const uid = await invoice(env, 'invoice-7.pdf', '510560010072026');
  const dry = await env.run(true);
  // A plan never shows a link that would open the document.
  t.match(dry.plannedCalls, [{ call: /CreateUrlAsAttachment\?.*expires%3D\d+%26signature%3D\*\*\*/ }]);
  t.match(dry.tasks.link.documents, [
    { planned: { values: { Url: /\/documents\/S4H\/Z1\/[^?]+\?expires=\d+&signature=\*\*\*$/ } } },
  ]);
  const before = Date.now();
  const run = await env.job({ task: 'link' });
  t.same(run.tasks.link.counts, { DONE: 1 }, JSON.stringify(run.problems));
  t.equal(env.erp.tables.attachments.length, 1);
  const [attachment] = env.erp.tables.attachments;
  const docId = String(env.props(uid)['erpHttpContent:docId']);
  t.match(attachment, {
    BusinessObjectTypeName: 'BKPF',
    LinkedSAPObjectKey: '510560010072026',
    FileName: 'invoice-7.pdf',
    MimeType: 'text/url',
    FileSize: '0',
  });
  const link = new URL(attachment.DocumentURL);
  t.equal(
    `${link.origin}${link.pathname}`,
    `${env.origin}/documents/S4H/Z1/${docId}`,
    'the document named as serve finds it',
  );
  const expires = Number(link.searchParams.get('expires')) * 1000;
  t.ok(expires >= before + 30 * 86_400_000 - 1000 && expires <= Date.now() + 30 * 86_400_000, 'valid for validityDays');
  t.match(env.props(uid)['erpTaskStatus:erpReference'], /^BKPF 510560010072026 0000000001$/);
  t.notMatch(JSON.stringify(run), link.searchParams.get('signature'), 'the signature in no report');

  const opened = await open(attachment.DocumentURL);
  t.equal(opened.statusCode, 200);
  t.equal(opened.headers['content-type'], 'application/pdf');
  t.equal(opened.headers['cache-control'], 'private, no-store');
  t.equal(opened.headers['content-security-policy'], 'sandbox', 'an uploaded page is shown, never run');
  t.equal(opened.body.toString(), '%PDF-1.4 sample invoice-7.pdf', "the repository's content, as SAP users see it");

  // Another document's name under this signature, a later expiry, an unknown key: refused.
  const other = await env.upload('ERP/Invoices', 'other.pdf');
  const forged = attachment.DocumentURL.replace(docId, other);
  t.equal((await open(forged)).statusCode, 403, 'the signature covers the document');
  const later = attachment.DocumentURL.replace(/expires=\d+/, `expires=${Math.floor(expires / 1000) + 1}`);
  t.equal((await open(later)).body.toString(), "the link is not signed with this content server's key\n");
  const path = documentLinkPath('S4H', 'Z1', docId);
  const expired = await open(`${env.origin}${path}?${signedQuery(KEY, path, Math.floor(Date.now() / 1000) - 60)}`);
  t.equal(expired.statusCode, 403);
  t.equal(expired.body.toString(), 'the link has expired\n');
  const rotated = await open(`${env.origin}${path}?${signedQuery(OLD_KEY, path, Math.floor(Date.now() / 1000) + 60)}`);
  t.equal(rotated.statusCode, 200, 'an earlier key still listed opens its links');
  const stranger = 's'.repeat(40);
  t.equal((await open(`${env.origin}${path}?${signedQuery(stranger, path, 9_999_999_999)}`)).statusCode, 403);
  t.equal((await open(`${env.origin}${path}`)).body.toString(), 'the link has no valid expiry\n');
  const missing = documentLinkPath('S4H', 'Z1', '00000000-0000-4000-8000-000000000000');
  const gone = await open(`${env.origin}${missing}?${signedQuery(KEY, missing, 9_999_999_999)}`);
  t.equal(gone.statusCode, 404, 'a signed link to a document the repository no longer has');
  t.equal((await open(`${env.origin}/documents/S4H/Z1`)).statusCode, 404, 'not a link');
  t.equal((await got.post(attachment.DocumentURL, { throwHttpErrors: false })).statusCode, 405);
});

t.test(
  "an attachment whose answer was lost is found again among the object's attachments by its address",
  async (t) => {
    const env = await servedLinks(t);
    const [landed, lost] = await Promise.all(
      ['landed.pdf', 'lost.pdf'].map((name) => env.upload('ERP/Invoices', name)),
    );
    await env.job({ task: 'link' });
    for (const uid of [landed, lost]) env.fill(uid, { 'erpCreateALDocument:erpObjectId': '4711' });
    // Someone attached a URL with the same description by hand.
    env.erp.tables.attachments.push({
      client: '100',
      BusinessObjectTypeName: 'BKPF',
      LinkedSAPObjectKey: '4711',
      FileName: 'lost.pdf',
      MimeType: 'text/url',
      FileSize: '0',
      DocumentURL: 'https://intranet.example.com/lost.pdf',
      DocumentInfoRecordDocNumber: '0000000099',
      ArchiveDocumentID: 'BYHAND',
    });
    env.erp.faults.add({ functionName: 'CreateUrlAsAttachment', loseAnswer: true, times: 2 });
    const first = await env.job({ task: 'link' });
    t.same(first.tasks.link.counts, { RETRY: 2 });
    t.equal(env.erp.tables.attachments.length, 3, 'both reached SAP');
    const later = new Date(Date.now() + 3_600_000);
    const second = await env.job({ task: 'link', observer: { now: () => later } });
    t.same(second.tasks.link.counts, { DONE: 2 }, 'each found by its address: nothing sent again');
    t.equal(env.erp.tables.attachments.length, 3, 'no second attachment');
    for (const uid of [landed, lost])
      t.match(env.props(uid)['erpTaskStatus:erpReference'], /^BKPF 4711 000000000[23]$/, 'its own attachment');
  },
);

t.test('via Web UI: the attachment opens the document in Web UI, with the user’s own sign-in', async (t) => {
  const env = await servedEnv(t);
  linkByReference(env, '    documentLinks:\n      via: webui\n      url: https://ecm.example.com/nuxeo/ui\n');
  const uid = await invoice(env, 'invoice-8.pdf', '4712');
  const run = await env.job({ task: 'link' });
  t.same(run.tasks.link.counts, { DONE: 1 }, JSON.stringify(run.problems));
  t.equal(env.erp.tables.attachments[0].DocumentURL, `https://ecm.example.com/nuxeo/ui/#!/doc/${uid}`);
});

t.test(
  'validate: a link by address needs documentLinks, and serve must accept the key the job signs with',
  async (t) => {
    const env = await servedEnv(t);
    linkByReference(env, '');
    const missing = await cli(['validate', '--config', env.location.configDir]);
    t.equal(missing.code, 2);
    t.match(
      missing.stderr,
      /jobs\/link\.yaml: function: the task links by address \(documentUrl\), and ERP system "S4H" has no documentLinks in erpHttp\.yaml/,
    );
    const other = await servedEnv(t, { connection: { documentLinks: { keys: [OLD_KEY] } } });
    linkByReference(other, viaServe(other));
    const served = await cli(['validate', '--config', other.location.configDir]);
    t.equal(served.code, 2);
    t.match(
      served.stderr,
      /contentServer\.yaml: connections\.0\.documentLinks\.keys: the job signs the links of S4H with documentLinks\.key of erpHttp\.yaml, which is not among these keys/,
    );
    t.notMatch(served.stderr, KEY, 'the key is not shown');
    const none = await servedEnv(t);
    linkByReference(none, viaServe(none));
    const unlisted = await cli(['validate', '--config', none.location.configDir]);
    t.match(
      unlisted.stderr,
      /connections\.0\.documentLinks\.keys: the job signs the links of S4H/,
      'serve has no keys at all',
    );
    const file = join(other.location.configDir, 'contentServer.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/^pathPrefix: .*$/m, 'pathPrefix: /documents'));
    const prefix = await cli(['validate', '--config', other.location.configDir]);
    t.match(
      prefix.stderr,
      /contentServer\.yaml: pathPrefix: must not be \/documents: serve answers document links there/,
    );
  },
);

t.test(
  'serve answers a HEAD, a malformed or unknown name, a refusing repository, and a reader who leaves',
  async (t) => {
    const env = await servedLinks(t);
    const link = (contRep: string, docId: string): string => {
      const path = documentLinkPath('S4H', contRep, docId);
      return `${env.origin}${path}?${signedQuery(KEY, path, 9_999_999_999)}`;
    };
    const uid = await uploadFile(
      env.baseUrl,
      '/default-domain/workspaces/ERP/Invoices',
      'large.pdf',
      Buffer.alloc(32 * MB, 7),
    );
    await env.job({ task: 'link' });
    const docId = String(env.props(uid)['erpHttpContent:docId']);
    const head = await got.head(link('Z1', docId));
    t.equal(head.headers['content-length'], String(32 * MB), 'HEAD: the length, no body');
    t.equal((await open(`${env.origin}/documents/S4H/Z1/%E0%A4%A`)).statusCode, 404, 'a name that does not decode');
    const unknown = await open(link('Z9', docId));
    t.equal(unknown.body.toString(), 'content repository Z9 is not served here\n');
    env.sandbox.faults.add({ path: docId, status: 403, times: 1 });
    const refused = await open(link('Z1', docId));
    t.equal(refused.statusCode, 502);
    t.equal(refused.body.toString(), 'the repository refused or failed to give the document; try again later\n');

    // A reader who leaves after the first bytes of 32 MB: the server breaks off and goes on serving.
    await new Promise<void>((resolve, reject) => {
      const req = httpGet(link('Z1', docId), (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
    });
    t.equal((await got.head(link('Z1', docId))).statusCode, 200, 'the next reader is served');
  },
);

t.test("the ERP sandbox's CreateUrlAsAttachment takes what SAP documents, and refuses what SAP would", async (t) => {
  const env = await servedEnv(t);
  const { url, auth } = env.config.erp.systems[0].rest as { url: string; auth: { username: string; password: string } };
  const service = `${url}/sap/opu/odata/sap/API_CV_ATTACHMENT_SRV`;
  const http = got.extend({
    username: auth.username,
    password: auth.password,
    throwHttpErrors: false,
    retry: { limit: 0 },
    cookieJar: new CookieJar(),
  });
  const token = (await http.get(`${service}/`, { headers: { 'X-CSRF-Token': 'Fetch' } })).headers[
    'x-csrf-token'
  ] as string;
  const create = (query: string) =>
    http.post(`${service}/CreateUrlAsAttachment?${query}`, { headers: { 'X-CSRF-Token': token } });
  const valid =
    "BusinessObjectTypeName='BKPF'&LinkedSAPObjectKey='4711'&Url='https%3A%2F%2Fcs.example.com%2Fd'&UrlDescription='It''s%20here'&MIMEType='text%2Furl'";
  t.equal(
    (await http.get(`${service}/CreateUrlAsAttachment?${valid}`)).statusCode,
    405,
    'a function import SAP declares for POST',
  );
  const unprotected = await http.post(`${service}/CreateUrlAsAttachment?${valid}`);
  t.equal(unprotected.headers['x-csrf-token'], 'Required', "a write without Gateway's CSRF token");
  const made = await create(valid);
  t.equal(made.statusCode, 200);
  t.match(JSON.parse(made.body), {
    d: { DocumentURL: 'https://cs.example.com/d', FileName: "It's here", MimeType: 'text/url' },
  });
  const bare = await create(
    valid.replace("Url='https%3A%2F%2Fcs.example.com%2Fd'", 'Url=https%3A%2F%2Fcs.example.com%2Fd'),
  );
  t.match(bare.body, /Malformed URI literal syntax in parameter Url/);
  t.equal(bare.statusCode, 400);
  const long = await create(valid.replace("UrlDescription='It''s%20here'", `UrlDescription='${'x'.repeat(256)}'`));
  t.match(long.body, /Parameter UrlDescription is longer than 255 characters/);
  const relative = await create(valid.replace('https%3A%2F%2Fcs.example.com%2Fd', '%2Fd'));
  t.match(JSON.parse(relative.body), { error: { message: { value: 'URL "/d" is not an absolute http(s) address' } } });
  const object = await create(valid.replace("'BKPF'", "'VBRK'"));
  t.equal(object.statusCode, 403);
  t.equal(env.erp.tables.attachments.length, 1, 'only the valid one kept');
});

t.test("doctor: serve takes links signed with the job's key, or says what answered instead", async (t) => {
  const env = await servedLinks(t);
  const doctor = async () => {
    const result = await cli(['doctor', '--json', '--config', env.location.configDir]);
    const { checks } = JSON.parse(result.stdout) as {
      checks: Array<{ outcome: string; found: string; advice?: string }>;
    };
    return checks.find((c) => c.found.startsWith('documentLinks'));
  };
  t.match(await doctor(), {
    outcome: 'pass',
    found: `documentLinks: serve at ${env.origin}/ takes links signed with the job's key`,
  });
  // The job's key is not among serve's (contentServer.yaml elsewhere, so validate cannot compare them).
  rmSync(join(env.location.configDir, 'contentServer.yaml'));
  const erp = join(env.location.configDir, 'erpHttp.yaml');
  writeFileSync(erp, readFileSync(erp, 'utf8').replace(KEY, 'n'.repeat(40)));
  t.match(await doctor(), {
    outcome: 'fail',
    found: /answered HTTP 403: the link is not signed with this content server's key$/,
    advice: /its key one of documentLinks\.keys of the connection in contentServer\.yaml/,
  });
  writeFileSync(erp, readFileSync(erp, 'utf8').replace(`url: ${env.origin}/`, `url: ${env.baseUrl}`));
  t.match(await doctor(), { outcome: 'fail', found: /answered HTTP 401: <html>/ }, 'a server that is not serve');
  env.sandbox.faults.add({ method: 'GET', path: 'connect2erp-doctor', status: 404, body: 'x'.repeat(5 << 20) });
  t.match(
    await doctor(),
    { outcome: 'fail', found: /answered HTTP 404: more than 4 MiB$/ },
    "an answer too large to be serve's is not read whole",
  );
  writeFileSync(erp, readFileSync(erp, 'utf8').replace(`url: ${env.baseUrl}`, 'url: http://127.0.0.1:9/'));
  t.match(await doctor(), { outcome: 'fail', found: /: no answer: .*ECONNREFUSED/ }, 'nothing at the address');
});
