import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exceptionXml } from '../sandbox/erp/soap-codec.js';
import { NO_BLOBS, type StoredDoc } from '../sandbox/repository/store.js';
import { quietLog, sandboxEnv, type Env } from './helpers/env.js';
import { cli } from './helpers/run-cli.js';
import { storedBySap } from './helpers/sap-data.js';
import { reconcile as reconcileIn, type Reconciliation } from '../src/operator/reconcile/reconcile.js';
import { renderReconciliation } from '../src/operator/reconcile/render.js';
import { erpPorts } from '../src/job/erp-ports.js';
import { portsFor } from '../src/ports/ports.js';
import { NEVER } from '../src/stop.js';
import { reconciliation, type ReconcileOptions } from '../src/commands/reconcile.js';

/** `connect2erp reconcile` against the sandboxes: SAP changed behind the job's back, found both ways. */

t.setTimeout(180_000);

const uploadMany = (env: Env, folder: string, prefix: string, n: number) =>
  Promise.all(Array.from({ length: n }, (_, i) => env.upload(folder, `${prefix}-${i}.pdf`)));

/**
 * `reconcile --json`'s result and exit code, run in this process as the command runs it (over HTTP
 * against the sandboxes), without a process of its own for each; `options` as its command line
 * gives them. The command's text and JSON as printed, with their exit codes, are run as processes
 * in the tests that read them.
 */
async function reconcile(
  env: Env,
  options: Partial<ReconcileOptions> & { task: string },
): Promise<{ code: number; result: Reconciliation }> {
  env.sandbox.index.catchUp();
  const { code, result } = await reconciliation(env.location, { requeue: false, dryRun: false, ...options });
  return { code, result: JSON.parse(JSON.stringify(result)) as Reconciliation };
}

const kinds = (result: Reconciliation) => result.findings.map((f) => [f.kind, f.docId]).sort();

t.test("links: one deleted in SAP, one added there for a document not sent, one twice, one of SAP's own", async (t) => {
  const env = await sandboxEnv(t);
  const invoices = await uploadMany(env, 'ERP/Invoices', 'invoice', 4);
  const waiting = await env.upload('ERP/Invoices', 'invoice-waiting.pdf');
  await env.job({ task: 'link' });
  invoices.forEach((uid, i) => env.fill(uid, { 'erpCreateALDocument:erpObjectId': `10000000${i}2026` }));
  await env.job({ task: 'link' });
  t.equal(env.erp.tables.links.length, 4);
  const clean = await reconcile(env, { task: 'link' });
  t.equal(clean.code, 0, 'SAP and the repository agree');
  t.same(clean.result.findings, []);
  t.match(clean.result.tasks, [{ task: 'link', looked: 4, sapRows: 4, foreign: 0 }]);

  const links = env.erp.tables.links;
  const deleted = links.findIndex((l) => l.ARC_DOC_ID === invoices[0]);
  links.splice(deleted, 1);
  const row = links[0];
  links.push({ ...row, OBJECT_ID: '999999', ARC_DOC_ID: waiting });
  links.push({ ...row, SAP_OBJECT: 'BUS2081', OBJECT_ID: '5100000001' });
  links.push({ ...row, ARC_DOC_ID: 'SAP-OWN-DOCUMENT' });
  const found = await reconcile(env, { task: 'link' });
  t.equal(found.code, 1, 'differences: exit 1');
  t.same(
    kinds(found.result),
    [
      ['absent', invoices[0]],
      ['not done', waiting],
      ['twice', row.ARC_DOC_ID],
    ].sort(),
  );
  t.match(
    found.result.findings.find((f) => f.kind === 'not done'),
    {
      path: /invoice-waiting\.pdf$/,
      detail: /in SAP, but PENDING_INPUT in the repository: link BKPF 999999/,
    },
  );
  t.match(found.result.tasks[0], { foreign: 1 }, "SAP's own document is counted, not a finding");
  t.equal(env.props(invoices[0])['erpTaskStatus:status'], 'DONE', 'read-only without --requeue');

  const text = await cli(['reconcile', '--task', 'link', '--config', env.location.configDir]);
  t.match(
    text.stdout,
    /^ABSENT {2}link {2}.*invoice-0\.pdf \(.*\): DONE \(BKPF 1000000002026\), but ARCHIV_CONNECTION_INSERT's lookup finds nothing in SAP$/m,
  );
  t.match(text.stdout, /\n1 absent from SAP, 1 in SAP but not DONE, 1 twice in SAP, 0 not checked\n$/);

  const dry = await reconcile(env, { task: 'link', requeue: true, dryRun: true });
  t.equal(env.props(invoices[0])['erpTaskStatus:status'], 'DONE', '--dry-run changes nothing');
  t.equal(dry.result.findings.find((f) => f.kind === 'absent')?.requeued, true, 'and says what it would do');
  t.match(renderReconciliation(dry.result), /^ABSENT .*invoice-0\.pdf .* → would be put back to READY$/m);
  await reconcile(env, { task: 'link', requeue: true });
  t.equal(env.props(invoices[0])['erpTaskStatus:status'], 'READY', '--requeue puts it back');
  await env.job({ task: 'link' });
  t.equal(env.erp.tables.links.filter((l) => l.ARC_DOC_ID === invoices[0]).length, 1, 'the next run links it again');
  t.same(
    kinds((await reconcile(env, { task: 'link' })).result),
    [
      ['not done', waiting],
      ['twice', row.ARC_DOC_ID],
    ].sort(),
  );

  // A write the search index has not seen yet (its lag): the waiting one is DONE as the document says.
  env.sandbox.index.lagMs = 3_600_000;
  const { sandbox } = env;
  sandbox.store.update(
    sandbox.actor(),
    sandbox.store.get(waiting) as StoredDoc,
    { 'erpTaskStatus:status': 'DONE' },
    NO_BLOBS,
    {},
  );
  const json = await cli(['reconcile', '--json', '--task', 'link', '--config', env.location.configDir]);
  const lagging = JSON.parse(json.stdout) as Reconciliation;
  t.notOk(
    lagging.findings.some((f) => f.kind === 'not done'),
    'the search matched on a stale index, its hit read as the document is now',
  );
});

