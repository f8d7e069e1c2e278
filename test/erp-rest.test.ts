import { buffer } from 'node:stream/consumers';
import t, { type Test } from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { quietLog, sandboxEnv, type Env } from './helpers/env.js';
import { runJob } from '../src/job/run.js';
import { templateYaml } from '../src/config/templates.js';
import { type StoredDoc } from '../sandbox/repository/store.js';

// Runs over real HTTP: 2 s idle, several times that on a busy machine.
t.setTimeout(120_000);

/** The Rest transport over real HTTP: the S/4HANA attachment service, with CSRF. */

async function restEnv(t: Test): Promise<Env> {
  const env = await sandboxEnv(t);
  const file = join(env.location.jobsDir, 'link.yaml');
  writeFileSync(file, readFileSync(file, 'utf8').replace('function: RFC', 'function: Rest'));
  return env;
}

/** The run that sent `uid` died before its outcome was written: still IN_PROGRESS, its claim expired. */
const diedAfterSending = (env: Env, uid: string): void =>
  env.fill(uid, { 'erpTaskStatus:status': 'IN_PROGRESS', 'erpTaskStatus:claimExpires': '2000-01-01T00:00:00.000Z' });

const CSRF_REQUIRED = {
  status: 403,
  headers: { 'X-CSRF-Token': 'Required', 'Content-Type': 'application/json' },
  body: '{"error":{"code":"/IWFND/CM_BEC/026","message":{"value":"CSRF token validation failed"}}}',
};

t.test('link over Rest: the file is uploaded to the attachment service once, after a CSRF handshake', async (t) => {
  const env = await restEnv(t);
  const uid = await env.upload('ERP/Invoices', 'invoice-1.pdf');
  await env.run();
  env.fill(uid, { 'erpCreateALDocument:erpObjectId': '100019000000222023' });
  const dry = await env.run(true);
  t.same(
    dry.plannedCalls.map((c) => c.call),
    ['POST /sap/opu/odata/sap/API_CV_ATTACHMENT_SRV/AttachmentContentSet'],
    'the dry run plans the upload',
  );
  t.match(dry.plannedCalls[0].params, {
    Slug: `${uid}_invoice-1.pdf`,
    BusinessObjectTypeName: 'BKPF',
    LinkedSAPObjectKey: '100019000000222023',
    'Content-Type': 'application/pdf',
  });
  t.equal(env.erp.tables.attachments.length, 0);

  // Gateway forgets the session in the middle of the run: the client fetches a new token and writes again.
  env.erp.faults.add({ functionName: 'AttachmentContentSet', ...CSRF_REQUIRED });
  const report = await env.run();
  t.same(report.tasks.link.counts, { DONE: 1 });
  const blob = await buffer(
    env.sandbox.store.blobStream((env.sandbox.store.get(uid) as StoredDoc).properties['file:content'] as never),
  );
  t.match(env.erp.tables.attachments, [
    {
      BusinessObjectTypeName: 'BKPF',
      LinkedSAPObjectKey: '100019000000222023',
      FileName: `${uid}_invoice-1.pdf`,
      MimeType: 'application/pdf',
      FileSize: String(blob.length),
    },
  ]);
  t.equal(
    env.props(uid)['erpTaskStatus:erpReference'],
    'BKPF 100019000000222023 0000000001',
    'the reference carries the document info record number',
  );

  // The status write was lost (the run died): the next run finds the upload by the uuid its name starts with.
  diedAfterSending(env, uid);
  const again = await env.run();
  t.same(again.tasks.link.counts, { DONE: 1 }, 'taken over: looked up by its key, found, done');
  t.equal(env.erp.tables.attachments.length, 1, 'no second attachment');
});

