import t from 'tap';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MAPPING, sandboxEnv } from './helpers/env.js';
import { NO_BLOBS, type StoredDoc } from '../sandbox/repository/store.js';
import { Writable } from 'node:stream';
import { runJob } from '../src/job/run.js';
import { FOLDER_CHAIN } from '../src/repository/client.js';
import { createLogger } from '../src/log.js';

// Dozens of runs over real HTTP: 7 s idle, several times that on a busy machine.
t.setTimeout(120_000);

const INVOICES = '/default-domain/workspaces/ERP/Invoices';

/** With the package's folder chain, and as with a package older than the job's, which has none. */
const PACKAGES = [
  { name: 'with the folder chain', undeployedChains: [] },
  { name: 'with a package without the chain', undeployedChains: [FOLDER_CHAIN] },
];

function snapshot(docs: Iterable<StoredDoc>): string {
  return JSON.stringify(
    [...docs].map((d) => [d.uid, d.path, d.facets, d.properties, d.sysChange, d.userChange]).sort(),
  );
}

t.test('a run labels new files per mapping entry, with folders and status', async (t) => {
  const env = await sandboxEnv(t);
  const invoice = await env.upload('ERP/Invoices', 'invoice-1.pdf');
  const scan = await env.upload('ERP/Barcode', 'scan-1.pdf');
  const flow = await env.upload('ERP/Workflow', 'wf-1.pdf');
  const asked: string[] = [];
  env.sandbox.faults.observe = (req) => void asked.push(decodeURIComponent(req.url as string));
  const report = await env.run();
  t.equal(report.exitCode, 0);
  t.notOk(
    asked.some((url) => url.includes('dc:source')),
    'a file the intake never touched is not searched for an earlier folder: it has none',
  );
  t.same(report.intake.counts, { labelled: 3, planned: 0, ready: 1, pendingInput: 2, skipped: 0, errors: 0 });

  const doc = env.sandbox.store.get(invoice) as StoredDoc;
  t.equal(doc.path, `${INVOICES}/invoice-1/invoice-1.pdf`, 'moved into its archive-link folder');
  t.same([...doc.facets].sort(), ['fct_erp_create_al_document', 'fct_erp_http_content', 'fct_erp_task_status']);
  t.equal(doc.properties['erpHttpContent:docId'], invoice, '$id is the UUID');
  t.equal(doc.properties['erpCreateALDocument:erpFilename'], 'invoice-1.pdf', '$file:content.name');
  t.equal(doc.properties['erpHttpContent:created'], doc.properties['dc:created'], '$dc:created');
  t.equal(doc.properties['erpTaskStatus:status'], 'PENDING_INPUT');
  t.match(doc.properties['erpTaskStatus:message'], /erpCreateALDocument:erpObjectId/);
  const folder = env.sandbox.store.getByPath(`${INVOICES}/invoice-1`) as StoredDoc;
  t.equal(folder.type, 'Folder');
  t.equal(folder.properties['erpHttpContent:docId'], invoice, 'folder and file share the docId');
  t.notOk(folder.facets.includes('fct_erp_task_status'), 'the status lives on the file only');

  t.equal(env.sandbox.store.get(scan)?.properties['erpTaskStatus:status'], 'PENDING_INPUT');
  t.equal(
    env.sandbox.store.get(flow)?.properties['erpTaskStatus:status'],
    'DONE',
    'the ready one goes on to its task in the same run',
  );
  t.same(
    env.erp.tables.inbox.map((w) => [w.ARC_DOC_ID, w.AR_OBJECT, w.agents]),
    [[flow, 'ZINVWF', [{ OTYPE: 'US', OBJID: 'APPROVER1' }]]],
    "a work item for the agent SAP's presetting names for the document type",
  );

  const again = await env.run();
  t.same(
    again.intake.counts,
    { labelled: 0, planned: 0, ready: 0, pendingInput: 0, skipped: 0, errors: 0 },
    'a second run finds nothing new',
  );
});

