import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { quietLog, sandboxEnv, type Env } from './helpers/env.js';
import { cli, startCli } from './helpers/run-cli.js';
import { runJob } from '../src/job/run.js';
import type { StoredDoc } from '../sandbox/repository/store.js';
import type { RunReport } from '../src/job/report/report.js';
import { responseXml } from '../sandbox/erp/soap-codec.js';

/** One document's trouble stays that document's, and a crash costs no more than the calls in flight. */

// One test starts a run in a process of its own and kills it.
t.setTimeout(300_000);

const uploadMany = (env: Env, folder: string, prefix: string, n: number) =>
  Promise.all(Array.from({ length: n }, (_, i) => env.upload(folder, `${prefix}-${i}.pdf`)));
const status = (env: Env, uid: string) => env.props(uid)['erpTaskStatus:status'];
/** One task's run, minutes after the last write: the search index has caught up with it. */
const runTask = (env: Env, task: string) => {
  env.sandbox.index.catchUp();
  return runJob({ location: env.location, dryRun: false, task }, quietLog);
};
/** The intake alone (the link task has nothing ready yet): workflow documents become READY. */
const intake = (env: Env) => runTask(env, 'link');
const workflow = (env: Env) => runTask(env, 'workflow');
const exception = (status: number, message: string) => ({
  status,
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify({ 'entity-type': 'exception', status, message }),
});

t.test(
  "a 409, a 404 or a 500 on one document's write is that document's outcome: the rest of its page is sent and settled",
  async (t) => {
    const env = await sandboxEnv(t);
    const uids = await uploadMany(env, 'ERP/Workflow', 'approval', 21);
    await intake(env);
    const [edited, deleted, deletedAfter, broken] = uids;
    const faults = env.sandbox.faults;
    faults.add({ method: 'PUT', path: `/id/${edited}`, ...exception(409, `${edited}, Invalid change token`) });
    faults.add({ method: 'PUT', path: `/id/${deleted}`, ...exception(404, deleted) });
    // Its claim goes through, its call too; the write of its outcome finds it gone.
    faults.add({ method: 'PUT', path: `/id/${deletedAfter}`, skip: 1, ...exception(404, deletedAfter) });
    faults.add({ method: 'PUT', path: `/id/${broken}`, ...exception(500, 'disk full') });
    const report = await workflow(env);

    const byUid = new Map(report.tasks.workflow.documents.map((d) => [d.uid, d]));
    t.match(
      byUid.get(edited),
      { result: 'CLAIMED_ELSEWHERE' },
      'a claim that meets a change is left to whoever made it',
    );
    t.match(byUid.get(deleted), { result: 'GONE', message: 'deleted meanwhile' });
    t.match(
      byUid.get(deletedAfter),
      { result: 'GONE' },
      'gone after its call: its work item is in SAP, nothing is left to write',
    );
    t.match(byUid.get(broken), {
      result: 'ERROR',
      message: /update .* failed with HTTP 500: disk full; not claimed, not sent: the next run looks at it again/,
    });
    const others = uids.slice(4);
    t.same(
      others.filter((uid) => status(env, uid) !== 'DONE'),
      [],
      'the 17 others of the page are DONE',
    );
    t.equal(
      env.erp.tables.inbox.length,
      18,
      'the 17 and the one deleted after its call reached SAP; the others did not',
    );
    t.same([status(env, edited), status(env, broken)], ['READY', 'READY'], 'unchanged, for the next run');
    t.same(report.warnings, [], 'the run was not stopped');
    t.equal(report.exitCode, 1, 'exit 1: one document failed (the 500)');

    // What the two 404s stood for.
    for (const uid of [deleted, deletedAfter])
      env.sandbox.store.remove(env.sandbox.actor(), env.sandbox.store.get(uid) as StoredDoc);
    const next = await workflow(env);
    t.same(next.tasks.workflow.counts, { DONE: 2 }, 'the next run sends the two left as they were');
    t.equal(env.erp.tables.inbox.length, 20);
  },
);

