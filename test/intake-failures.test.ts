import t from 'tap';
import { MAPPING, sandboxEnv } from './helpers/env.js';
import { setUpRepository } from '../sandbox/demo.js';
import { parseMapping } from '../src/job/intake/mapping-file.js';
import { featureRegistry } from '../common/nuxeo/schemas.js';
import { ConfigError } from '../common/errors.js';
import { NO_BLOBS, type StoredDoc } from '../sandbox/repository/store.js';
import { renderReport } from '../src/job/report/table.js';
import { renderHtml } from '../src/job/report/html.js';

// Runs over real HTTP: 5 s idle, several times that on a busy machine.
t.setTimeout(120_000);

/** What goes wrong during intake, and what the run and the documents show for it. */

t.test('a failed batch AddFacet is retried per document, so one bad document fails alone', async (t) => {
  const env = await sandboxEnv(t);
  const a = await env.upload('ERP/Barcode', 'a.pdf');
  const b = await env.upload('ERP/Barcode', 'b.pdf');
  env.sandbox.faults.add({ path: '/automation/Document.AddFacet', status: 500, times: 2 });
  const report = await env.run();
  t.equal(report.intake.counts.errors, 1, 'the batch call and the first single call failed');
  t.equal(report.intake.counts.labelled, 1, 'the other document is labelled');
  const failed = report.intake.documents.find((d) => d.result === 'error')!;
  t.match(failed.error, /add facet fct_erp_http_content failed with HTTP 500/);
  t.equal(failed.transient, false);
  t.equal(report.exitCode, 1, 'a failed document makes exit code 1');
  const next = await env.run();
  t.equal(next.intake.counts.labelled, 1, 'the next run labels the one left over');
  for (const uid of [a, b]) t.equal(env.sandbox.store.get(uid)?.properties['erpTaskStatus:status'], 'PENDING_INPUT');
});

t.test(
  'when the server drops every value, even the undo, the document stays unlabelled and the next run tries again',
  async (t) => {
    const env = await sandboxEnv(t);
    const uid = await env.upload('ERP/Barcode', 'c.pdf');
    // AddFacet answers but does nothing: the values PUT is silently dropped, and so is the undo that follows.
    env.sandbox.faults.add({ path: '/automation/Document.AddFacet', status: 204, times: 3 });
    const report = await env.run();
    t.equal(report.intake.counts.errors, 1);
    t.match(
      report.intake.documents[0].error,
      /the repository accepted but did not store erpHttpContent:docId, .* is the facet declared on the server\?/,
    );
    const doc = env.sandbox.store.get(uid) as StoredDoc;
    t.notOk(doc.facets.includes('fct_erp_http_content'), 'nothing half-done is left on the document');
    const next = await env.run();
    t.equal(next.intake.counts.labelled, 1, 'the next run labels it');
  },
);

t.test(
  'a refused password stops the run as a configuration error; an unreachable server as a failed run',
  async (t) => {
    const env = await sandboxEnv(t);
    process.env.NUXEO_PASSWORD = 'wrong';
    const refused = await env.run().finally(() => (process.env.NUXEO_PASSWORD = 'Administrator'));
    t.equal(refused.exitCode, 2);
    t.match(refused.problems[0], /HTTP 401.*check the credentials in storage\.yaml/);
    await env.sandbox.stop();
    const down = await env.run();
    t.equal(down.exitCode, 1);
    t.match(down.failure, /^search failed \(ECONNREFUSED\)/);
    t.match(renderReport(down), /\nerror: the run stopped: search failed \(ECONNREFUSED\)/);
    t.match(renderHtml(down), /<li class="bad">error: the run stopped: search failed \(ECONNREFUSED\)/);
  },
);