for (const pkg of PACKAGES)
  t.test(`dry run writes nothing and reports the plan, ${pkg.name}`, async (t) => {
    const env = await sandboxEnv(t, pkg);
    await env.upload('ERP/Invoices', 'invoice-2.pdf');
    await env.upload('ERP/Workflow', 'wf-2.pdf');
    const before = snapshot(env.sandbox.store.all());
    const report = await env.run(true);
    t.equal(snapshot(env.sandbox.store.all()), before, 'repository state unchanged, change tokens included');
    t.same(report.intake.counts, { labelled: 0, planned: 2, ready: 1, pendingInput: 1, skipped: 0, errors: 0 });
    const planned = report.intake.documents.find((d) => d.path.endsWith('invoice-2.pdf'));
    t.equal(planned?.folder, `${INVOICES}/invoice-2`, 'planned folder');
    t.same(planned?.missing, ['erpCreateALDocument:erpObjectId']);
    t.equal(planned?.values['erpCreateALDocument:erpObject'], 'BKPF');
  });

t.test('the deepest mapped path wins and $ references resolve or fail per document', async (t) => {
  const mapping = JSON.parse(MAPPING) as {
    mapping: Array<Record<string, unknown> & { properties: Record<string, unknown> }>;
  };
  const deeper = structuredClone(mapping.mapping[2]);
  deeper.path = '/default-domain/workspaces/ERP/Workflow/Urgent';
  deeper.properties['erpStartWorkflow:erpObjId'] = '$dc:description';
  deeper.properties['erpStartWorkflow:erpBarcode'] = '$$LITERAL';
  mapping.mapping.push(deeper);
  const env = await sandboxEnv(t, { mapping: JSON.stringify(mapping) });
  const api = `${env.baseUrl}/api/v1`;
  await fetch(`${api}/path/default-domain/workspaces/ERP/Workflow`, {
    method: 'POST',
    headers: {
      Authorization: `Basic ${Buffer.from('Administrator:Administrator').toString('base64')}`,
      'Content-Type': 'application/json',
    },
    body: JSON.stringify({ 'entity-type': 'document', type: 'Folder', name: 'Urgent' }),
  });
  const urgent = await env.upload('ERP/Workflow/Urgent', 'urgent.pdf');
  const report = await env.run();
  const record = report.intake.documents.find((d) => d.uid === urgent);
  t.equal(record?.mapping, deeper.path, 'matched by the deeper entry only');
  t.equal(report.intake.documents.filter((d) => d.uid === urgent).length, 1);
  t.equal(record?.result, 'error');
  t.equal(record?.error, 'no value for erpStartWorkflow:erpObjId = $dc:description');
  t.equal(report.exitCode, 1, 'a failed document makes the exit code 1');
  t.notOk(env.sandbox.store.get(urgent)?.facets.length, 'nothing written on the document');

  const actor = env.sandbox.actor();
  env.sandbox.store.update(
    actor,
    env.sandbox.store.get(urgent) as StoredDoc,
    { 'dc:description': 'APPROVER9' },
    NO_BLOBS,
  );
  await env.run();
  const fixed = env.sandbox.store.get(urgent) as StoredDoc;
  t.equal(fixed.properties['erpStartWorkflow:erpObjId'], 'APPROVER9', 'the next run picks it up once the value exists');
  t.equal(fixed.properties['erpStartWorkflow:erpBarcode'], '$LITERAL', '$$ writes a literal $');
});

/** The requests that write: REST PUT and POST, and every Automation operation (POST). */
const WRITES = ['PUT', 'POST'];

