import t, { type Test } from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { quietLog, sandboxEnv, type Env } from './helpers/env.js';
import { runJob } from '../src/run.js';
import { type StoredDoc } from '../src/sandbox/repository/store.js';

/** The Rest transport over real HTTP: the attachment service and the function-module gateway, with CSRF. */

async function restEnv(t: Test): Promise<Env> {
  const env = await sandboxEnv(t);
  for (const task of ['link', 'barcode', 'workflow']) {
    const file = join(env.location.jobsDir, `${task}.yaml`);
    writeFileSync(file, readFileSync(file, 'utf8').replace('function: RFC', 'function: Rest'));
  }
  return env;
}

const CSRF_REQUIRED = { status: 403, headers: { 'X-CSRF-Token': 'Required', 'Content-Type': 'application/json' }, body: '{"error":{"code":"/IWFND/CM_BEC/026","message":{"value":"CSRF token validation failed"}}}' };

t.test('link over Rest: the file is uploaded to the attachment service once, after a CSRF handshake', async (t) => {
  const env = await restEnv(t);
  const uid = await env.upload('ERP/Invoices', 'invoice-1.pdf');
  await env.run();
  env.fill(uid, { 'erpCreateALDocument:erpObjectId': '100019000000222023' });
  const dry = await env.run(true);
  t.same(dry.plannedCalls.map((c) => c.call), ['POST /sap/opu/odata/sap/API_CV_ATTACHMENT_SRV/AttachmentContentSet'], 'the dry run looks first, then plans the upload');
  t.match(dry.plannedCalls[0].params, { Slug: 'invoice-1.pdf', BusinessObjectTypeName: 'BKPF', LinkedSAPObjectKey: '100019000000222023', 'Content-Type': 'application/pdf' });
  t.equal(env.erp.tables.attachments.length, 0);

  // Gateway forgets the session in the middle of the run: the client fetches a new token and writes again.
  env.erp.faults.add({ functionName: 'AttachmentContentSet', ...CSRF_REQUIRED });
  const report = await env.run();
  t.same(report.tasks.link.counts, { DONE: 1 });
  const blob = env.sandbox.store.blobBytes((env.sandbox.store.get(uid) as StoredDoc).properties['file:content'] as never);
  t.match(env.erp.tables.attachments, [{ BusinessObjectTypeName: 'BKPF', LinkedSAPObjectKey: '100019000000222023', FileName: 'invoice-1.pdf', MimeType: 'application/pdf', FileSize: String(blob.length) }]);
  t.equal(env.props(uid)['erpTaskStatus:erpReference'], 'BKPF 100019000000222023 0000000001', 'the reference carries the document info record number');

  // The status write was lost: GetAllOriginals finds the upload, so there is no second attachment.
  env.fill(uid, { 'erpTaskStatus:status': 'IN_PROGRESS', 'erpTaskStatus:claimExpires': '2000-01-01T00:00:00.000Z' });
  const again = await env.run();
  t.same(again.tasks.link.counts, { DONE: 1 });
  t.equal(env.erp.tables.attachments.length, 1, 'no second attachment');
});