t.test('bar codes: one missing in SAP is absent; one SAP matched and linked is found among the links', async (t) => {
  const env = await sandboxEnv(t);
  const scans = await uploadMany(env, 'ERP/Barcode', 'scan', 3);
  await env.job({ task: 'barcode' });
  scans.forEach((uid, i) => env.fill(uid, { 'erpBarcode:barcode': `BC-${i}` }));
  await env.job({ task: 'barcode' });
  t.ok(env.erp.enterBarcode('100', 'BC-1', { SAP_OBJECT: 'BKPF', OBJECT_ID: '42', AR_OBJECT: 'ZBARCODE' }));
  env.erp.tables.barcodes.splice(
    env.erp.tables.barcodes.findIndex((b) => b.BARCODE === 'BC-2'),
    1,
  );
  const { code, result } = await reconcile(env, { task: 'barcode' });
  t.equal(code, 1);
  t.same(kinds(result), [['absent', scans[2]]]);
  t.match(result.tasks[0], { looked: 3, sapRows: 2 }, 'one bar code row and one link listed');

  // In this process, to see its limits: findings past the listed ones are counted; a document
  // changed while --requeue writes is left alone.
  env.sandbox.faults.add({ method: 'PUT', path: `/api/v1/id/${scans[2]}`, status: 409, body: '{}' });
  const tasks = env.config.tasks.filter((task) => task.name === 'barcode');
  const ports = portsFor(false, env.client);
  const deps = {
    client: env.client,
    writer: ports.writer,
    erpFor: await erpPorts(env.config.erp.systems, tasks, ports.erp, quietLog, NEVER),
    systems: new Map(env.config.erp.systems.map((s) => [s.name, s])),
    log: quietLog,
  };
  const range = { from: new Date(Date.now() - 86_400_000), until: new Date() };
  const limited = await reconcileIn(tasks, range, false, { ...deps, listedMax: 0 });
  t.same(limited.findings, []);
  t.equal(limited.unlisted, 1);
  t.match(renderReconciliation(limited), /0 absent from SAP, .* \(and 1 more, not listed\)\n$/);
  const conflict = await reconcileIn(tasks, range, true, deps);
  t.match(conflict.findings, [{ kind: 'absent', detail: /; not put back: .*409/ }]);
  t.equal(env.props(scans[2])['erpTaskStatus:status'], 'DONE');

  // No S_TABU_NAM for BDS_BAR_EX: those lookups and that listing cannot be made, and say so.
  env.erp.customizing.users.CONNECTOR.tables = ['TOAAR'];
  env.fill(scans[0], { 'erpHttpContent:source': 'ZZZ' });
  const refused = await reconcile(env, { task: 'barcode' });
  t.same(
    refused.result.findings.map((f) => [f.kind, f.docId]).sort(),
    [
      ['not checked', scans[0]],
      ['not checked', scans[1]],
      ['not checked', scans[2]],
    ].sort(),
    'the lookup stops at its first step, which SAP refuses',
  );
  t.match(
    refused.result.findings.find((f) => f.docId === scans[0]),
    { detail: 'no ERP system "ZZZ" with a RFC connection' },
  );
  t.match(
    refused.result.findings.find((f) => f.docId === scans[2]),
    { detail: /NOT_AUTHORIZED/ },
  );
  t.match(refused.result.tasks[0].notChecked, [/^SAP's rows in content repository Z1 of S4H: .*NOT_AUTHORIZED/]);
});

t.test(
  'a workflow start cannot be read back: said, not guessed; a bad day and an SAP that does not answer',
  async (t) => {
    const env = await sandboxEnv(t);
    await env.upload('ERP/Workflow', 'approval.pdf');
    await env.job();
    const workflow = await reconcile(env, { task: 'workflow' });
    t.equal(workflow.code, 0);
    t.match(workflow.result.tasks[0].notChecked, [/the call has no lookup/, /no read lists this call's work/]);

    const bad = await cli([
      'reconcile',
      '--from',
      '2026-02-30',
      '--until',
      'yesterday',
      '--config',
      env.location.configDir,
    ]);
    t.equal(bad.code, 2);
    t.match(bad.stderr, /--from: "2026-02-30" is not a day \(YYYY-MM-DD\)/);
    t.match(bad.stderr, /--until: "yesterday" is not a day/);
    const reversed = await cli([
      'reconcile',
      '--from',
      '2026-02-02',
      '--until',
      '2026-02-01',
      '--config',
      env.location.configDir,
    ]);
    t.match(reversed.stderr, /--from: 2026-02-02 is after --until/);

    const invoices = await uploadMany(env, 'ERP/Invoices', 'invoice', 2);
    await env.job({ task: 'link' });
    invoices.forEach((uid, i) => env.fill(uid, { 'erpCreateALDocument:erpObjectId': String(i + 1) }));
    await env.job({ task: 'link' });
    env.erp.tables.links.splice(0);
    const empty = await reconcile(env, { task: 'link' });
    t.same(kinds(empty.result), invoices.map((uid) => ['absent', uid]).sort(), 'SAP has none of them');
    t.match(empty.result.tasks[0], { sapRows: 0 }, 'and lists none (NOTHING_FOUND)');
    const text = await cli(['reconcile', '--task', 'workflow', '--config', env.location.configDir]);
    t.match(text.stdout, /\n {2}not checked: its DONE documents: the call has no lookup/);
    // The listing fails after the lookups answered: SAP's side not checked, the lookups stand.
    env.erp.faults.add({
      functionName: 'ARCHIV_GET_CONNECTIONS',
      skip: 2,
      status: 500,
      body: exceptionXml('ARCHIV_GET_CONNECTIONS', { name: 'ERROR_CONNECTIONTABLE', text: 'Link table not readable' }),
    });
    const listing = await reconcile(env, { task: 'link' });
    t.match(listing.result.tasks[0].notChecked, [
      /^SAP's rows in content repository Z1 of S4H: .*ERROR_CONNECTIONTABLE/,
    ]);
    t.equal(listing.result.findings.length, 2, 'the two absent documents still found');
    t.equal(listing.code, 4, 'and the comparison is incomplete: exit 4');
    // SAP stops answering while it lists: the system's checks stop, said once.
    env.erp.faults.add({ functionName: 'ARCHIV_GET_CONNECTIONS', skip: 2, status: 503, times: 50 });
    const unanswered = await reconcile(env, { task: 'link' });
    t.equal(unanswered.code, 4);
    t.match(unanswered.result.tasks[0].notChecked, [/^ERP system S4H: .*503/]);
    env.erp.faults.clear();
    // Over Rest, no read lists SAP's side.
    const job = join(env.location.jobsDir, 'link.yaml');
    writeFileSync(job, readFileSync(job, 'utf8').replace(/^function: RFC/m, 'function: Rest'));
    const rest = await reconcile(env, { task: 'link' });
    t.match(rest.result.tasks[0].notChecked, [/no read lists this call's work/]);
    writeFileSync(job, readFileSync(job, 'utf8').replace(/^function: Rest/m, 'function: RFC'));
    env.erp.faults.add({ functionName: 'ARCHIV_GET_CONNECTIONS', status: 503, times: 2 });
    const both = await reconcile(env, { task: 'link' });
    t.equal(both.code, 4, 'incomplete: exit 4');
    t.equal(both.result.tasks[0].notChecked.length, 1, 'two lookups failed at once, said once');
    // One call at a time, as agreed with an SAP team: the second document waits for the first's answer.
    const erpHttp = join(env.location.configDir, 'erpHttp.yaml');
    writeFileSync(erpHttp, readFileSync(erpHttp, 'utf8').replace(/maxConcurrentCalls: \d+/, 'maxConcurrentCalls: 1'));
    env.erp.faults.add({ functionName: 'ARCHIV_GET_CONNECTIONS', status: 503, times: 10 });
    const down = await reconcile(env, { task: 'link' });
    t.equal(down.code, 4);
    t.match(down.result.tasks[0].notChecked, [/^ERP system S4H: /]);
    t.equal(down.result.tasks[0].notChecked.length, 1, 'said once, the second document not asked');
  },
);

t.test(
  'a document SAP stored through the content server and linked on its side gets the business objects SAP names',
  async (t) => {
    const env = await sandboxEnv(t);
    const invoice = await env.upload('ERP/Invoices', 'invoice.pdf');
    await env.job({ task: 'link' });
    env.fill(invoice, { 'erpCreateALDocument:erpObjectId': '100019000000222023' });
    await env.job({ task: 'link' });
    const stored = { uid: storedBySap(env, 'SAPSTORED0001') };
    const [own] = env.erp.tables.links;
    env.erp.tables.links.push({
      ...own,
      SAP_OBJECT: 'BUS2081',
      OBJECT_ID: '51056001012026',
      ARC_DOC_ID: 'SAPSTORED0001',
    });

    // A write that fails (the document changed meanwhile) leaves it for the next reconciliation.
    env.sandbox.faults.add({ method: 'PUT', path: `/id/${stored.uid}`, status: 409, body: '{}', times: 1 });
    const conflict = await reconcile(env, { task: 'link' });
    t.match(conflict.result.tasks, [{ sapStored: 0 }]);
    t.equal(env.props(stored.uid)['erpSapDocument:businessObjects'] ?? null, null);
    const dryText = await cli(['reconcile', '--task', 'link', '--dry-run', '--config', env.location.configDir]);
    t.match(dryText.stdout, '1 document(s) SAP stored would get the business objects SAP linked them to');
    const dry = await reconcile(env, { task: 'link', dryRun: true });
    t.match(dry.result.tasks, [{ foreign: 1, sapStored: 1 }]);
    t.equal(env.props(stored.uid)['erpSapDocument:businessObjects'] ?? null, null, 'a dry run writes nothing');
    const text = await cli(['reconcile', '--task', 'link', '--config', env.location.configDir]);
    t.match(text.stdout, '1 document(s) SAP stored got the business objects SAP linked them to');
    t.equal(env.props(stored.uid)['erpSapDocument:businessObjects'], 'BUS2081 51056001012026');
    t.equal(text.code, 0, "SAP's own documents are no difference");
    const again = await reconcile(env, { task: 'link' });
    t.match(again.result.tasks, [{ sapStored: 0 }], 'written once');
  },
);