for (const pkg of PACKAGES) {
  t.test(`a run killed between any two steps is completed by the next run, ${pkg.name}`, async (t) => {
    // Count the write requests of one clean labelling (folder case), then kill a run after each of them.
    const probe = await sandboxEnv(t, pkg);
    await probe.upload('ERP/Invoices', 'probe.pdf');
    let writes = 0;
    probe.sandbox.faults.observe = (req) => void (WRITES.includes(req.method as string) && writes++);
    await probe.run();
    // The files' three facets, the claim, then the chain (one) or create, the folder's facets (two), its values and the move; the values.
    t.equal(writes, pkg.undeployedChains.length === 0 ? 6 : 10, `a folder labelling takes ${writes} writes`);

    for (let crashAfter = 0; crashAfter < writes; crashAfter++) {
      const env = await sandboxEnv(t, { storage: { intakeClaimTimeoutMs: '100' }, ...pkg });
      const uid = await env.upload('ERP/Invoices', `crash-${crashAfter}.pdf`);
      // Every write after the first `crashAfter` is refused, as if the process had died there.
      env.sandbox.faults.add({ method: WRITES, skip: crashAfter, times: 1000, status: 503 });
      await env.run();
      env.sandbox.faults.clear();
      const store = env.sandbox.store;
      await sleep(150); // a claim the crashed run held expires
      const second = await env.run();
      t.equal(second.intake.counts.errors, 0, `after a crash at step ${crashAfter}: no error`);
      const doc = store.get(uid) as StoredDoc;
      const name = `crash-${crashAfter}`;
      t.equal(doc.path, `${INVOICES}/${name}/${name}.pdf`, `step ${crashAfter}: file inside its one folder`);
      t.equal(doc.properties['erpHttpContent:docId'], uid, `step ${crashAfter}: labelled`);
      t.equal(doc.properties['erpTaskStatus:status'], 'PENDING_INPUT');
      const folders = [...store.all()].filter((d) => d.type === 'Folder' && d.properties['dc:source'] === uid);
      t.equal(folders.length, 1, `step ${crashAfter}: exactly one folder`);
      t.equal(folders[0].properties['erpHttpContent:docId'], uid, `step ${crashAfter}: folder labelled`);
      t.equal(
        [...store.descendants(folders[0].uid)].filter((d) => d.type === 'Folder').length,
        0,
        `step ${crashAfter}: no folder inside the folder`,
      );
    }
  });
}

for (const pkg of PACKAGES)
  t.test(`an archive-link folder takes the file's whole name, ${pkg.name}`, async (t) => {
    const env = await sandboxEnv(t, pkg);
    const name = 'Rechnung-2024-000123-Lieferant-ABC';
    // As Web UI's import names a file (a REST create, as env.upload makes, would cut its name to 24 characters).
    const store = env.sandbox.store;
    const blob = store.storeBlob(Buffer.from('%PDF-1.4'), `${name}.pdf`, 'application/pdf');
    const properties = { 'dc:title': name, 'file:content': { 'upload-batch': 'b' } };
    const file = { type: 'File', name: `${name}.pdf`, properties, rawName: true };
    const { uid } = store.create(env.sandbox.actor(), store.getByPath(INVOICES) as StoredDoc, file, () => blob);
    await env.run();
    t.equal(env.sandbox.store.get(uid)?.path, `${INVOICES}/${name}/${name}.pdf`, 'not cut to 24 characters');
  });

t.test('a folder chain whose answer is lost is finished by the next run, with no second folder', async (t) => {
  const env = await sandboxEnv(t, { storage: { intakeClaimTimeoutMs: '100' } });
  const uid = await env.upload('ERP/Invoices', 'lost.pdf');
  env.sandbox.faults.add({ method: 'POST', path: `/automation/${FOLDER_CHAIN}`, loseAnswer: true });
  const first = await env.run();
  const record = first.intake.documents.find((d) => d.uid === uid);
  t.equal(record?.result, 'error', 'the run cannot tell what became of it');
  t.match(
    record?.error,
    new RegExp(`create the folder lost and move ${uid} into it`),
    'the message names the file and the step',
  );
  t.equal(env.sandbox.store.get(uid)?.path, `${INVOICES}/lost/lost.pdf`, 'the chain did its work all the same');
  await sleep(150); // the run's intake claim expires
  const second = await env.run();
  t.equal(second.intake.counts.labelled, 1);
  const folders = [...env.sandbox.store.all()].filter((d) => d.type === 'Folder' && d.properties['dc:source'] === uid);
  t.equal(folders.length, 1, 'the folder is found again by its dc:source, never made twice');
  t.equal(env.props(uid)['erpHttpContent:docId'], uid);
});

t.test(
  'when asking whether the chain is there fails, those files wait for the next run and later ones ask again',
  async (t) => {
    const env = await sandboxEnv(t, { storage: { pageSize: '1', retries: '0' } });
    for (const name of ['a', 'b', 'c', 'd']) await env.upload('ERP/Invoices', `${name}.pdf`);
    env.sandbox.faults.add({ method: 'GET', path: `/automation/${FOLDER_CHAIN}`, status: 503, times: 1 });
    const report = await env.run();
    const failed = report.intake.documents.filter((d) => d.result === 'error');
    t.ok(
      failed.length > 0 && failed.length < 4,
      `${failed.length} file(s) met the failed look-up, the later ones asked again`,
    );
    t.equal(report.intake.counts.labelled, 4 - failed.length);
    t.match(failed[0]?.error, /look up operation connect2erp\.PlaceInArchiveLinkFolder/);
    const again = await env.run();
    t.equal(again.intake.counts.labelled, failed.length, 'the next run labels those left');
  },
);