t.test("a claim whose answer was lost is recognised as the run's own: the document is sent once, DONE", async (t) => {
  const env = await sandboxEnv(t);
  const uids = await uploadMany(env, 'ERP/Workflow', 'approval', 3);
  await intake(env);
  // The claim is written, its answer lost: the client sends it again and meets its own write (409).
  for (const uid of uids) env.sandbox.faults.add({ method: 'PUT', path: `/id/${uid}`, loseAnswer: true });
  const report = await workflow(env);
  t.same(
    report.tasks.workflow.counts,
    { DONE: 3 },
    'not CLAIMED_ELSEWHERE, and never FAILED later as "SAP may have it"',
  );
  t.same(
    uids.map((uid) => status(env, uid)),
    ['DONE', 'DONE', 'DONE'],
  );
  t.equal(env.erp.tables.inbox.length, 3, 'one work item each');
});

t.test(
  'a run killed in the middle of a workflow task leaves at most maxConcurrentCalls documents for an operator',
  async (t) => {
    const env = await sandboxEnv(t);
    const uids = await uploadMany(env, 'ERP/Workflow', 'approval', 40);
    await intake(env);
    env.erp.faults.hold(); // SAP has the first calls and has not answered when the run dies
    env.sandbox.index.catchUp();
    const run = startCli(['run', '--task', 'workflow', '--config', env.location.configDir]);
    await env.erp.faults.whenHeld(8);
    run.child.kill('SIGKILL');
    await run.exited;
    t.equal(
      uids.filter((uid) => status(env, uid) === 'IN_PROGRESS').length,
      8,
      'only the documents whose calls were out were claimed (maxConcurrentCalls 8)',
    );
    env.erp.faults.release(); // SAP does the work it had; the answers go nowhere
    const later = new Date(Date.now() + 3_600_000); // the dead run's claims have expired
    env.sandbox.index.catchUp();
    const next = await runJob(
      { location: env.location, dryRun: false, task: 'workflow', observer: { now: () => later } },
      quietLog,
    );
    t.same(
      next.tasks.workflow.counts,
      { FAILED: 8, DONE: 32 },
      'the 8 that may be in SAP go to an operator, the 32 others are sent',
    );
    t.equal(env.erp.tables.inbox.length, 40, 'one work item each: none lost, none twice');
    t.equal(new Set(env.erp.tables.inbox.map((item) => item.ARC_DOC_ID)).size, 40);
  },
);

t.test(
  'the other writes of a task: a user\'s edit meeting its "waiting for" note, a claim and its re-read both meeting changes',
  async (t) => {
    const env = await sandboxEnv(t);
    const [invoice, sibling] = await uploadMany(env, 'ERP/Invoices', 'invoice', 2);
    const [approval] = await uploadMany(env, 'ERP/Workflow', 'approval', 1);
    await intake(env);
    // Set READY by hand without the invoice number: the task notes what it waits for, and meets a user's edit.
    env.fill(invoice, { 'erpTaskStatus:status': 'READY' });
    env.fill(sibling, { 'erpTaskStatus:status': 'READY' });
    env.sandbox.faults.add({
      method: 'PUT',
      path: `/id/${invoice}`,
      ...exception(409, `${invoice}, Invalid change token`),
    });
    // The claim meets a change, and the document is gone by the time it is read again.
    env.sandbox.faults.add({
      method: 'PUT',
      path: `/id/${approval}`,
      ...exception(409, `${approval}, Invalid change token`),
    });
    env.sandbox.faults.add({ method: 'GET', path: `/id/${approval}`, ...exception(404, approval) });
    const report = await env.run();
    const byUid = new Map(
      Object.values(report.tasks)
        .flatMap((task) => task.documents)
        .map((d) => [d.uid, d]),
    );
    t.match(byUid.get(invoice), {
      result: 'SKIPPED',
      message: 'changed by a user or another run meanwhile; the next run looks at it again',
    });
    t.match(
      byUid.get(sibling),
      { result: 'PENDING_INPUT', message: 'waiting for erpCreateALDocument:erpObjectId' },
      'its neighbour is noted as waiting',
    );
    t.match(byUid.get(approval), { result: 'GONE' });
    t.equal(report.exitCode, 0, 'nothing failed: the others have the documents');
  },
);

