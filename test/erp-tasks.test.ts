import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sandboxEnv } from './helpers/env.js';
import { renderHtml } from '../src/job/report/html.js';
import { renderReport } from '../src/job/report/table.js';
import { templateYaml } from '../src/config/templates.js';
import { type StoredDoc } from '../sandbox/repository/store.js';

// Runs over real HTTP: 3 s idle, several times that on a busy machine.
t.setTimeout(120_000);

/** The ERP half over real HTTP: tasks against the ERP sandbox's SOAP-RFC service. */

t.test('link: waits for its object id, links once, and a re-run or an existing link never links twice', async (t) => {
  const env = await sandboxEnv(t);
  const uid = await env.upload('ERP/Invoices', 'invoice-1.pdf');
  const first = await env.run();
  t.equal(env.props(uid)['erpTaskStatus:status'], 'PENDING_INPUT');
  t.equal(first.intake.counts.pendingInput, 1, 'the intake notes what it waits for');
  env.fill(uid, { 'erpCreateALDocument:erpObjectId': '100019000000222023' });
  const calls: string[] = [];
  env.erp.faults.observe = (_req, _res, functionName) => void calls.push(String(functionName));
  const dry = await env.run(true);
  t.same(
    dry.plannedCalls.map((c) => c.call),
    ['ARCHIV_CONNECTION_INSERT'],
    'a dry run plans the insert…',
  );
  t.equal(env.erp.tables.links.length, 0, '…without making it');
  const second = await env.run();
  t.equal(second.tasks.link.counts.DONE, 1, 'the filled-in value moves it on');
  t.same(
    calls,
    ['ARCHIV_CONNECTION_INSERT'],
    'a first attempt is one call: nothing can be in SAP yet, so nothing is looked up',
  );
  t.equal(env.props(uid)['erpTaskStatus:status'], 'DONE');
  t.equal(env.props(uid)['erpTaskStatus:erpReference'], 'BKPF 100019000000222023');
  t.same(
    env.erp.tables.links.map((l) => [l.SAP_OBJECT, l.OBJECT_ID, l.ARCHIV_ID, l.ARC_DOC_ID, l.AR_OBJECT, l.FILENAME]),
    [['BKPF', '100019000000222023', 'Z1', uid, 'ZFIINVOICE', 'invoice-1.pdf']],
  );
  t.match(env.erp.tables.links[0].AR_DATE, /^\d{8}$/, 'the date went out as YYYY-MM-DD, SAP keeps it as YYYYMMDD');

  // As after an attempt whose answer was lost: SAP may have the link.
  env.fill(uid, { 'erpTaskStatus:status': 'READY', 'erpTaskStatus:attempts': 1 });
  t.match(
    (await env.run(true)).tasks.link.documents,
    [{ result: 'PLANNED', message: 'already in SAP: would be marked DONE' }],
    'a dry run finds the link too',
  );
  calls.length = 0;
  t.equal((await env.run()).tasks.link.counts.DONE, 1, 'found by ARCHIV_GET_CONNECTIONS: done without a second insert');
  t.same(calls, ['ARCHIV_GET_CONNECTIONS'], 'a repeat is looked up first');
  env.erp.faults.add({ functionName: 'ARCHIV_GET_CONNECTIONS', status: 500, body: '<html/>' });
  env.fill(uid, { 'erpTaskStatus:status': 'READY', 'erpTaskStatus:attempts': 1 });
  const lookupDown = await env.run();
  t.equal(lookupDown.tasks.link.counts.RETRY, 1, 'a lookup that fails with 500 and no SOAP answer is retried later');
  t.match(env.props(uid)['erpTaskStatus:message'], /ARCHIV_GET_CONNECTIONS on S4H failed with HTTP 500/);
  t.ok(
    Date.parse(env.props(uid)['erpTaskStatus:nextAttempt'] as string) > Date.now() + 50_000,
    'not before the back-off',
  );
  env.erp.tables.links[0].ARC_DOC_ID = 'elsewhere';
  env.fill(uid, { 'erpTaskStatus:status': 'READY' });
  env.erp.faults.add({ functionName: 'ARCHIV_GET_CONNECTIONS', status: 200, body: '<x>not soap' });
  const odd = await env.run();
  t.equal(odd.tasks.link.counts.FAILED, 1, 'a 200 that is not SOAP is permanent');
  env.erp.tables.links[0].ARC_DOC_ID = uid;
  env.fill(uid, { 'erpTaskStatus:status': 'READY' });
  env.erp.faults.add({
    functionName: 'ARCHIV_GET_CONNECTIONS',
    status: 500,
    body: '<soap-env:Envelope xmlns:soap-env="http://schemas.xmlsoap.org/soap/envelope/"><soap-env:Body><soap-env:Fault><faultcode>x</faultcode><faultstring>NOTHING_FOUND</faultstring></soap-env:Fault></soap-env:Body></soap-env:Envelope>',
  });
  const race = await env.run();
  t.equal(race.tasks.link.counts.DONE, 1, 'not found first, then OA403 on insert: still done');
  t.equal(env.erp.tables.links.length, 1, 'one link in SAP, whatever happened');
  env.fill(uid, { 'erpTaskStatus:status': 'READY', 'erpTaskStatus:attempts': 0 });
  t.equal(
    (await env.run()).tasks.link.counts.DONE,
    1,
    'sent again without a lookup (as a first attempt), SAP answers OA403: done',
  );
  t.equal(env.erp.tables.links.length, 1, 'still one link');
});