t.test('a folder chain that fails leaves nothing of it, and fails that file alone', async (t) => {
  const env = await sandboxEnv(t);
  const gone = await env.upload('ERP/Invoices', 'gone.pdf');
  const placed = await env.upload('ERP/Invoices', 'placed.pdf');
  const store = env.sandbox.store;
  // A user deletes one file while the run labels it: the chain's folder is made, then the file is not found (404).
  env.sandbox.faults.observe = (req) => {
    if (req.method === 'POST' && req.url?.includes(FOLDER_CHAIN) && store.get(gone) !== undefined)
      store.remove(env.sandbox.actor(), store.get(gone) as StoredDoc);
  };
  const report = await env.run();
  const record = report.intake.documents.find((d) => d.uid === gone);
  t.equal(record?.result, 'error');
  t.match(record?.error, new RegExp(`create the folder gone and move ${gone} into it`), 'the message names the file');
  t.notOk(store.getByPath(`${INVOICES}/gone`), 'no folder left behind: the chain is one transaction');
  t.equal(store.get(placed)?.path, `${INVOICES}/placed/placed.pdf`, 'its neighbour is placed as usual');
  t.equal(env.props(placed)['erpHttpContent:docId'], placed);
});

t.test('a $ value not of its property type fails that file before anything is written', async (t) => {
  const mapping = JSON.parse(MAPPING) as { mapping: Array<Record<string, any>> };
  const invoices = mapping.mapping.find((entry) => entry.createParentALFolder === true) as Record<string, any>;
  invoices.properties['erpData:amount'] = '$dc:description';
  invoices.properties['erpData:documentDate'] = '$dc:created';
  const env = await sandboxEnv(t, { mapping: JSON.stringify(mapping) });
  const german = await env.upload('ERP/Invoices', 'german.pdf');
  const plain = await env.upload('ERP/Invoices', 'plain.pdf');
  env.fill(german, { 'dc:description': '1.234,50' });
  env.fill(plain, { 'dc:description': '1234.50' });
  const report = await env.run();
  const record = report.intake.documents.find((d) => d.uid === german);
  t.equal(record?.result, 'error');
  t.equal(record?.error, 'erpData:amount = $dc:description: "1.234,50" is not a number');
  t.notOk(env.sandbox.store.getByPath(`${INVOICES}/german`), 'no folder');
  t.same(env.sandbox.store.get(german)?.facets, [], 'nothing written on the file');
  t.equal(report.intake.documents.find((d) => d.uid === plain)?.result, 'labelled');
  t.equal(env.props(plain)['erpData:amount'], 1234.5, 'the file takes the number too');
  const folder = env.sandbox.store.getByPath(`${INVOICES}/plain`) as StoredDoc;
  t.equal(folder.properties['erpData:amount'], 1234.5, 'a number as text reaches the folder as that number');
  t.equal(
    folder.properties['erpData:documentDate'],
    env.props(plain)['dc:created'],
    "a date reaches the folder as the file's",
  );
});

t.test('a property the server silently drops is an error on that document, never a success', async (t) => {
  const env = await sandboxEnv(t);
  const uid = await env.upload('ERP/Workflow', 'dropped.pdf');
  // Simulate a server whose deployment lacks the status facet's schema: AddFacet works, the values are dropped.
  env.sandbox.store.registry.facets.set('fct_erp_task_status', []);
  const report = await env.run();
  const record = report.intake.documents.find((d) => d.uid === uid);
  t.equal(record?.result, 'error');
  t.match(
    record?.error,
    /did not store erpTaskStatus:status, erpTaskStatus:attempts, erpTaskStatus:userInput on .*dropped.pdf/,
  );
  t.notOk(
    env.sandbox.store.get(uid)?.properties['erpHttpContent:docId'],
    'docId reset, so the next run retries the document',
  );
});

