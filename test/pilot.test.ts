import t from 'tap';
import { sandboxEnv, type Env } from './helpers/env.js';
import { cli } from './helpers/run-cli.js';

/** A pilot: `run --limit N` sends N documents and no more, `run --doc UID` that one document alone. */

t.setTimeout(120_000);

const uploadMany = (env: Env, folder: string, prefix: string, n: number) =>
  Promise.all(Array.from({ length: n }, (_, i) => env.upload(folder, `${prefix}-${i}.pdf`)));
const status = (env: Env, uid: string) => env.props(uid)['erpTaskStatus:status'];

t.test('--limit: exactly N links, the rest READY for the next run, which links each once', async (t) => {
  const env = await sandboxEnv(t);
  const invoices = await uploadMany(env, 'ERP/Invoices', 'invoice', 12);
  await env.job({ task: 'link' });
  invoices.forEach((uid, i) =>
    env.fill(uid, { 'erpCreateALDocument:erpObjectId': `1000${String(i).padStart(6, '0')}2026` }),
  );
  const pilot = await env.job({ task: 'link', limit: 5 });
  t.equal(env.erp.tables.links.length, 5, 'SAP has five links');
  t.equal(pilot.tasks.link.counts.DONE, 5);
  t.equal(pilot.exitCode, 0, 'a pilot that went well exits 0');
  t.match(pilot.tasks.link, { state: 'stopped', reason: "the run's --limit of 5 documents was reached" });
  t.same(
    invoices.map((uid) => status(env, uid)).filter((s) => s !== 'DONE'),
    Array(7).fill('PENDING_INPUT'),
    'the others as they were, unclaimed',
  );
  const rest = await env.job({ task: 'link' });
  t.equal(rest.tasks.link.counts.DONE, 7);
  t.same(env.erp.tables.links.map((l) => l.ARC_DOC_ID).sort(), [...invoices].sort(), 'every document linked once');
});

t.test('--limit on a call that sends a list: N bar codes in the list, no more', async (t) => {
  const env = await sandboxEnv(t);
  const scans = await uploadMany(env, 'ERP/Barcode', 'scan', 6);
  await env.job({ task: 'barcode' });
  scans.forEach((uid, i) => env.fill(uid, { 'erpBarcode:barcode': `BC-${i}` }));
  await env.job({ task: 'barcode', limit: 4 });
  t.equal(env.erp.tables.barcodes.length, 4, 'four bar codes reached SAP');
  t.equal(scans.filter((uid) => status(env, uid) === 'DONE').length, 4);
});

t.test('--limit with the intake: it stops labelling once the limit is spent', async (t) => {
  const env = await sandboxEnv(t, { storage: { pageSize: '5', intakeRoundSize: '5' } });
  const flows = await uploadMany(env, 'ERP/Workflow', 'approval', 40);
  const pilot = await env.job({ limit: 3 });
  t.equal(env.erp.tables.inbox.length, 3, 'three work items');
  t.match(pilot.intake, { state: 'stopped', reason: /--limit of 3/ });
  t.ok(pilot.intake.counts.labelled < 40, `the intake stopped early (${pilot.intake.counts.labelled} labelled)`);
  await env.job();
  t.same(env.erp.tables.inbox.map((w) => w.ARC_DOC_ID).sort(), [...flows].sort(), 'then one work item each');
});

t.test('--doc: that document alone is labelled and sent', async (t) => {
  const env = await sandboxEnv(t);
  const flows = await uploadMany(env, 'ERP/Workflow', 'approval', 3);
  const report = await env.job({ doc: flows[1] });
  t.same(
    env.erp.tables.inbox.map((w) => w.ARC_DOC_ID),
    [flows[1]],
    'its work item only',
  );
  t.equal(report.intake.counts.labelled, 1);
  t.same(
    [flows[0], flows[2]].map((uid) => status(env, uid)),
    [undefined, undefined],
    'the others not even labelled',
  );
});

t.test('the command line: run --limit and --doc as an operator types them', async (t) => {
  const env = await sandboxEnv(t);
  const flows = await uploadMany(env, 'ERP/Workflow', 'approval', 3);
  env.sandbox.index.catchUp();
  const pilot = await cli(['run', '--limit', '2', '--config', env.location.configDir]);
  t.equal(pilot.code, 0, pilot.stderr);
  t.match(pilot.stdout, /--limit of 2 documents was reached/);
  t.equal(env.erp.tables.inbox.length, 2);
  env.sandbox.index.catchUp();
  const rest = flows.filter((uid) => !env.erp.tables.inbox.some((w) => w.ARC_DOC_ID === uid));
  const one = await cli(['run', '--doc', rest[0], '--config', env.location.configDir]);
  t.equal(one.code, 0, one.stderr);
  t.equal(env.erp.tables.inbox.length, 3);
});

t.test('a bad --limit or --doc is refused before anything is read', async (t) => {
  const { code, stderr } = await cli(['run', '--limit', '0', '--doc', "x' OR 1=1", '--config', '/nonexistent']);
  t.equal(code, 2);
  t.match(stderr, /--limit: "0" is not a number of documents/);
  t.match(stderr, /--doc: "x' OR 1=1" is not a document's uid/);
});