t.test('link: SAP refusing an object type, and a value too long for its field, fail with the reason', async (t) => {
  const env = await sandboxEnv(t);
  const wrongType = await env.upload('ERP/Invoices', 'a.pdf');
  const tooLong = await env.upload('ERP/Invoices', 'b.pdf');
  await env.run();
  env.fill(wrongType, { 'erpCreateALDocument:erpObject': 'VBRK', 'erpCreateALDocument:erpObjectId': '1' });
  env.fill(tooLong, { 'erpCreateALDocument:erpObjectId': 'x'.repeat(51), 'erpTaskStatus:attempts': null });
  const report = await env.run();
  t.equal(report.tasks.link.counts.FAILED, 2);
  t.equal(report.exitCode, 1);
  t.match(
    env.props(wrongType)['erpTaskStatus:message'],
    'ARCHIV_CONNECTION_INSERT raised ERROR_CONNECTIONTABLE (OA806): Combination of object type VBRK and document type ZFIINVOICE not maintained (->Cust)',
  );
  t.match(
    env.props(tooLong)['erpTaskStatus:message'],
    /erpCreateALDocument:erpObjectId = "x+" is longer than the 50 characters of SAP field OBJECT_ID/,
  );
  t.equal(env.props(tooLong)['erpTaskStatus:attempts'], 1);

  // A system set to send dates as YYYYMMDD, against a SOAP runtime that reads YYYY-MM-DD.
  const erpYaml = join(env.location.configDir, 'erpHttp.yaml');
  writeFileSync(erpYaml, readFileSync(erpYaml, 'utf8').replace('dateFormat: YYYY-MM-DD', 'dateFormat: YYYYMMDD'));
  const compact = await env.upload('ERP/Invoices', 'c.pdf');
  await env.run();
  env.fill(compact, { 'erpCreateALDocument:erpObjectId': '2' });
  await env.run();
  t.match(
    env.props(compact)['erpTaskStatus:message'],
    /ARCHIV_CONNECTION_INSERT: SAP's SOAP runtime refused the call: Error during deserialization: value "\d{8}" of AR_DATE is not a date \(YYYY-MM-DD\)/,
    'refused by the runtime, named in the message',
  );
});

t.test('a value with a control character XML cannot carry is never sent over SOAP-RFC, and says which', async (t) => {
  const env = await sandboxEnv(t);
  const invoice = await env.upload('ERP/Invoices', 'pasted.pdf');
  await env.run();
  env.fill(invoice, { 'erpCreateALDocument:erpObjectId': '4711\u000b' }); // a vertical tab pasted with the number
  const calls: string[] = [];
  env.erp.faults.observe = (_req, _res, functionName) => void (functionName !== undefined && calls.push(functionName));
  const report = await env.run();
  t.equal(report.tasks.link.counts.FAILED, 1);
  t.match(
    env.props(invoice)['erpTaskStatus:message'],
    'the value for SAP field OBJECT_ID holds a control character (U+000B) that a SOAP-RFC call cannot carry (XML 1.0)',
  );
  t.notOk(calls.includes('ARCHIV_CONNECTION_INSERT'), 'SAP was not called with it');
});