t.test('several mapping files, or one that is not JSON, stop the intake with a clear problem', async (t) => {
  const env = await sandboxEnv(t);
  const admin = env.sandbox.store.getByPath('/default-domain/workspaces/admin') as StoredDoc;
  const copy = env.sandbox.store.create(
    env.sandbox.actor(),
    admin,
    { type: 'File', name: 'copy', properties: {} },
    NO_BLOBS,
  );
  env.sandbox.store.addFacet(env.sandbox.actor(), copy, 'fct_erp_config_file_connect2erp');
  const several = await env.run();
  t.equal(several.exitCode, 2);
  t.match(
    several.problems[0],
    /several documents carry fct_erp_config_file_connect2erp: .*Connect to ERP Feature Configuration, \/default-domain\/workspaces\/admin\/copy; keep one/,
  );
  env.sandbox.store.remove(env.sandbox.actor(), env.sandbox.store.get(copy.uid) as StoredDoc);

  await setUpRepository(env.baseUrl, '{"mapping": [');
  const broken = await env.run();
  t.match(
    broken.problems[0],
    /Connect to ERP Feature Configuration: not valid JSON at line 1, column 14: close bracket expected/,
  );
  await setUpRepository(env.baseUrl, MAPPING.replace('"ZBARCODE"', '"ZSCAN"'));
  const uid = await env.upload('ERP/Barcode', 'd.pdf');
  t.equal((await env.run()).exitCode, 0, 'a fixed mapping file is read at the next run');
  t.equal(env.sandbox.store.get(uid)?.properties['erpBarcode:docTyp'], 'ZSCAN', 'fresh on every run');
});

t.test('the ACL check reads ACEs the way the server applies them', async (t) => {
  const env = await sandboxEnv(t);
  const admin = env.sandbox.store.getByPath('/default-domain/workspaces/admin') as StoredDoc;
  const actor = env.sandbox.actor();
  const ace = (username: string, granted: boolean, begin: string | null = null) => ({
    username,
    permission: 'Read',
    granted,
    creator: null,
    begin,
    end: null,
  });
  env.sandbox.store.setAcls(actor, admin, [
    {
      name: 'local',
      aces: [
        ace('jdoe', false),
        ace('jdoe', true),
        ace('auditors', true, '2999-01-01T00:00:00Z'),
        ace('members', true),
      ],
    },
  ]);
  const report = await env.run();
  t.same(
    report.mappingFile?.readableBy,
    ['members'],
    'a deny before a grant wins, a pending grant does not count, inherited grants do',
  );
});

