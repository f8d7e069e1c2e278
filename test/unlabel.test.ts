import t from 'tap';
import type { StoredDoc } from '../sandbox/repository/store.js';
import { sandboxEnv, type Env } from './helpers/env.js';
import { cli } from './helpers/run-cli.js';

/** `connect2erp unlabel`: what a wrong mapping entry put on documents never sent, undone, listed first. */

t.setTimeout(120_000);

const INVOICES = '/default-domain/workspaces/ERP/Invoices';
const unlabel = (env: Env, ...args: string[]) =>
  cli(['unlabel', ...args, '--config', env.location.configDir]).then((result) => {
    env.sandbox.index.catchUp();
    return result;
  });
const stored = (env: Env, uid: string) => env.sandbox.store.get(uid) as StoredDoc;
const feature = (env: Env, uid: string) => stored(env, uid).facets.filter((f) => f.startsWith('fct_erp'));

t.test('documents never sent lose their facets, values and archive-link folder; one sent before is left', async (t) => {
  const env = await sandboxEnv(t);
  const [linked, waiting, other, requeued] = await Promise.all(
    ['invoice-0.pdf', 'invoice-1.pdf', 'invoice-2.pdf', 'invoice-3.pdf'].map((name) =>
      env.upload('ERP/Invoices', name),
    ),
  );
  await env.job({ task: 'link' });
  env.fill(linked, { 'erpCreateALDocument:erpObjectId': '1000000012026' });
  env.fill(requeued, { 'erpCreateALDocument:erpObjectId': '1000000032026' });
  await env.job({ task: 'link' });
  t.equal(env.props(linked)['erpTaskStatus:status'], 'DONE');
  // Sent once, then put back to READY (as retry and reconcile --requeue do): it may be in SAP.
  env.fill(requeued, { 'erpTaskStatus:status': 'READY' });
  t.equal(stored(env, waiting).path, `${INVOICES}/invoice-1/invoice-1.pdf`, 'in its archive-link folder');

  const before = env.snapshot();
  const listed = await unlabel(env, INVOICES);
  t.equal(listed.code, 0, listed.stderr);
  t.match(
    listed.stdout,
    `${INVOICES}/invoice-1/invoice-1.pdf (${waiting}): would be unlabelled, out of ${INVOICES}/invoice-1, which goes to the trash\n`,
  );
  t.match(
    listed.stdout,
    `(${linked}): left as it is: DONE, sent before or under way: it may be in SAP; reconcile tells`,
  );
  t.match(listed.stdout, `(${requeued}): left as it is: READY, sent before or under way`, 'put back once: left');
  t.match(
    listed.stdout,
    `2 document(s) under ${INVOICES} would be unlabelled, 2 left as they are, 0 not finished (run again with --apply)\n`,
  );
  t.equal(env.snapshot(), before, 'listing changes nothing');

  // One of them changes while the command works: it is left, the other undone.
  env.sandbox.faults.add({ method: 'PUT', path: `/api/v1/id/${other}`, status: 409, body: '{}' });
  const applied = await unlabel(env, INVOICES, '--apply');
  t.equal(applied.code, 0, applied.stderr);
  t.match(applied.stdout, new RegExp(`invoice-2\\.pdf \\(${other}\\): left as it is: .*409`));
  t.match(applied.stdout, `1 document(s) under ${INVOICES} unlabelled, 3 left as they are, 0 not finished\n`);
  const undone = stored(env, waiting);
  t.equal(undone.path, `${INVOICES}/invoice-1.pdf`, 'back where it was uploaded');
  t.same(feature(env, waiting), [], 'no facet of the feature');
  t.equal(undone.properties['erpHttpContent:docId'], undefined, 'nor their values');
  const folder = [...env.sandbox.store.all()].find((d) => d.type === 'Folder' && d.properties['dc:source'] === waiting);
  t.equal(folder?.trashed, true, 'its folder in the trash (renamed there, as Nuxeo does)');
  t.equal(env.props(linked)['erpTaskStatus:status'], 'DONE', 'the linked one untouched');

  await env.job({ task: 'link' });
  t.equal(env.props(waiting)['erpTaskStatus:status'], 'PENDING_INPUT', 'the next run labels it again');
});

t.test('stopped half-way: FAILED, which no run sends, until unlabel runs again', async (t) => {
  const env = await sandboxEnv(t);
  const scan = await env.upload('ERP/Barcode', 'scan.pdf');
  await env.job({ task: 'barcode' });
  env.sandbox.faults.add({ path: '/@op/Document.RemoveFacet', status: 500, body: '{}', times: 10 });
  const stopped = await unlabel(env, '/default-domain/workspaces/ERP/Barcode', '--apply');
  t.equal(stopped.code, 1);
  t.match(
    stopped.stdout,
    /not finished: .*500.*; it stays FAILED until you run connect2erp unlabel \/default-domain\/workspaces\/ERP\/Barcode --apply again/,
  );
  t.equal(env.props(scan)['erpTaskStatus:status'], 'FAILED');
  env.fill(scan, { 'erpBarcode:barcode': 'BC-1' });
  await env.job({ task: 'barcode' });
  t.equal(env.erp.tables.barcodes.length, 0, 'no run sends it meanwhile');
  env.sandbox.faults.clear();
  const again = await unlabel(env, '/default-domain/workspaces/ERP/Barcode', '--apply');
  t.equal(again.code, 0, again.stderr);
  t.same(feature(env, scan), [], 'the second pass takes it up');
});

t.test(
  'a flat document loses its labels; a folder holding more than the file stays; a bad path is refused',
  async (t) => {
    const env = await sandboxEnv(t);
    const invoice = await env.upload('ERP/Invoices', 'invoice.pdf');
    await env.job({ task: 'link' });
    // Someone filed a second document in the invoice's archive-link folder.
    await env.upload('ERP/Invoices/invoice', 'delivery-note.pdf');
    const kept = await unlabel(env, INVOICES, '--apply');
    t.match(kept.stdout, `${INVOICES}/invoice/invoice.pdf (${invoice}): unlabelled\n`);
    t.equal(stored(env, invoice).path, `${INVOICES}/invoice/invoice.pdf`, 'left in the folder, which holds another');
    t.same(feature(env, invoice), []);
    const scan = await env.upload('ERP/Barcode', 'scan.pdf');
    await env.job({ task: 'barcode' });
    const applied = await unlabel(env, '/default-domain/workspaces/ERP/Barcode', '--apply');
    t.match(applied.stdout, `/default-domain/workspaces/ERP/Barcode/scan.pdf (${scan}): unlabelled\n`);
    t.same(feature(env, scan), []);
    const bad = await unlabel(env, 'ERP/Barcode');
    t.equal(bad.code, 2);
    t.match(bad.stderr, /unlabel: give the folder a mapping entry covered/);
  },
);