t.test('barcode: one call for the batch; a bad bar code fails alone', async (t) => {
  const env = await sandboxEnv(t);
  const good = await env.upload('ERP/Barcode', 'scan-1.pdf');
  const bad = await env.upload('ERP/Barcode', 'scan-2.pdf');
  const other = await env.upload('ERP/Barcode', 'scan-3.pdf');
  await env.run();
  env.fill(good, { 'erpBarcode:barcode': 'BC-0001' });
  env.fill(bad, { 'erpBarcode:barcode': 'bad code!' });
  env.fill(other, { 'erpBarcode:barcode': 'BC-0003' });
  const report = await env.run();
  t.same(report.tasks.barcode.counts, { DONE: 2, FAILED: 1 });
  t.match(
    env.props(bad)['erpTaskStatus:message'],
    'BAPI_BARCODE_SENDLIST: Enter a permitted bar code (bar code check): bad code!',
  );
  t.same(
    env.erp.tables.barcodes.map((b) => [b.BARCODE, b.CONTREP, b.DOCTYPE]).sort(),
    [
      ['BC-0001', 'Z1', 'PDF'],
      ['BC-0003', 'Z1', 'PDF'],
    ],
    "DOCTYPE: the document class of the file's MIME type",
  );
  const dup = await env.upload('ERP/Barcode', 'scan-4.pdf');
  await env.run();
  env.fill(dup, { 'erpBarcode:barcode': 'BC-0001' });
  await env.run();
  t.match(
    env.props(dup)['erpTaskStatus:message'],
    /already assigned to another document/,
    'one bar code, two documents: refused',
  );
  const long = await env.upload('ERP/Barcode', 'scan-5.pdf');
  await env.run();
  env.fill(long, { 'erpBarcode:barcode': 'B'.repeat(41) });
  const refused = await env.run();
  t.same(refused.tasks.barcode.counts, { FAILED: 1 }, 'a bar code too long for SAP is never sent');
  t.match(env.props(long)['erpTaskStatus:message'], /longer than the 40 characters of SAP field BARCODE/);
});

