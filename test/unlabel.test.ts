import t from 'tap';
import type { StoredDoc } from '../sandbox/repository/store.js';
import { sandboxEnv, type Env } from './helpers/env.js';
import { cli } from './helpers/run-cli.js';

/** `connect2erp unlabel`: what a wrong mapping entry put on documents not sent yet, undone, listed first. */

t.setTimeout(120_000);

const INVOICES = '/default-domain/workspaces/ERP/Invoices';
const unlabel = (env: Env, ...args: string[]) =>
  cli(['unlabel', ...args, '--config', env.location.configDir]).then((result) => {
    env.sandbox.index.catchUp();
    return result;
  });
const stored = (env: Env, uid: string) => env.sandbox.store.get(uid) as StoredDoc;

t.test('documents not sent lose their facets, values and archive-link folder; a linked one is left', async (t) => {
  const env = await sandboxEnv(t);
  const [linked, waiting, other] = await Promise.all(
    ['invoice-0.pdf', 'invoice-1.pdf', 'invoice-2.pdf'].map((name) => env.upload('ERP/Invoices', name)),
  );
  await env.job({ task: 'link' });
  env.fill(linked, { 'erpCreateALDocument:erpObjectId': '1000000012026' });
  await env.job({ task: 'link' });
  t.equal(env.props(linked)['erpTaskStatus:status'], 'DONE');
  t.equal(stored(env, waiting).path, `${INVOICES}/invoice-1/invoice-1.pdf`, 'in its archive-link folder');

  const before = env.snapshot();
  const listed = await unlabel(env, INVOICES);
  t.equal(listed.code, 0, listed.stderr);
  t.match(listed.stdout, `2 document(s) under ${INVOICES} would be unlabelled (run again with --apply):`);
  t.match(
    listed.stdout,
    `${INVOICES}/invoice-1/invoice-1.pdf (${waiting}), out of ${INVOICES}/invoice-1, which goes to the trash`,
  );
  t.match(
    listed.stdout,
    `1 left as they are:\n  ${INVOICES}/invoice-0/invoice-0.pdf (${linked}): DONE after 0 attempt(s): it may be in SAP; reconcile tells`,
  );
  t.equal(env.snapshot(), before, 'listing changes nothing');

  // One of them changes while the command works: it is left, the other undone.
  env.sandbox.faults.add({ method: 'PUT', path: `/api/v1/id/${other}`, status: 409, body: '{}' });
  const applied = await unlabel(env, INVOICES, '--apply');
  t.equal(applied.code, 0, applied.stderr);
  t.match(applied.stdout, `1 document(s) under ${INVOICES} unlabelled:`);
  t.match(applied.stdout, new RegExp(`invoice-2\\.pdf \\(${other}\\): .*409`));
  const undone = stored(env, waiting);
  t.equal(undone.path, `${INVOICES}/invoice-1.pdf`, 'back where it was uploaded');
  t.same(
    undone.facets.filter((f) => f.startsWith('fct_erp')),
    [],
    'no facet of the feature',
  );
  t.equal(undone.properties['erpHttpContent:docId'], undefined, 'nor their values');
  const folder = [...env.sandbox.store.all()].find((d) => d.type === 'Folder' && d.properties['dc:source'] === waiting);
  t.equal(folder?.trashed, true, 'its folder in the trash (renamed there, as Nuxeo does)');
  t.equal(env.props(linked)['erpTaskStatus:status'], 'DONE', 'the linked one untouched');

  await env.job({ task: 'link' });
  t.equal(env.props(waiting)['erpTaskStatus:status'], 'PENDING_INPUT', 'the next run labels it again');
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
    t.match(
      kept.stdout,
      `1 document(s) under ${INVOICES} unlabelled:\n  ${INVOICES}/invoice/invoice.pdf (${invoice})\n`,
    );
    t.equal(stored(env, invoice).path, `${INVOICES}/invoice/invoice.pdf`, 'left in the folder, which holds another');
    t.same(
      stored(env, invoice).facets.filter((f) => f.startsWith('fct_erp')),
      [],
    );

    const scan = await env.upload('ERP/Barcode', 'scan.pdf');
    await env.job({ task: 'barcode' });
    const applied = await unlabel(env, '/default-domain/workspaces/ERP/Barcode', '--apply');
    t.match(
      applied.stdout,
      `1 document(s) under /default-domain/workspaces/ERP/Barcode unlabelled:\n  /default-domain/workspaces/ERP/Barcode/scan.pdf (${scan})\n`,
    );
    t.same(
      stored(env, scan).facets.filter((f) => f.startsWith('fct_erp')),
      [],
    );
    const bad = await unlabel(env, 'ERP/Barcode');
    t.equal(bad.code, 2);
    t.match(bad.stderr, /unlabel: give the folder a mapping entry covered/);
  },
);