t.test(
  "an upload whose answer was lost is found among the object's attachments by the document's key, never by its name and size",
  async (t) => {
    const env = await restEnv(t);
    const [landed, lost, twin] = await Promise.all(
      ['landed.pdf', 'lost.pdf', 'twin.pdf'].map((name) => env.upload('ERP/Invoices', name)),
    );
    await env.run();
    for (const uid of [landed, lost, twin]) env.fill(uid, { 'erpCreateALDocument:erpObjectId': '4711' });
    // Someone attached a file of the same name and size to the same object by hand.
    env.erp.tables.attachments.push({
      client: '100',
      BusinessObjectTypeName: 'BKPF',
      LinkedSAPObjectKey: '4711',
      FileName: 'twin.pdf',
      MimeType: 'application/pdf',
      FileSize: String(Buffer.byteLength('%PDF-1.4 sample twin.pdf')),
      DocumentInfoRecordDocNumber: '0000000099',
      ArchiveDocumentID: 'BYHAND',
      DocumentURL: '',
    });
    // SAP stores the first upload and its answer is lost; the other two never reach SAP. No answer comes back for any.
    env.erp.faults.add({ functionName: 'AttachmentContentSet', loseAnswer: true });
    env.erp.faults.add({ functionName: 'AttachmentContentSet', drop: true, times: 2 });
    const first = await env.run();
    t.same(first.tasks.link.counts, { RETRY: 3 });
    t.equal(env.erp.tables.attachments.length, 2, 'one of them reached SAP');
    for (const uid of [landed, lost, twin])
      t.match(
        env.props(uid)['erpTaskStatus:message'],
        /SAP is asked at the next attempt, before anything is sent again$/,
      );
    const later = new Date(Date.now() + 3_600_000);
    const second = await env.job({ observer: { now: () => later } });
    t.same(second.tasks.link.counts, { DONE: 3 });
    const mine = env.erp.tables.attachments.filter((a) => a.ArchiveDocumentID !== 'BYHAND');
    t.same(
      mine.map((a) => a.FileName).sort(),
      [`${landed}_landed.pdf`, `${lost}_lost.pdf`, `${twin}_twin.pdf`].sort(),
      'each document attached once: the stored one found by its key, the others sent, the look-alike not taken for one',
    );
  },
);

t.test('link over Rest: SAP refusing the object, a token refused twice, and wrong credentials', async (t) => {
  const env = await restEnv(t);
  const wrong = await env.upload('ERP/Invoices', 'wrong.pdf');
  await env.run();
  env.fill(wrong, { 'erpCreateALDocument:erpObjectId': '4711', 'erpCreateALDocument:erpObject': 'VBRK' });
  const refused = await env.run();
  t.same(refused.tasks.link.counts, { FAILED: 1 });
  t.match(
    env.props(wrong)['erpTaskStatus:message'],
    'POST /sap/opu/odata/sap/API_CV_ATTACHMENT_SRV/AttachmentContentSet on S4H: CV_ATTACHMENT_SRV/003 User has no authorization for operation 03 on object VBRK 4711',
  );
  t.equal(env.props(wrong)['erpTaskStatus:attempts'], 1, 'a business error is not retried');

  const csrf = await env.upload('ERP/Invoices', 'csrf.pdf');
  await env.run();
  env.fill(csrf, { 'erpCreateALDocument:erpObjectId': '4712' });
  env.erp.faults.add({ functionName: 'AttachmentContentSet', ...CSRF_REQUIRED, times: 2 });
  await env.run();
  t.match(env.props(csrf)['erpTaskStatus:message'], 'SAP refused the CSRF token twice (HTTP 403)');

  const erpYaml = join(env.location.configDir, 'erpHttp.yaml');
  const text = readFileSync(erpYaml, 'utf8');
  const rest = text.lastIndexOf('password: ${env:SAP_PASSWORD}');
  writeFileSync(
    erpYaml,
    `${text.slice(0, rest)}password: wrong${text.slice(rest + 'password: ${env:SAP_PASSWORD}'.length)}`,
  );
  const locked = await env.upload('ERP/Invoices', 'locked.pdf');
  await env.run();
  env.fill(locked, { 'erpCreateALDocument:erpObjectId': '4713' });
  const stopped = await env.run();
  t.equal(stopped.exitCode, 2);
  t.match(stopped.outages, [
    {
      system: 'S4H',
      kind: 'refused',
      reason: /SAP refused the credentials \(HTTP 401\); check rest\.auth in erpHttp\.yaml/,
    },
  ]);
  t.equal(env.props(locked)['erpTaskStatus:status'], 'READY', 'its claim is released');
  t.equal(env.erp.tables.attachments.length, 0);
});