t.test('the repository refusing the credentials in the middle of a task stops the run, as at its start', async (t) => {
  const env = await sandboxEnv(t);
  const [first, second] = await uploadMany(env, 'ERP/Workflow', 'approval', 2);
  await intake(env);
  const refused = {
    status: 401,
    headers: { 'Content-Type': 'text/html' },
    body: '<html><body><h1>401 Unauthorized</h1></body></html>',
  };
  env.sandbox.faults.add({ method: 'PUT', path: `/id/${first}`, ...refused });
  const atClaim = await workflow(env);
  t.equal(atClaim.exitCode, 2);
  t.match(atClaim.problems.join('\n'), /update .* failed with HTTP 401 \(check the credentials in storage\.yaml\)/);
  t.match(atClaim.tasks.workflow, { state: 'stopped' });
  // Its claim went through and its work item is in SAP; the write of its outcome is refused.
  env.sandbox.faults.add({ method: 'PUT', path: `/id/${second}`, skip: 1, ...refused });
  env.fill(second, {
    'erpTaskStatus:status': 'READY',
    'erpTaskStatus:claimedBy': null,
    'erpTaskStatus:claimExpires': null,
  });
  const atSettle = await workflow(env);
  t.equal(atSettle.exitCode, 2);
  t.equal(status(env, second), 'IN_PROGRESS', 'left claimed, so that a later run takes it over as after a crash');
});

t.test(
  'four runs started together on one backlog, on a search index that lags: each document done once, one folder each, every run exits 0',
  async (t) => {
    const env = await sandboxEnv(t); // the index lags every write by a second, as a stock Nuxeo's
    // Invoices and scans labelled earlier and completed by users: READY for the link and bar-code tasks.
    const invoices = await uploadMany(env, 'ERP/Invoices', 'invoice', 16);
    const scans = await uploadMany(env, 'ERP/Barcode', 'scan', 16);
    await intake(env);
    invoices.forEach((uid, i) => env.fill(uid, { 'erpCreateALDocument:erpObjectId': `INV-${i}` }));
    scans.forEach((uid, i) => env.fill(uid, { 'erpBarcode:barcode': `BC-${i}` }));
    env.sandbox.index.catchUp();
    // New ones: approvals for the workflow task, invoices that get folders and wait for their number, scans that wait for their bar code.
    const approvals = await uploadMany(env, 'ERP/Workflow', 'approval', 40);
    const newInvoices = await uploadMany(env, 'ERP/Invoices', 'new-invoice', 8);
    const newScans = await uploadMany(env, 'ERP/Barcode', 'new-scan', 8);
    env.sandbox.faults.latencyMs = 2;
    env.erp.faults.latencyMs = 20;
    env.sandbox.index.catchUp(); // the backlog is indexed; what the four runs write is not, for a second
    const runs = Array.from({ length: 4 }, (_, i) =>
      startCli(['run', '--config', env.location.configDir, '--report', join(env.dir, `run-${i}.json`)]),
    );
    const results = await Promise.all(runs.map((r) => r.exited));
    t.same(
      results.map((r) => r.code),
      [0, 0, 0, 0],
      results
        .map((r) =>
          r.stderr
            .split('\n')
            .filter((l) => /"level":"(warn|error)"/.test(l))
            .slice(0, 3)
            .join('\n'),
        )
        .join('\n'),
    );

    const once = (values: string[]) => new Set(values).size === values.length;
    t.same(
      [env.erp.tables.links.length, env.erp.tables.barcodes.length, env.erp.tables.inbox.length],
      [16, 16, 40],
      'every link, bar code and work item made',
    );
    t.ok(
      once(env.erp.tables.links.map((l) => l.ARC_DOC_ID)) &&
        once(env.erp.tables.barcodes.map((b) => b.DOCID)) &&
        once(env.erp.tables.inbox.map((w) => w.ARC_DOC_ID)),
      'none of them twice',
    );
    t.same(
      [...invoices, ...scans, ...approvals].filter((uid) => status(env, uid) !== 'DONE'),
      [],
      'all DONE',
    );
    t.same(
      [...newInvoices, ...newScans].map((uid) => status(env, uid)).filter((s) => s !== 'PENDING_INPUT'),
      [],
      'the new invoices and scans wait for their values',
    );
    for (const uid of [...invoices, ...newInvoices]) {
      const folders = [...env.sandbox.store.all()].filter(
        (d) => d.type === 'Folder' && d.properties['dc:source'] === uid,
      );
      if (folders.length !== 1) t.fail(`invoice ${uid} has ${folders.length} archive-link folders`);
    }
    t.equal(
      [...env.sandbox.store.all()].filter((d) => d.properties['erpTaskStatus:status'] === 'IN_PROGRESS').length,
      0,
      'nothing left claimed',
    );
  },
);

