import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { uploadFile, writeDemoConfig } from '../sandbox/demo.js';
import { ErpSandbox } from '../sandbox/erp/server.js';
import { RepositorySandbox } from '../sandbox/repository/server.js';
import type { StoredDoc } from '../sandbox/repository/store.js';
import { configLocation } from '../src/config/location.js';
import { runJob } from '../src/job/run.js';
import { quietLog } from './helpers/env.js';
import { cli, PROJECT } from './helpers/run-cli.js';

/** `connect2erp mapping upload | download`, end to end: the command line against a repository sandbox, then a run. */
t.setTimeout(360_000);

const SHIPPED = join(PROJECT, 'config', 'connector_configuration_connect_to_erp.json');
const ADMIN = `Basic ${Buffer.from('Administrator:Administrator').toString('base64')}`;
const MAPPING_PATH = '/default-domain/workspaces/admin/Connect to ERP Feature Configuration';

/** A server as docs/nuxeo-setup.md leaves it before the mapping file: workspaces, and the admin folder closed. */
async function server(t: Test, close = true) {
  const sandbox = new RepositorySandbox();
  const baseUrl = await sandbox.start();
  t.teardown(() => sandbox.stop());
  const erp = new ErpSandbox();
  const erpUrl = await erp.start();
  t.teardown(() => erp.stop());
  const post = (path: string, body: unknown): Promise<Response> =>
    fetch(`${baseUrl}/api/v1/path${path}`, {
      method: 'POST',
      headers: { authorization: ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  for (const [parent, name] of [
    ['/default-domain/workspaces', 'admin'],
    ['/default-domain/workspaces', 'ERP'],
    ['/default-domain/workspaces/ERP', 'Workflow'],
  ])
    await post(parent, { 'entity-type': 'document', type: 'Folder', name, properties: { 'dc:title': name } });
  if (close) await post('/default-domain/workspaces/admin/@op/Document.BlockPermissionInheritance', { params: {} });
  const dir = mkdtempSync(join(tmpdir(), 'c2e-upload-'));
  const config = writeDemoConfig(dir, baseUrl, erpUrl);
  return { sandbox, baseUrl, erp, dir, config };
}

t.test(
  'upload creates and labels the file a run then reads; again, it replaces it; download gives it back',
  async (t) => {
    const { sandbox, baseUrl, erp, dir, config } = await server(t);
    const created = await cli(['mapping', 'upload', SHIPPED, '--config', config]);
    t.equal(created.code, 0, created.stderr);
    t.match(
      created.stdout,
      `uploaded ${SHIPPED} to ${MAPPING_PATH} (created), 3 folder(s) mapped, labelled fct_erp_config_file_connect2erp`,
    );
    const doc = sandbox.store.getByPath(MAPPING_PATH) as StoredDoc;
    t.ok(doc.facets.includes('fct_erp_config_file_connect2erp'));
    t.equal(doc.properties['dc:title'], 'Connect to ERP Feature Configuration');

    const uid = await uploadFile(baseUrl, '/default-domain/workspaces/ERP/Workflow', 'approval.pdf');
    sandbox.index.catchUp();
    const report = await runJob({ dryRun: false, location: configLocation({ config }) }, quietLog);
    t.same(report.problems, []);
    t.equal(sandbox.store.get(uid)?.properties['erpTaskStatus:status'], 'DONE', 'a run reads what was uploaded');
    t.equal(erp.tables.inbox.length, 1);

    const changed = join(dir, 'changed.json');
    writeFileSync(changed, readFileSync(SHIPPED, 'utf8').replace('"APPROVER1"', '"APPROVER2"'));
    // At once: found by its path, not by a search the index may not have caught up with.
    const replaced = await cli(['mapping', 'upload', changed, '--config', config]);
    t.equal(replaced.code, 0, replaced.stderr);
    t.match(replaced.stdout, '(replaced)');
    const labelled = [...sandbox.store.all()].filter((d) => d.facets.includes('fct_erp_config_file_connect2erp'));
    t.equal(labelled.length, 1, 'one mapping file still');

    const out = join(dir, 'downloaded.json');
    const saved = await cli(['mapping', 'download', out, '--config', config]);
    t.equal(saved.code, 0, saved.stderr);
    t.equal(saved.stdout, `downloaded ${MAPPING_PATH} to ${out}\n`);
    t.equal(readFileSync(out, 'utf8'), readFileSync(changed, 'utf8'));
    const printed = await cli(['mapping', 'download', '--config', config]);
    t.equal(printed.stdout, readFileSync(changed, 'utf8'), 'to standard output');
  },
);

t.test('an invalid file is not uploaded; an admin folder others can read, or a second label, is exit 2', async (t) => {
  const { sandbox, dir, config } = await server(t, false);
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, readFileSync(SHIPPED, 'utf8').replace('"ZBARCODE"', '42'));
  const refused = await cli(['mapping', 'upload', bad, '--config', config]);
  t.equal(refused.code, 2);
  t.match(
    refused.stderr,
    `${bad}: mapping[/default-domain/workspaces/ERP/Barcode].properties.erpBarcode:docTyp: must be a string or a $ reference`,
  );
  t.equal(sandbox.store.getByPath(MAPPING_PATH), undefined, 'nothing uploaded');

  // Mapping files uploaded through Web UI, under names of their own, and the admin folder left open to members.
  const admin = sandbox.store.getByPath('/default-domain/workspaces/admin') as StoredDoc;
  const labelled = (name: string): StoredDoc => {
    const doc = sandbox.store.create(sandbox.actor(), admin, { type: 'File', name, properties: {} }, () => undefined);
    return sandbox.index.sync(() => sandbox.store.addFacet(sandbox.actor(), doc, 'fct_erp_config_file_connect2erp'));
  };
  labelled('mine.json');
  const replaced = await cli(['mapping', 'upload', SHIPPED, '--config', config]);
  t.equal(replaced.code, 2);
  t.match(
    replaced.stdout,
    `to /default-domain/workspaces/admin/mine.json (replaced)`,
    'the file a run reads, whatever its name',
  );
  t.match(
    replaced.stderr,
    'warning: /default-domain/workspaces/admin/mine.json can be read by members; only administrators should',
  );
  t.equal(sandbox.store.getByPath(MAPPING_PATH), undefined, 'no second file');
  labelled('other.json');
  const two = await cli(['mapping', 'upload', SHIPPED, '--config', config]);
  t.equal(two.code, 2);
  t.match(
    two.stderr,
    /warning: other documents under adminPath carry fct_erp_config_file_connect2erp: \/default-domain\/workspaces\/admin\/(mine|other)\.json; a run stops/,
  );
});

t.test('what the command needs is said: the action, the file, an admin folder that exists', async (t) => {
  const { config, dir } = await server(t);
  const none = await cli(['mapping', '--config', config]);
  t.equal(none.code, 2);
  t.match(none.stderr, 'say upload FILE or download [FILE]');
  const noFile = await cli(['mapping', 'upload', '--config', config]);
  t.match(noFile.stderr, 'upload needs the file');
  const storage = join(config, 'storage.yaml');
  writeFileSync(
    storage,
    readFileSync(storage, 'utf8').replace(/^adminPath: .*$/m, 'adminPath: /default-domain/workspaces/nowhere'),
  );
  const lost = await cli(['mapping', 'upload', SHIPPED, '--config', config]);
  t.equal(lost.code, 2);
  t.match(lost.stderr, 'storage.yaml: adminPath: /default-domain/workspaces/nowhere is not in the repository');
  t.match(
    (await cli(['mapping', 'download', join(dir, 'x.json'), '--config', config])).stderr,
    /no document under adminPath carries/,
  );
});