t.test('every mapping problem is reported at once', async (t) => {
  const entry = (over: Record<string, unknown>) => ({
    path: '/default-domain/workspaces/A',
    facets: ['fct_erp_http_content', 'fct_erp_barcode'],
    createParentALFolder: false,
    properties: {
      'erpHttpContent:docId': '$id',
      'erpHttpContent:source': 'S4H',
      'erpHttpContent:archiveId': 'Z1',
      'erpHttpContent:compId': 'data',
      'erpHttpContent:created': '$dc:created',
      'erpHttpContent:modified': '$dc:modified',
      'erpHttpContent:scanPerformed': false,
    },
    ...over,
  });
  const base = entry({}) as { properties: Record<string, unknown> };
  const text = JSON.stringify({
    mapping: [
      entry({}),
      entry({ facets: ['fct_erp_http_content', 'fct_erp_barcode', 'fct_erp_start_workflow', 'fct_nope'] }),
      entry({
        path: '/default-domain/workspaces/B',
        createParentALFolder: 'yes',
        properties: {
          ...base.properties,
          'erpHttpContent:source': 'ECC',
          'erpBarcode:barcode': 5,
          'erpBarcode:nope': 'x',
          'erpBarcode:barcodee': 'x',
          'dc:title': '$$literal',
        },
      }),
      entry({
        path: '/default-domain/workspaces/C',
        facets: 'fct_erp_http_content, fct_erp_start_workflow',
        properties: {
          ...base.properties,
          'erpStartWorkflow:erpOTyp': 'XX',
          'erpStartWorkflow:erpStartWorkflow': 'yes',
        },
      }),
    ],
  });
  let problems: string[] = [];
  try {
    parseMapping(text, 'repository:/m.json', { registry: featureRegistry(), systems: ['S4H'], limits: new Map() });
  } catch (error) {
    problems = (error as ConfigError).problems.map((p) => `${p.path}: ${p.message}`);
  }
  const expected = [
    'mapping[0].path: /default-domain/workspaces/A is mapped 2 times: every entry for it is left out',
    'mapping[1].path: /default-domain/workspaces/A is mapped 2 times: every entry for it is left out',
    'mapping[1].facets.3: unknown facet fct_nope',
    'mapping[1].facets: needs exactly one use-case facet',
    'mapping[/default-domain/workspaces/B].createParentALFolder: ',
    'mapping[/default-domain/workspaces/B].properties.erpHttpContent:source: "ECC" is not an ERP system of erpHttp.yaml (S4H)',
    'mapping[/default-domain/workspaces/B].properties.erpBarcode:barcode: must be a string or a $ reference',
    'mapping[/default-domain/workspaces/B].properties.erpBarcode:barcodee: unknown property (did you mean erpBarcode:barcode?)',
    'mapping[/default-domain/workspaces/B].properties.erpBarcode:nope: unknown property',
    'mapping[/default-domain/workspaces/B].properties.dc:title: belongs to facet undefined',
    'mapping[/default-domain/workspaces/C].properties.erpStartWorkflow:erpOTyp: must be one of',
    'mapping[/default-domain/workspaces/C].properties.erpStartWorkflow:erpStartWorkflow: must be a boolean or a $ reference',
  ];
  for (const prefix of expected)
    t.ok(
      problems.some((p) => p.startsWith(prefix)),
      prefix,
    );
  t.ok(
    problems.includes('mapping[/default-domain/workspaces/B].properties.erpBarcode:nope: unknown property'),
    'nothing near: no guess',
  );
});

t.test('small pages: a dry run over more documents than a page hands each out once', async (t) => {
  const env = await sandboxEnv(t, { storage: { pageSize: '2' } });
  for (const name of ['a.pdf', 'b.pdf', 'c.pdf', 'd.pdf', 'README']) await env.upload('ERP/Invoices', name);
  const dry = await env.run(true);
  t.equal(dry.intake.counts.planned, 5, 'every document planned once though none leaves the result set');
  t.same(
    dry.intake.documents.map((d) => d.folder).sort(),
    ['a', 'b', 'c', 'd', 'README'].map((n) => `/default-domain/workspaces/ERP/Invoices/${n}`).sort(),
    'a name without extension names its folder as is',
  );
  const real = await env.run();
  t.equal(real.intake.counts.labelled, 5);
});

t.test(
  "an invoice's folder claim whose answer was lost is found written: its folder is made and it is labelled in the same run",
  async (t) => {
    const env = await sandboxEnv(t);
    const invoice = await env.upload('ERP/Invoices', 'invoice.pdf');
    // The claim goes through; its answer is lost, and the client's second try meets a used change token.
    env.sandbox.faults.add({ method: 'PUT', path: `/id/${invoice}`, loseAnswer: true });
    const report = await env.run();
    t.equal(report.intake.counts.labelled, 1);
    t.equal(report.intake.counts.skipped, 0);
    t.equal(
      [...env.sandbox.store.all()].filter((d) => d.type === 'Folder' && d.properties['dc:source'] === invoice).length,
      1,
      'one folder',
    );
    t.notOk(
      env.sandbox.store.get(invoice)?.properties['erpTaskStatus:claimedBy'],
      'the intake claim ends with the labelling',
    );
  },
);