t.test(
  "workflow: SAP's presetting names the agent; by bar code with its document type; dry run calls nothing; the document's own agent through SAP_WAPI_START_WORKFLOW",
  async (t) => {
    const env = await sandboxEnv(t);
    const uid = await env.upload('ERP/Workflow', 'wf.pdf');
    const agent = await env.upload('ERP/Workflow', 'wf2.pdf');
    const byBarcode = await env.upload('ERP/Workflow', 'wf3.pdf');
    const noType = await env.upload('ERP/Workflow', 'wf4.pdf');
    await env.job({ task: 'link' });
    t.equal(env.props(uid)['erpTaskStatus:status'], 'READY', '--task link: the workflow documents are only labelled');
    env.fill(agent, { 'erpStartWorkflow:erpObjId': 'NOBODY' });
    env.fill(byBarcode, { 'erpStartWorkflow:erpBarcode': 'WF-1', 'erpStartWorkflow:erpLateArchiving': true });
    env.fill(noType, { 'erpStartWorkflow:erpBarcode': 'WF-2', 'erpStartWorkflow:erpArchiveObject': null });
    const dry = await env.run(true);
    t.equal(dry.tasks.workflow.counts.PLANNED, 4);
    t.same(
      dry.plannedCalls.map((c) => c.call),
      Array(4).fill('ARCHIV_PROCESS_RFCINPUT'),
      'the dry run lists the ERP calls',
    );
    t.notOk(
      dry.plannedCalls.some((c) => 'DOCUMENT_DATA' in c.params),
      'no agent rows: the function module takes no agent',
    );
    t.equal(env.erp.tables.inbox.length, 0, 'and makes none');
    t.equal(env.props(uid)['erpTaskStatus:status'], 'READY', 'nor writes a status');
    await env.run();
    t.equal(env.props(agent)['erpTaskStatus:status'], 'DONE', 'erpObjId is not sent…');
    t.same(
      env.erp.tables.inbox.map((w) => w.agents[0].OBJID),
      ['APPROVER1', 'APPROVER1', 'APPROVER1'],
      "…every work item goes to the agent of the document type's presetting",
    );
    t.same(env.erp.tables.inbox.map((w) => [w.BARCODE, w.LATE]).sort(), [
      ['', false],
      ['', false],
      ['WF-1', true],
    ]);
    t.equal(env.props(byBarcode)['erpTaskStatus:erpReference'], 'WF-1');
    t.match(
      env.props(noType)['erpTaskStatus:message'],
      'ARCHIV_PROCESS_RFCINPUT raised ERROR_PARAMETER: Document type  is not defined',
      'without a document type SAP has no presetting to route by',
    );
    const dumped = await env.upload('ERP/Workflow', 'dumped.pdf');
    await env.job({ task: 'link' });
    // The call dies with a bare 500: SAP may have created the work item, so no automatic second one.
    env.erp.faults.add({ functionName: 'ARCHIV_PROCESS_RFCINPUT', status: 500, body: '' });
    t.same((await env.run()).tasks.workflow.counts, { FAILED: 1 });
    t.match(
      env.props(dumped)['erpTaskStatus:message'],
      /failed with HTTP 500; SAP may have it, so it is not sent again by itself: check in SAP transaction SWI1 \(work items by date\) or the inbox of the agents of document type ZINVWF \(SBWP\): a work item for document [0-9a-f-]+, then `connect2erp retry --doc [0-9a-f-]+` to send it again/,
    );

    // The document's own agent: the workflow-to-agent call, with the customer's workflow template.
    writeFileSync(
      join(env.location.jobsDir, 'workflow.yaml'),
      `${readFileSync(join(env.location.jobsDir, 'workflow.yaml'), 'utf8')}${templateYaml('workflow-to-agent', 'RFC') as string}`,
    );
    const jdoe = await env.upload('ERP/Workflow', 'jdoe.pdf');
    const nobody = await env.upload('ERP/Workflow', 'nobody.pdf');
    await env.job({ task: 'link' });
    env.fill(jdoe, { 'erpStartWorkflow:erpObjId': 'JDOE' });
    env.fill(nobody, { 'erpStartWorkflow:erpObjId': 'NOBODY' });
    await env.run();
    t.match(env.erp.tables.inbox.at(-1), {
      startedBy: 'SAP_WAPI_START_WORKFLOW',
      task: 'WS90000001',
      ARC_DOC_ID: jdoe,
      agents: [{ OTYPE: 'US', OBJID: 'JDOE' }],
    });
    t.equal(
      env.props(jdoe)['erpTaskStatus:erpReference'],
      env.erp.tables.inbox.at(-1)?.id,
      "the work item's id is the reference",
    );
    t.match(env.props(nobody)['erpTaskStatus:message'], 'SAP_WAPI_START_WORKFLOW: Agent US NOBODY does not exist');
  },
);

t.test(
  "wrong ERP credentials stop the system's lanes and release their claims, none charged, exit 2; an unreachable ERP is an outage, exit 4",
  async (t) => {
    const env = await sandboxEnv(t);
    const uid = await env.upload('ERP/Workflow', 'wf.pdf');
    const invoice = await env.upload('ERP/Invoices', 'invoice.pdf');
    await env.job({ task: 'barcode' });
    env.fill(invoice, { 'erpCreateALDocument:erpObjectId': '4711' });
    process.env.SAP_PASSWORD = 'wrong';
    const refused = await env.run().finally(() => (process.env.SAP_PASSWORD = 'sandbox'));
    t.equal(refused.exitCode, 2, 'a person must change something');
    t.same(refused.problems, [], 'the configuration files are valid');
    t.match(refused.outages, [
      {
        system: 'S4H',
        kind: 'refused',
        reason: /SAP refused the credentials \(HTTP 401\); check rfc.auth in erpHttp.yaml/,
      },
    ]);
    t.same(
      [invoice, uid].map((doc) => [env.props(doc)['erpTaskStatus:status'], env.props(doc)['erpTaskStatus:attempts']]),
      [
        ['READY', 0],
        ['READY', 0],
      ],
      'released or never claimed, no attempt charged',
    );
    t.match(refused.tasks, {
      link: { state: 'stopped', reason: /ERP system S4H refused: .*SAP refused the credentials/ },
      workflow: { state: 'stopped', reason: /ERP system S4H refused/ },
    });
    t.same(refused.tasks.link.counts, { RELEASED: 1 });
    const text = renderReport(refused);
    t.match(
      text,
      /\noutage: ERP system S4H refused: .*SAP refused the credentials .*\(its documents wait, none charged\)\n/,
    );
    t.match(
      text,
      /\ntask link: stopped early \(ERP system S4H refused: ARCHIV_CONNECTION_INSERT on S4H: SAP refused the credentials \(HTTP 401\); check rfc\.auth in erpHttp\.yaml\); the rest of its backlog waits for the next run; 1 RELEASED\n/,
    );
    t.match(renderHtml(refused), /<li class="bad">outage: ERP system S4H refused: /);

    await env.erp.stop();
    const down = await env.run();
    t.equal(down.exitCode, 4, 'an SAP system unavailable');
    t.match(down.outages, [{ system: 'S4H', kind: 'unavailable', reason: /ECONNREFUSED/ }]);
    t.same(
      [env.props(uid)['erpTaskStatus:status'], env.props(uid)['erpTaskStatus:attempts']],
      ['READY', 0],
      'the outage charges the document nothing',
    );
    t.match(down.tasks.workflow.documents, [{ uid, result: 'RELEASED', message: /ECONNREFUSED.*no attempt charged/ }]);
  },
);