t.test('link over Rest: SAP refusing the object, a token refused twice, and wrong credentials', async (t) => {
  const env = await restEnv(t);
  const wrong = await env.upload('ERP/Invoices', 'wrong.pdf');
  await env.run();
  env.fill(wrong, { 'erpCreateALDocument:erpObjectId': '4711', 'erpCreateALDocument:erpObject': 'VBRK' });
  const refused = await env.run();
  t.same(refused.tasks.link.counts, { FAILED: 1 });
  t.match(env.props(wrong)['erpTaskStatus:message'], 'POST /sap/opu/odata/sap/API_CV_ATTACHMENT_SRV/AttachmentContentSet on S4H: CV_ATTACHMENT_SRV/003 User has no authorization for operation 03 on object VBRK 4711');
  t.equal(env.props(wrong)['erpTaskStatus:attempts'], 1, 'a business error is not retried');

  const csrf = await env.upload('ERP/Invoices', 'csrf.pdf');
  await env.run();
  env.fill(csrf, { 'erpCreateALDocument:erpObjectId': '4712' });
  env.erp.faults.add({ functionName: 'AttachmentContentSet', ...CSRF_REQUIRED, times: 2 });
  await env.run();
  t.match(env.props(csrf)['erpTaskStatus:message'], 'SAP refused the CSRF token twice (HTTP 403)');

  const erpYaml = join(env.location.configDir, 'erpHttp.yaml');
  writeFileSync(erpYaml, readFileSync(erpYaml, 'utf8').replace(/password: \$\{env:SAP_PASSWORD\}(\s+csrf)/, 'password: wrong$1'));
  const locked = await env.upload('ERP/Invoices', 'locked.pdf');
  await env.run();
  env.fill(locked, { 'erpCreateALDocument:erpObjectId': '4713' });
  const stopped = await env.run();
  t.match(stopped.problems.join('\n'), 'SAP refused the credentials (HTTP 401); check rest.auth in erpHttp.yaml');
  t.equal(env.props(locked)['erpTaskStatus:status'], 'READY', 'its claim is released');
  t.equal(env.erp.tables.attachments.length, 0);
});

t.test('barcode over Rest: one gateway call for the batch; a bad bar code fails alone', async (t) => {
  const env = await restEnv(t);
  const uids = [await env.upload('ERP/Barcode', 'scan-1.pdf'), await env.upload('ERP/Barcode', 'scan-2.pdf'), await env.upload('ERP/Barcode', 'scan-3.pdf')];
  await env.run();
  ['BC-1', 'bad code', 'BC-3'].forEach((code, i) => env.fill(uids[i], { 'erpBarcode:barcode': code }));
  const report = await env.run();
  t.same(report.tasks.barcode.counts, { DONE: 2, FAILED: 1 });
  t.same(env.erp.tables.barcodes.map((b) => b.BARCODE).sort(), ['BC-1', 'BC-3']);
  t.equal(env.props(uids[1])['erpTaskStatus:message'], 'POST /sap/bc/fmcall/BAPI_BARCODE_SENDLIST: Bar code bad code is not valid');
  t.equal(env.props(uids[0])['erpTaskStatus:erpReference'], 'BC-1');
});

t.test('workflow over Rest: the gateway starts it; an unknown agent fails with SAP\'s message; a bare 500 is not repeated', async (t) => {
  const env = await restEnv(t);
  const intake = () => runJob({ location: env.location, dryRun: false, task: 'link' }, quietLog);
  const uid = await env.upload('ERP/Workflow', 'approve.pdf');
  const report = await env.run();
  t.same(report.tasks.workflow.counts, { DONE: 1 });
  t.match(env.erp.tables.inbox, [{ OTYPE: 'US', OBJID: 'APPROVER1', ARC_DOC_ID: uid, AR_OBJECT: 'ZINVWF' }]);

  const agent = await env.upload('ERP/Workflow', 'agent.pdf');
  await intake();
  env.fill(agent, { 'erpStartWorkflow:erpObjId': 'NOBODY' });
  await env.run();
  t.equal(env.props(agent)['erpTaskStatus:message'], 'POST /sap/bc/fmcall/ARCHIV_PROCESS_RFCINPUT on S4H: NO_WORKITEM_CREATED Agent US NOBODY does not exist');

  const dumped = await env.upload('ERP/Workflow', 'dumped.pdf');
  await intake();
  // The call dies with a bare 500: SAP may have created the work item, so no automatic second one.
  env.erp.faults.add({ functionName: 'ARCHIV_PROCESS_RFCINPUT', status: 500, body: '' });
  const dump = await env.run();
  t.same(dump.tasks.workflow.counts, { FAILED: 1 });
  t.match(env.props(dumped)['erpTaskStatus:message'], /failed with HTTP 500; SAP may have received it, so it is not sent again by itself: check in SAP, then `connect2erp retry --doc [0-9a-f-]+` to send it again/);
  t.equal(env.erp.tables.inbox.length, 1);
});