t.test(
  'four runs that each take a shard (--shard k/4, or an Indexed Job index): the backlog is shared out, nobody waits on anybody, no 409',
  async (t) => {
    const env = await sandboxEnv(t);
    const approvals = await uploadMany(env, 'ERP/Workflow', 'approval', 60);
    env.sandbox.index.catchUp();
    let conflicts = 0;
    env.sandbox.faults.observe = (_req, res) => res.on('finish', () => void (res.statusCode === 409 && conflicts++));
    const configDir = ['--config', env.location.configDir];
    const runs = [
      ...[1, 2, 3].map((k) =>
        startCli(['run', '--shard', `${k}/4`, ...configDir, '--report', join(env.dir, `shard-${k}.json`)]),
      ),
      // The fourth as Kubernetes starts the pods of an Indexed Job: its index from 0, the completions told.
      startCli(['run', ...configDir, '--report', join(env.dir, 'shard-4.json')], {
        JOB_COMPLETION_INDEX: '3',
        CONNECT2ERP_SHARDS: '4',
      }),
    ];
    const results = await Promise.all(runs.map((r) => r.exited));
    t.same(
      results.map((r) => r.code),
      [0, 0, 0, 0],
      results.map((r) => r.stderr.slice(-500)).join('\n'),
    );
    t.match(results[3].stderr, /"message":"run started","runId":"[^"]+","shard":"4\/4"/);
    const reports = [1, 2, 3, 4].map(
      (k) => JSON.parse(readFileSync(join(env.dir, `shard-${k}.json`), 'utf8')) as RunReport,
    );
    const labelled = reports.map((r) => r.intake.counts.labelled);
    t.equal(
      labelled.reduce((a, b) => a + b),
      60,
      `each approval labelled by one run: ${labelled.join(', ')}`,
    );
    t.ok(
      labelled.every((n) => n > 0),
      'each run had a share',
    );
    t.same(
      reports.map((r) => r.tasks.workflow.counts.DONE ?? 0),
      labelled,
      'each run sent what it labelled',
    );
    t.same(
      approvals.filter((uid) => status(env, uid) !== 'DONE'),
      [],
      'all DONE',
    );
    t.equal(env.erp.tables.inbox.length, 60, 'one work item each');
    t.equal(conflicts, 0, 'no run ever met another on a document');
  },
);

t.test(
  'a backlog goes to SAP as it is labelled: the intake labels no further ahead of the sending than intakeRoundSize and its pages under way',
  async (t) => {
    const env = await sandboxEnv(t, { storage: { pageSize: '5', intakeRoundSize: '10' } });
    const approvals = await uploadMany(env, 'ERP/Workflow', 'approval', 25);
    env.sandbox.index.catchUp();
    const result = await cli(
      ['run', '--task', 'workflow', '--config', env.location.configDir, '--report', join(env.dir, 'r.json')],
      { CONNECT2ERP_LOG_LEVEL: 'debug' },
    );
    t.equal(result.code, 0, result.stderr.slice(-1000));

    const events = result.stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => (JSON.parse(line) as { message: string }).message)
      .filter((message) => message === 'document labelled' || message === 'document processed');
    const firstSent = events.indexOf('document processed');
    t.ok(firstSent > 0 && firstSent <= 10 + 2 * 5, `the first work item after ${firstSent} labelled`);
    t.ok(events.lastIndexOf('document labelled') > firstSent, 'the intake went on after it');
    t.same(
      approvals.filter((uid) => status(env, uid) !== 'DONE'),
      [],
      'all DONE in the one run',
    );
    t.equal(env.erp.tables.inbox.length, 25, 'one work item each, none twice');
    const report = JSON.parse(readFileSync(join(env.dir, 'r.json'), 'utf8')) as RunReport;
    t.equal(report.intake.counts.labelled, 25);
    t.equal(report.tasks.workflow.counts.DONE, 25);
  },
);

