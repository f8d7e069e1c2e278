import t from 'tap';
import got from 'got';
import { MAPPING, sandboxEnv } from './helpers/env.js';
import { setUpRepository } from '../sandbox/demo.js';
import { renderReport } from '../src/job/report/table.js';
import { NO_BLOBS } from '../sandbox/repository/store.js';

t.test('the mapping file: readable by members is a warning; missing or invalid stops the intake', async (t) => {
  const env = await sandboxEnv(t);
  const admin = env.sandbox.store.getByPath('/default-domain/workspaces/admin')!;
  env.sandbox.store.setAcls(env.sandbox.actor(), admin, []);
  const open = await env.run();
  t.match(open.warnings[0], /can be read by members; only administrators should/);

  const configDoc = env.sandbox.store.getByPath(
    '/default-domain/workspaces/admin/Connect to ERP Feature Configuration',
  )!;
  env.sandbox.store.update(env.sandbox.actor(), configDoc, {}, NO_BLOBS);
  await got.post(`${env.baseUrl}/api/v1/id/${configDoc.uid}/@op/Document.RemoveFacet`, {
    username: 'Administrator',
    password: 'Administrator',
    json: { params: { facet: 'fct_erp_config_file_connect2erp' } },
  });
  const none = await env.run();
  t.equal(none.exitCode, 2);
  t.match(none.problems[0], /no document under adminPath carries the facet fct_erp_config_file_connect2erp/);
});

t.test(
  'who can read the mapping file, as Nuxeo decides it: the first ACE for Read in effect, grant or deny',
  async (t) => {
    const env = await sandboxEnv(t);
    const store = env.sandbox.store;
    const configDoc = store.getByPath('/default-domain/workspaces/admin/Connect to ERP Feature Configuration')!;
    const ace = (username: string, permission: string, granted = true, end: string | null = null) => ({
      username,
      permission,
      granted,
      creator: null,
      begin: null,
      end,
    });
    store.setAcls(env.sandbox.actor(), configDoc, [
      {
        name: 'local',
        aces: [
          ace('members', 'Write', false),
          ace('members', 'Read'), // a deny of another permission decides nothing for Read
          ace('jdoe', 'Read'),
          ace('Everyone', 'Everything', false), // granted before the block
          ace('team', 'ReadRemove'),
          ace('auditors', 'DataVisualization'), // permissions that contain Read
          ace('browsers', 'Browse'), // Browse alone does not read the file
          ace('former', 'Read', true, '2020-01-01T00:00:00.000Z'), // no longer in effect
        ],
      },
    ]);
    const report = await env.run();
    t.match(report.warnings[0], /can be read by members, jdoe; only administrators should/);
    t.same(report.mappingFile?.readableBy, ['members', 'jdoe'], 'the block ends it: team and auditors come after it');
    store.setAcls(env.sandbox.actor(), configDoc, [
      {
        name: 'local',
        aces: [
          ace('team', 'ReadRemove'),
          ace('auditors', 'DataVisualization'),
          ace('gone', 'Read', false),
          ace('gone', 'ReadWrite'),
        ],
      },
    ]);
    t.same(
      (await env.run()).mappingFile?.readableBy,
      ['team', 'auditors'],
      "a deny of Read first keeps gone out; the rest of the admin folder's blocked ACL is inherited",
    );
  },
);

t.test('an invalid mapping names the repository file and every key', async (t) => {
  const bad = JSON.stringify({
    mapping: [
      {
        path: '/elsewhere',
        facets: ['fct_erp_http_content', 'fct_erp_barcode'],
        createParentALFolder: 'yes',
        properties: {},
      },
      {
        path: '/default-domain/workspaces/x',
        facets: 'fct_erp_barcode',
        createParentALFolder: false,
        properties: { 'erpHttpContent:docId': 'x', 'erpStartWorkflow:erpOTyp': 'US' },
      },
    ],
  });
  const env = await sandboxEnv(t, { mapping: bad });
  const report = await env.run();
  t.equal(report.exitCode, 2);
  const text = report.problems.join('\n');
  for (const expected of [
    'mapping[/elsewhere].path: must be a folder path under',
    'mapping[/elsewhere].createParentALFolder',
    'mapping[/default-domain/workspaces/x].facets: must contain fct_erp_http_content',
    'mapping[/default-domain/workspaces/x].properties.erpHttpContent:docId: must be "$id"',
    'mapping[/default-domain/workspaces/x].properties.erpStartWorkflow:erpOTyp: belongs to facet fct_erp_start_workflow',
    'erpHttpContent:source is required',
  ]) {
    t.ok(text.includes(expected), expected);
  }
  t.match(text, /^repository:\/default-domain\/workspaces\/admin\/Connect to ERP Feature Configuration: /);
});

t.test("an entry with a problem stops its own folder's intake; the other entries and the tasks go on", async (t) => {
  const env = await sandboxEnv(t);
  const invoice = await env.upload('ERP/Invoices', 'invoice-1.pdf');
  await env.run();
  env.fill(invoice, { 'erpCreateALDocument:erpObjectId': '100019000000222023' });

  const mapping = JSON.parse(MAPPING) as { mapping: Array<Record<string, any>> };
  mapping.mapping[0].properties['erpBarcode:docTyp'] = 42;
  await setUpRepository(env.baseUrl, JSON.stringify(mapping));
  const scan = await env.upload('ERP/Barcode', 'scan.pdf');
  const order = await env.upload('ERP/Workflow', 'order.pdf');
  const partly = await env.run();
  t.equal(partly.exitCode, 2, 'the mapping file has a problem');
  t.same(
    partly.problems.map((p) => p.replace(/^.*Configuration: /, '')),
    ['mapping[/default-domain/workspaces/ERP/Barcode].properties.erpBarcode:docTyp: must be a string or a $ reference'],
  );
  t.equal(env.props(scan)['erpTaskStatus:status'], undefined, "the broken entry's folder is not labelled");
  t.equal(env.props(order)['erpTaskStatus:status'], 'DONE', 'the other entries are');
  t.equal(env.props(invoice)['erpTaskStatus:status'], 'DONE', 'and the tasks ran');

  await setUpRepository(env.baseUrl, '{"mapping": [');
  const late = await env.upload('ERP/Workflow', 'late.pdf');
  const unusable = await env.run();
  t.equal(unusable.exitCode, 2);
  t.equal(unusable.intake.state, 'skipped');
  t.match(
    renderReport(unusable),
    /\nintake: skipped: the mapping file cannot be used \(see the problems\); the tasks run on\n/,
  );
  t.equal(env.props(late)['erpTaskStatus:status'], undefined, 'no intake without a mapping file');
  t.same(Object.keys(unusable.tasks).sort(), ['barcode', 'link', 'workflow'], 'every task ran');
  t.ok(Object.values(unusable.tasks).every((task) => task.state === 'finished'));
});