t.test(
  'a dry run shows what each task would do with what its own intake would label, with the call each would get, and writes nothing',
  async (t) => {
    const env = await sandboxEnv(t);
    const { jobsDir, configDir } = env.location;
    const edit = (file: string, change: (text: string) => string) =>
      writeFileSync(file, change(readFileSync(file, 'utf8')));
    edit(join(jobsDir, 'workflow.yaml'), (text) => `${text}filter: "dc:title <> 'skip.pdf'"\n`);
    edit(join(jobsDir, 'link.yaml'), (text) => `${text}systems: [ECC]\n`);
    edit(
      join(configDir, 'erpHttp.yaml'),
      (text) =>
        `${text}  - name: ECC\n    client: "200"\n    rfc: {url: "http://127.0.0.1:1", auth: {username: U, password: p}}\n`,
    );
    const approval = await env.upload('ERP/Workflow', 'approval.pdf');
    await env.upload('ERP/Workflow', 'skip.pdf');
    await env.upload('ERP/Invoices', 'invoice.pdf');
    await env.upload('ERP/Barcode', 'scan.pdf');
    const before = env.snapshot();
    const dry = await env.run(true);
    t.equal(env.snapshot(), before, 'nothing written to the repository or SAP');
    t.same(
      dry.tasks.workflow.counts,
      { PLANNED: 1 },
      "the new approval would be sent by this same run; skip.pdf is left out by the task's filter",
    );
    t.match(dry.tasks.workflow.documents[0], {
      uid: approval,
      result: 'PLANNED',
      planned: {
        call: 'ARCHIV_PROCESS_RFCINPUT',
        values: { 'DOCUMENT_ENTRY.ARC_DOC_ID': approval, 'DOCUMENT_ENTRY.AR_OBJECT': 'ZINVWF' },
      },
    });
    t.same(
      dry.tasks.barcode.counts,
      {},
      'the scan would wait for its bar code: the intake says so, the task has nothing to send',
    );
    t.same(dry.tasks.link.counts, {}, "the invoice is not for the link task's system");
    const text = renderReport(dry);
    t.match(
      text,
      /\ntask workflow: 1 PLANNED\n.*\n.*\n\S*approval\.pdf\s+PLANNED\s+ARCHIV_PROCESS_RFCINPUT DOCUMENT_ENTRY\.ARCHIV_ID=Z1 DOCUMENT_ENTRY\.ARC_DOC_ID=/,
    );
    t.match(text, /\/scan\.pdf\s+barcode\s+planned\s+PENDING_INPUT\s+erpBarcode:barcode\n/);
    t.match(
      renderHtml(dry),
      /<h2>Documents the tasks would process \(1\)<\/h2>[\s\S]*approval\.pdf<\/a><\/td><td><code>[0-9a-f-]+<\/code><\/td><td>PLANNED<\/td><td>ARCHIV_PROCESS_RFCINPUT DOCUMENT_ENTRY\.ARCHIV_ID=Z1/,
    );

    const real = await env.run();
    t.same(real.tasks.workflow.counts, { DONE: 1 }, 'the run itself does what the dry run said');
    t.same(
      env.erp.tables.inbox.map((item) => item.ARC_DOC_ID),
      [approval],
    );
  },
);