for (const [pageSize, intakeRoundSize, documents] of [
  [5, 3, 25],
  [10, 10, 60],
  [1000, 1000, 2500],
])
  t.test(
    `one run, search index caught up, pageSize ${pageSize} and intakeRoundSize ${intakeRoundSize}: exactly one work item for each of ${documents} documents`,
    async (t) => {
      const env = await sandboxEnv(t, {
        sandbox: { repository: { searchLagMs: 0 } },
        storage: { pageSize: String(pageSize), intakeRoundSize: String(intakeRoundSize) },
      });
      const { store } = env.sandbox;
      const parent = store.getByPath('/default-domain/workspaces/ERP/Workflow') as StoredDoc;
      const blob = store.storeBlob(Buffer.from('%PDF-1.4 approval'), 'approval.pdf', 'application/pdf');
      for (let i = 0; i < documents; i++)
        store.create(
          env.sandbox.actor(),
          parent,
          { type: 'File', name: `approval-${i}.pdf`, properties: { 'dc:title': `approval-${i}` } },
          () => ({ ...blob, name: `approval-${i}.pdf` }),
        );
      const report = await runTask(env, 'workflow');
      t.equal(report.exitCode, 0);
      t.same(report.tasks.workflow.counts, { DONE: documents });
      t.equal(env.erp.tables.inbox.length, documents, 'as many work items as documents');
      t.equal(new Set(env.erp.tables.inbox.map((item) => item.ARC_DOC_ID)).size, documents, 'none twice');
    },
  );

t.test("a task's search the repository refuses stops the run: the other tasks read no further page", async (t) => {
  const env = await sandboxEnv(t);
  const workflowYaml = join(env.location.jobsDir, 'workflow.yaml');
  writeFileSync(workflowYaml, readFileSync(workflowYaml, 'utf8').replace('batchSize: 50', 'batchSize: 1'));
  const approvals = await uploadMany(env, 'ERP/Workflow', 'approval', 30);
  await intake(env);
  let workflowPages = 0;
  let refused!: () => void;
  const barcodeRefused = new Promise<void>((resolve) => (refused = resolve));
  env.sandbox.faults.observe = (req, res) => {
    const query = new URL(req.url ?? '', 'http://x').searchParams.get('query') ?? '';
    if (query.includes("'fct_erp_start_workflow'")) workflowPages += 1;
    if (query.includes("'fct_erp_barcode'")) res.once('finish', refused);
  };
  env.sandbox.faults.add({ path: 'fct_erp_barcode', status: 400, body: 'no' });
  // SAP holds the work items: the workflow task's lane fills, and its reading waits for room.
  env.erp.faults.hold();
  env.sandbox.index.catchUp();
  const run = runJob({ location: env.location, dryRun: false }, quietLog);
  await barcodeRefused;
  env.erp.faults.release();
  const report = await run;
  t.equal(report.exitCode, 1);
  t.match(report.failure, /search failed with HTTP 400/);
  t.ok(workflowPages < 30, `the workflow task read ${workflowPages} of its 30 pages`);
  t.same(
    approvals.filter((uid) => !['DONE', 'READY'].includes(status(env, uid) as string)),
    [],
    'what was sent is settled, the rest untouched: nothing left claimed behind the report',
  );
});

t.test(
  "a repeat SAP refuses because an earlier attempt's work arrived after its lookup read is looked up again: DONE, not FAILED",
  async (t) => {
    const env = await sandboxEnv(t);
    const scan = await env.upload('ERP/Barcode', 'scan.pdf');
    await env.job({ task: 'barcode' });
    // An earlier attempt whose answer was lost; SAP did its work late, after this attempt's lookup read.
    env.fill(scan, {
      'erpBarcode:barcode': 'BC-LATE',
      'erpTaskStatus:status': 'RETRY',
      'erpTaskStatus:attempts': 1,
      'erpTaskStatus:nextAttempt': '2000-01-01T00:00:00.000Z',
    });
    env.erp.tables.barcodes.push({
      client: '100',
      BARCODE: 'BC-LATE',
      CONTREP: 'Z1',
      DOCID: scan,
      ARDATE: '20261126',
      DOCTYPE: 'PDF',
    });
    const nothingYet = responseXml('RFC_READ_TABLE', { DATA: [], FIELDS: [], OPTIONS: [] });
    env.erp.faults.add({ functionName: 'RFC_READ_TABLE', status: 200, body: nothingYet, times: 1 });
    const run = await env.job({ task: 'barcode' });
    t.equal(run.tasks.barcode.counts.DONE, 1, JSON.stringify(run.tasks.barcode.documents));
    t.equal(status(env, scan), 'DONE');
    t.equal(env.erp.tables.barcodes.filter((b) => b.DOCID === scan).length, 1, 'once in SAP');
  },
);