t.test(
  'a document changed by another run or a user while it is labelled is left to them, not failed; the next run labels it if it is still unlabelled',
  async (t) => {
    const env = await sandboxEnv(t);
    const approval = await env.upload('ERP/Workflow', 'approval.pdf');
    const invoice = await env.upload('ERP/Invoices', 'invoice.pdf');
    // The values write of the one, the folder claim of the other: both answered 409 (stale changeToken).
    env.sandbox.faults.add({ method: 'PUT', path: `/id/${approval}`, status: 409, times: 1 });
    env.sandbox.faults.add({ method: 'PUT', path: `/id/${invoice}`, status: 409, times: 1 });
    const report = await env.run();
    t.equal(report.intake.counts.skipped, 2);
    t.equal(report.intake.counts.errors, 0);
    t.equal(report.exitCode, 0, 'not a failure');
    for (const record of report.intake.documents)
      t.match(record.skipped, /^changed by another run or a user while being labelled/);
    t.equal(
      [...env.sandbox.store.all()].filter((d) => d.type === 'Folder' && d.properties['dc:source'] === invoice).length,
      0,
      'the folder is left to whoever claimed the file',
    );
    const next = await env.run();
    t.equal(next.intake.counts.labelled, 2, 'both still unlabelled: the next run labels them');
    t.notOk(
      env.sandbox.store.get(invoice)?.properties['erpTaskStatus:claimedBy'],
      'the intake claim ends with the labelling',
    );
  },
);

t.test(
  'a file another run is labelling (its unexpired intake claim) is left to that run; once the claim expires, a run takes it over',
  async (t) => {
    const env = await sandboxEnv(t);
    const invoice = await env.upload('ERP/Invoices', 'claimed.pdf');
    const store = env.sandbox.store;
    store.addFacet(env.sandbox.actor(), store.get(invoice)!, 'fct_erp_task_status');
    env.fill(invoice, {
      'erpTaskStatus:claimedBy': 'other-run',
      'erpTaskStatus:claimExpires': new Date(Date.now() + 60_000).toISOString(),
    });
    const report = await env.run();
    t.match(report.intake.documents[0].skipped, /^being labelled by run other-run \(claim until /);
    t.equal(
      [...store.all()].filter((d) => d.type === 'Folder' && d.properties['dc:source'] === invoice).length,
      0,
      "no folder next to the other run's",
    );
    env.fill(invoice, { 'erpTaskStatus:claimExpires': '2000-01-01T00:00:00.000Z' });
    t.equal((await env.run()).intake.counts.labelled, 1, 'an expired claim is taken over');
  },
);

t.test(
  'a folder mapped twice (link, then workflow): neither entry is used, both named, exit 2; the other folders go on',
  async (t) => {
    const mapping = JSON.parse(MAPPING) as { mapping: Array<Record<string, any>> };
    const invoices = mapping.mapping.find((e) => String(e.path).endsWith('/Invoices'))!;
    const workflow = mapping.mapping.find((e) => String(e.path).endsWith('/Workflow'))!;
    mapping.mapping.push({ ...workflow, path: invoices.path });
    const env = await sandboxEnv(t, { mapping: JSON.stringify(mapping) });
    const invoice = await env.upload('ERP/Invoices', 'invoice.pdf');
    const approval = await env.upload('ERP/Workflow', 'approval.pdf');
    const report = await env.job();
    t.equal(report.exitCode, 2);
    const twice = report.problems.filter((p) =>
      p.includes('/default-domain/workspaces/ERP/Invoices is mapped 2 times'),
    );
    t.equal(twice.length, 2, 'both entries named');
    t.notOk(env.props(invoice)['erpHttpContent:docId'], 'the document under it is not labelled');
    t.same(
      Object.values(report.tasks).flatMap((task) => task.documents.map((d) => d.uid)),
      [approval],
      'nor sent; the other folder is',
    );
  },
);

t.test('a mapping file the repository fails to give stops the run, naming the download', async (t) => {
  const env = await sandboxEnv(t);
  env.sandbox.faults.add({ path: '/@blob/file:content', status: 500, body: '{}', times: 10 });
  const report = await env.job();
  t.equal(report.exitCode, 1);
  t.match(report.failure, /^download file:content of .* failed with HTTP 500/);
});