t.test(
  'the template printed by `template link Rest`, declared in a task file, finds its upload after a crash',
  async (t) => {
    const env = await restEnv(t);
    const file = join(env.location.jobsDir, 'link.yaml');
    writeFileSync(file, `${readFileSync(file, 'utf8')}${templateYaml('link', 'Rest') as string}`);
    const uid = await env.upload('ERP/Invoices', 'invoice-1.pdf');
    await env.run();
    env.fill(uid, { 'erpCreateALDocument:erpObjectId': '4711' });
    t.same((await env.run()).tasks.link.counts, { DONE: 1 });
    diedAfterSending(env, uid);
    t.same((await env.run()).tasks.link.counts, { DONE: 1 }, 'taken over: looked up, found, done');
    t.equal(env.erp.tables.attachments.length, 1, 'one attachment');
  },
);

t.test(
  "the attachment service turning uploads away opens its system's breaker; a probe of the service document closes it",
  async (t) => {
    const env = await restEnv(t);
    const erpYaml = join(env.location.configDir, 'erpHttp.yaml');
    writeFileSync(erpYaml, readFileSync(erpYaml, 'utf8').replace('maxConcurrentCalls: 8', 'maxConcurrentCalls: 1'));
    const uids = await Promise.all(Array.from({ length: 8 }, (_, i) => env.upload('ERP/Invoices', `invoice-${i}.pdf`)));
    await env.run();
    for (const uid of uids) env.fill(uid, { 'erpCreateALDocument:erpObjectId': '4711' });
    env.erp.faults.add({ functionName: 'AttachmentContentSet', status: 503, times: 3 });
    let clock = Date.now();
    let released = 0;
    let probes = 0;
    env.erp.faults.observe = (req) =>
      void (req.method === 'GET' && /API_CV_ATTACHMENT_SRV\/\?/.test(req.url ?? '') && probes++);
    env.sandbox.index.catchUp();
    const report = await runJob(
      {
        location: env.location,
        dryRun: false,
        task: 'link',
        observer: {
          now: () => new Date(clock),
          document: (_, record) => {
            if ('result' in record && record.result === 'RELEASED' && ++released === 4) clock += 10_000;
          },
        },
      },
      quietLog,
    );
    const { RELEASED, DONE } = report.tasks.link.counts;
    t.ok(RELEASED >= 4 && RELEASED + DONE === 8, `${RELEASED} released, ${DONE} uploaded after the probe`);
    t.equal(probes, 1, 'one probe: the service document');
    t.equal(env.erp.tables.attachments.length, DONE);
  },
);

t.test(
  'the repository refusing the credentials while an upload reads the file stops the run; the document is not failed',
  async (t) => {
    const env = await restEnv(t);
    const uid = await env.upload('ERP/Invoices', 'invoice-1.pdf');
    await env.run();
    env.fill(uid, { 'erpCreateALDocument:erpObjectId': '4711' });
    env.sandbox.faults.add({
      method: 'GET',
      path: `/id/${uid}/@blob`,
      status: 401,
      headers: { 'Content-Type': 'text/html' },
      body: '<html><body><h1>401 Unauthorized</h1></body></html>',
    });
    const report = await env.run();
    t.equal(report.exitCode, 2);
    t.match(report.problems.join('\n'), /HTTP 401 \(check the credentials in storage\.yaml\)/);
    t.not(env.props(uid)['erpTaskStatus:status'], 'FAILED', 'left claimed for a later run, not failed');
    t.equal(env.erp.tables.attachments.length, 0);
  },
);

t.test(
  "a document's value goes into the lookup's OData filter as a quoted literal: quotes and operators in it change nothing",
  async (t) => {
    const env = await restEnv(t);
    const uid = await env.upload('ERP/Invoices', 'invoice-q.pdf');
    await env.run();
    const key = "4711' or BusinessObjectTypeName eq 'BKPF";
    env.fill(uid, { 'erpCreateALDocument:erpObjectId': key });
    const asked: string[] = [];
    env.erp.faults.observe = (req) => void (req.url?.includes('GetAllOriginals') && asked.push(req.url));
    await env.run();
    // Taken over after a lost status write: the lookup goes first.
    diedAfterSending(env, uid);
    const report = await env.run();
    t.same(report.tasks.link.counts, { DONE: 1 });
    t.match(env.erp.tables.attachments, [{ LinkedSAPObjectKey: key }], 'SAP has the value as it is');
    t.equal(env.erp.tables.attachments.length, 1);
    t.ok(asked.length > 0, 'looked up');
    t.match(
      decodeURIComponent(asked[0]),
      "LinkedSAPObjectKey='4711'' or BusinessObjectTypeName eq ''BKPF'",
      'the whole value inside one literal, its quotes doubled',
    );
  },
);