t.test(
  'load on the repository: labelling costs one write per document, plus a search and one AddFacet per facet for each page',
  async (t) => {
    const env = await sandboxEnv(t);
    const actor = env.sandbox.actor();
    const workflow = env.sandbox.store.getByPath('/default-domain/workspaces/ERP/Workflow') as StoredDoc;
    for (let i = 0; i < 250; i++)
      env.sandbox.store.create(
        actor,
        workflow,
        { type: 'File', name: `wf-${i}.pdf`, properties: { 'dc:title': `wf-${i}` } },
        NO_BLOBS,
      );
    const requests = new Map<string, number>();
    const schemasAsked = new Set<string>();
    env.sandbox.faults.observe = (req) => {
      const kind = `${req.method} ${/AddFacet|search|\/id\//.exec(req.url ?? '')?.[0] ?? 'other'}`;
      requests.set(kind, (requests.get(kind) ?? 0) + 1);
      if (
        kind === 'GET search' &&
        new URL(req.url ?? '', 'http://x').searchParams.get('query')?.includes('FROM File') === true
      )
        schemasAsked.add(String(req.headers.properties).split(',').sort().join(','));
    };
    const report = await env.run();
    t.equal(report.intake.counts.labelled, 250);
    t.equal(report.tasks.workflow.counts.DONE, 250);
    t.same(
      [...schemasAsked].sort(),
      [
        // The intake, per mapping entry: its use case's, the status, those of its $ references, and those
        // its tasks read (they send what it labels in the same run): the bar-code call's document class
        // comes from the file's MIME type.
        'dublincore,erp_barcode,erp_http_content,erp_task_status,file',
        'dublincore,erp_create_al_document,erp_http_content,erp_task_status,file',
        'dublincore,erp_http_content,erp_start_workflow,erp_task_status',
        // Each task: its use case's, the status, and those its call's values come from.
        'erp_barcode,erp_http_content,erp_task_status,file',
        'erp_create_al_document,erp_http_content,erp_task_status',
        'erp_http_content,erp_start_workflow,erp_task_status',
      ],
      'pages carry only the schemas their documents are read for, never every schema',
    );
    t.equal(requests.get('POST AddFacet'), 3 * 3, 'three pages of 100, one call per facet each');
    t.equal(
      requests.get('PUT /id/'),
      250 + 2 * 250,
      'intake: one write per document; the task: its claim and its outcome',
    );
    t.equal(env.erp.tables.inbox.length, 250, 'one work item each');
  },
);

for (const pkg of PACKAGES) {
  t.test(`requests of archive-link folders, ${pkg.name}`, async (t) => {
    const env = await sandboxEnv(t, pkg);
    const actor = env.sandbox.actor();
    const invoices = env.sandbox.store.getByPath(INVOICES) as StoredDoc;
    const blob = env.sandbox.store.storeBlob(Buffer.from('%PDF-1.4'), 'scan.pdf', 'application/pdf');
    for (let i = 0; i < 30; i++) {
      const properties = { 'dc:title': `inv-${i}`, 'file:content': { 'upload-batch': 'b' } };
      env.sandbox.store.create(actor, invoices, { type: 'File', name: `inv-${i}.pdf`, properties }, () => ({
        ...blob,
        name: `inv-${i}.pdf`,
      }));
    }
    const requests = new Map<string, number>();
    env.sandbox.faults.observe = (req) => {
      const operation = /(AddFacet|Document\.Move|connect2erp\.\w+)/.exec(req.url ?? '')?.[1];
      const kind = `${req.method} ${operation ?? /search|\/id\//.exec(req.url ?? '')?.[0] ?? 'other'}`;
      requests.set(kind, (requests.get(kind) ?? 0) + 1);
    };
    // The intake alone: every task switched off.
    for (const file of readdirSync(env.location.jobsDir)) {
      const path = join(env.location.jobsDir, file);
      writeFileSync(path, readFileSync(path, 'utf8').replace(/^enabled: true/m, 'enabled: false'));
    }
    const logged: string[] = [];
    const stream = new Writable({ write: (chunk, _encoding, done) => void (logged.push(String(chunk)), done()) });
    env.sandbox.index.catchUp();
    const report = await runJob({ dryRun: false, location: env.location }, createLogger({ stream, json: true }));
    t.same(Object.keys(report.tasks), [], 'no task ran');
    t.equal(report.intake.counts.labelled, 30);
    if (pkg.undeployedChains.length === 0) {
      t.equal(
        requests.get('POST AddFacet'),
        3,
        "the files' three facets for the whole page; the folders' come with them",
      );
      t.equal(requests.get(`POST ${FOLDER_CHAIN}`), 30, 'each folder made, labelled and filled in one request');
      t.equal(requests.get(`GET ${FOLDER_CHAIN}`), 1, 'whether the chain is there is asked once a run');
      t.equal(requests.get('PUT /id/'), 2 * 30, 'per file: its claim, its own values');
      t.notOk(requests.get('POST Document.Move'));
    } else {
      t.equal(
        requests.get('POST AddFacet'),
        3 + 2,
        "the files' three facets, then the folders' two, for the whole page",
      );
      t.equal(requests.get('PUT /id/'), 3 * 30, "per file: its claim, its folder's values, its own values");
      t.equal(requests.get('POST Document.Move'), 30, 'each file into its folder');
    }
    t.equal(
      logged.filter((line) => line.includes('no folder chain')).length,
      pkg.undeployedChains.length,
      'a run says once that the package lacks the chain, and nothing when it has it',
    );
    const folders = [...env.sandbox.store.all()].filter((d) => d.type === 'Folder' && d.parentId === invoices.uid);
    t.equal(folders.length, 30);
    t.ok(
      folders.every(
        (f) =>
          f.facets.includes('fct_erp_http_content') &&
          f.facets.includes('fct_erp_create_al_document') &&
          f.properties['erpHttpContent:docId'] === f.properties['dc:source'] &&
          f.properties['erpCreateALDocument:erpArchiveObject'] === 'ZFIINVOICE' &&
          f.properties['erpHttpContent:scanPerformed'] === false,
      ),
      'every folder has its facets and values',
    );
  });
}