t.test('task selection: systems, filter, a system without RFC, a Rest task, claims taken by another run', async (t) => {
  const env = await sandboxEnv(t);
  const { jobsDir, configDir } = env.location;
  const edit = (file: string, change: (text: string) => string) =>
    writeFileSync(file, change(readFileSync(file, 'utf8')));
  const erpYaml = readFileSync(join(configDir, 'erpHttp.yaml'), 'utf8');
  edit(join(jobsDir, 'workflow.yaml'), (text) => `${text}systems: [S4H]\nfilter: "dc:title <> 'skip.pdf'"\n`);
  edit(join(jobsDir, 'link.yaml'), (text) => `${text}systems: [S4H]\n`);
  const barcodeService =
    'rest:\n  service: /sap/opu/odata/sap/ZBARCODE_SRV\n  method: POST\n  path: /Barcodes\n  body: parameters\n  parameters:\n    BARCODETABLE[].BARCODE: { property: "erpBarcode:barcode" }\n  result: { erpReference: "{BARCODETABLE[].BARCODE}" }\n';
  edit(
    join(jobsDir, 'barcode.yaml'),
    (text) => `${text.replace('function: RFC', 'function: Rest')}systems: [ECC]\n${barcodeService}`,
  );
  edit(
    join(configDir, 'erpHttp.yaml'),
    (text) =>
      `${text}  - name: ECC\n    client: "200"\n    rest: {url: "http://127.0.0.1:1", auth: {username: U, password: p}}\n`,
  );
  const skipped = await env.upload('ERP/Workflow', 'skip.pdf');
  const taken = await env.upload('ERP/Workflow', 'taken.pdf');
  await env.job({ task: 'link' });
  env.sandbox.faults.add({
    method: 'PUT',
    path: `/id/${taken}`,
    status: 409,
    body: '{"entity-type":"exception","status":409,"message":"Invalid change token"}',
  });
  const report = await env.run();
  t.same(report.problems, []);
  t.same(report.warnings, []);
  t.equal(env.props(skipped)['erpTaskStatus:status'], 'READY', 'the filter leaves it out');
  t.same(report.tasks.workflow.counts, { CLAIMED_ELSEWHERE: 1 });
  await env.run();
  t.equal(env.props(taken)['erpTaskStatus:status'], 'DONE', 'the next run takes it');

  writeFileSync(join(configDir, 'erpHttp.yaml'), erpYaml);
  edit(join(jobsDir, 'workflow.yaml'), (text) => text.replace('systems: [S4H]\n', ''));
  edit(join(jobsDir, 'barcode.yaml'), (text) =>
    text.replace('systems: [ECC]\n', '').replace(barcodeService, '').replace('function: Rest', 'function: RFC'),
  );
  const unknown = await env.upload('ERP/Workflow', 'unknown.pdf');
  await env.job({ task: 'link' });
  env.fill(unknown, { 'erpHttpContent:source': 'NOPE' });
  await env.run();
  t.equal(
    env.props(unknown)['erpTaskStatus:message'],
    'waiting for erpHttpContent:source (no ERP system "NOPE" with a RFC connection)',
  );
  const token = env.sandbox.store.changeToken(env.sandbox.store.get(unknown) as StoredDoc);
  await env.run();
  t.equal(
    env.sandbox.store.changeToken(env.sandbox.store.get(unknown) as StoredDoc),
    token,
    'still waiting for the same thing: nothing written',
  );

  const other = await env.upload('ERP/Workflow', 'other.pdf');
  await env.job({ task: 'link' });
  const sibling = await env.upload('ERP/Workflow', 'sibling.pdf');
  await env.job({ task: 'link' });
  env.sandbox.faults.add({ method: 'PUT', path: `/id/${other}`, status: 400 });
  const refused = await env.run();
  t.same(refused.warnings, [], 'a claim refused for another reason does not stop the run…');
  t.match(
    refused.tasks.workflow.documents.find((d) => d.uid === other),
    { result: 'ERROR', message: /failed with HTTP 400; not claimed, not sent: the next run looks at it again/ },
    "…it is that document's outcome",
  );
  t.equal(env.props(sibling)['erpTaskStatus:status'], 'DONE', 'its neighbour goes on');
  t.equal(env.props(other)['erpTaskStatus:status'], 'READY', 'nothing changed on it');
  t.equal(refused.exitCode, 1, 'exit 1: a document failed');
});