t.test('a folder chain the repository refuses to the job (a REST binding): the longer way, said once', async (t) => {
  const env = await sandboxEnv(t, { refusedChains: [FOLDER_CHAIN], storage: { pageSize: '10' } });
  const uids: string[] = [];
  for (let i = 0; i < 30; i++) uids.push(await env.upload('ERP/Invoices', `refused-${i}.pdf`));
  const chainCalls: string[] = [];
  env.sandbox.faults.observe = (req) => void (req.url?.includes(FOLDER_CHAIN) && chainCalls.push(req.method as string));
  const logged: string[] = [];
  const stream = new Writable({ write: (chunk, _encoding, done) => void (logged.push(String(chunk)), done()) });
  env.sandbox.index.catchUp();
  const report = await runJob({ dryRun: false, location: env.location }, createLogger({ stream, json: true }));
  t.equal(report.intake.counts.errors, 0, 'no file fails for it');
  const store = env.sandbox.store;
  for (const [i, uid] of uids.entries()) {
    const doc = store.get(uid) as StoredDoc;
    const folder = store.getByPath(`${INVOICES}/refused-${i}`) as StoredDoc;
    if (doc.parentId !== folder?.uid || folder.properties['erpHttpContent:docId'] !== uid)
      t.fail(`refused-${i}.pdf is not in its labelled folder`);
  }
  t.pass('every file is in its folder, the folder labelled');
  t.equal(chainCalls.filter((m) => m === 'GET').length, 1, 'the chain is there, as far as its description goes');
  const tried = chainCalls.filter((m) => m === 'POST').length;
  t.ok(tried < 30, `the pages begun after the first refusal go the longer way at once (${tried} of 30 tried it)`);
  t.equal(logged.filter((line) => line.includes('refuses the folder chain')).length, 1, 'said once');
});

t.test(
  "the intake writes who may change what on the ERP tab: the entry's userInput, else the defaults and what it leaves unset",
  async (t) => {
    const mapping = JSON.parse(MAPPING) as { mapping: Array<Record<string, any>> };
    const [barcode, invoices] = mapping.mapping;
    invoices.userInput = ['erpCreateALDocument:erpObjectId', 'erpCreateALDocument:erpDescription'];
    delete barcode.properties['erpBarcode:docTyp'];
    const env = await sandboxEnv(t, { mapping: JSON.stringify(mapping) });
    const invoice = await env.upload('ERP/Invoices', 'invoice-1.pdf');
    const scan = await env.upload('ERP/Barcode', 'scan-1.pdf');
    await env.run();
    t.equal(
      env.props(invoice)['erpTaskStatus:userInput'],
      'erpCreateALDocument:erpObjectId,erpCreateALDocument:erpDescription',
    );
    t.equal(env.props(scan)['erpTaskStatus:userInput'], 'erpBarcode:barcode,erpBarcode:docTyp');
  },
);
