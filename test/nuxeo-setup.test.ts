import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { uploadFile, writeDemoConfig } from '../sandbox/demo.js';
import { ErpSandbox } from '../sandbox/erp/server.js';
import { RepositorySandbox } from '../sandbox/repository/server.js';
import { configLocation } from '../src/config/location.js';
import { runJob } from '../src/job/run.js';
import { quietLog } from './helpers/env.js';
import { cli, PROJECT } from './helpers/run-cli.js';
import { loadContentServerConfig } from '../src/config/load.js';
import { readCertificateFile } from '../src/content-server/signatures/certificate-file.js';
import { CertificateStore } from '../src/content-server/signatures/certificates.js';
import { RepositoryClient } from '../src/repository/client.js';

/**
 * docs/nuxeo-setup.md's set-up script, run as an administrator would (bash and curl) against a
 * repository sandbox that has only its workspaces; then the job, signed in as the account the
 * script made, links a document.
 */
const run = promisify(execFile);
// bash, curl and the CLI spawned over and over: some 15 s idle, more than tap's 30 s on a slow machine.
t.setTimeout(120_000);
const GUIDE = readFileSync(join(PROJECT, 'docs', 'nuxeo-setup.md'), 'utf8');
const SCRIPT = /<!-- set-up script[^>]*-->\s*```bash\n([\s\S]*?)```/.exec(GUIDE)?.[1] as string;
const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

t.test("the guide's set-up script makes a server the job works with, and may run again", async (t) => {
  t.ok(SCRIPT, 'the guide has the script');
  const sandbox = new RepositorySandbox({ users: { alice: { password: 'alice', groups: ['members'] } } });
  const baseUrl = await sandbox.start();
  t.teardown(() => sandbox.stop());
  const erp = new ErpSandbox();
  const erpUrl = await erp.start();
  t.teardown(() => erp.stop());
  // The customer's workspaces, there before connect2erp.
  for (const [parent, name] of [
    ['/default-domain/workspaces', 'ERP'],
    ['/default-domain/workspaces/ERP', 'Workflow'],
  ])
    await fetch(`${baseUrl}/api/v1/path${parent}`, {
      method: 'POST',
      headers: { authorization: basic('Administrator', 'Administrator'), 'content-type': 'application/json' },
      body: JSON.stringify({ 'entity-type': 'document', type: 'Workspace', name, properties: { 'dc:title': name } }),
    });

  const dir = mkdtempSync(join(tmpdir(), 'c2e-setup-'));
  writeFileSync(join(dir, 'set-up.sh'), SCRIPT);
  const env = {
    PATH: process.env.PATH as string,
    NUXEO_URL: baseUrl,
    NUXEO_ADMIN: 'Administrator',
    NUXEO_ADMIN_PASSWORD: 'Administrator',
    // A password JSON must escape (the title, with its spaces, is one a URL must encode).
    SERVICE_PASSWORD: 'job "secret" \\ 1',
    WORKSPACES: '/default-domain/workspaces/ERP',
    CERTS_USER: 'carol',
    CERTS_PASSWORD: 'carol-s3cret',
  };
  for (const round of ['first', 'again']) {
    const { stdout } = await run('bash', [join(dir, 'set-up.sh')], { cwd: PROJECT, env });
    t.match(
      stdout,
      /^set up: connect2erp, \/default-domain\/workspaces\/admin\/Connect to ERP Feature Configuration/,
      round,
    );
  }
  const mapping = sandbox.store.getByPath('/default-domain/workspaces/admin/Connect to ERP Feature Configuration');
  t.ok(mapping?.facets.includes('fct_erp_config_file_connect2erp'), 'the mapping file, labelled');
  const asAlice = await fetch(`${baseUrl}/api/v1/id/${mapping?.uid}`, {
    headers: { authorization: basic('alice', 'alice') },
  });
  t.equal(asAlice.status, 403, 'another user cannot read it');

  const configDir = writeDemoConfig(dir, baseUrl, erpUrl);
  const storage = join(configDir, 'storage.yaml');
  writeFileSync(
    storage,
    readFileSync(storage, 'utf8')
      .replace('username: Administrator', 'username: connect2erp')
      .replace('${env:NUXEO_PASSWORD}', `'job "secret" \\ 1'`)
      .replace(
        'administrators: [Administrator, administrators]',
        'administrators: [Administrator, administrators, connect2erp]',
      ),
  );
  const uid = await uploadFile(baseUrl, '/default-domain/workspaces/ERP/Workflow', 'approval.pdf');
  sandbox.index.catchUp();
  const report = await runJob({ dryRun: false, location: configLocation({ config: configDir }) }, quietLog);
  t.same(report.problems, [], 'no problem');
  t.same(report.mappingFile?.readableBy, [], 'read by the job, no one else');
  t.equal(report.tasks.workflow.counts.DONE, 1, 'the job, as its own account, starts the workflow');
  t.equal(sandbox.store.get(uid)?.properties['erpTaskStatus:status'], 'DONE');
  t.equal(erp.tables.inbox.length, 1, 'a work item in the inbox');

  // The mapping file changes as the administrator, never as the job's account.
  const shipped = join(PROJECT, 'config', 'connector_configuration_connect_to_erp.json');
  const asJob = await cli(['mapping', 'upload', shipped, '--config', configDir]);
  t.equal(asJob.code, 2);
  t.match(
    asJob.stderr,
    /the account of storage\.yaml may not write in \/default-domain\/workspaces\/admin: run it as a repository administrator, with NUXEO_ADMIN and NUXEO_ADMIN_PASSWORD set \(docs\/nuxeo-setup\.md, "Who runs what"\)/,
  );
  const asAdmin = await cli(['mapping', 'upload', shipped, '--config', configDir], {
    NUXEO_ADMIN: 'Administrator',
    NUXEO_ADMIN_PASSWORD: 'Administrator',
  });
  t.equal(asAdmin.code, 0, asAdmin.stderr);
  t.match(asAdmin.stdout, '(replaced)');

  // SAP's certificate, filed as serve files it; then decided by the account the script made for it.
  const adminPath = '/default-domain/workspaces/admin';
  const client = (username: string, password: string): RepositoryClient =>
    new RepositoryClient(
      {
        ...loadContentServerConfig(configLocation({ config: configDir })).storage,
        auth: { type: 'basic', username, password },
      },
      quietLog,
    );
  const file = readCertificateFile(readFileSync(join(PROJECT, 'test', 'fixtures', 'archivelink', 'dsa.crt')));
  await new CertificateStore(client('Administrator', 'Administrator'), adminPath).receive(
    { connection: 'S4H', contRep: 'Z1', authId: 'CN=S4H' },
    file,
  );
  const store = new CertificateStore(client('connect2erp', 'job "secret" \\ 1'), adminPath);
  const [filed] = await store.list();
  t.equal(filed?.status, 'pending', "the job's account may list the certificates");
  const certs = (vars: Record<string, string>) => cli(['certs', 'approve', filed.name, '--config', configDir], vars);
  const refused = await certs({});
  t.equal(refused.code, 2);
  t.match(
    refused.stderr,
    /the account of storage\.yaml may not change SAP's certificates: run it as a repository administrator, with NUXEO_ADMIN and NUXEO_ADMIN_PASSWORD set/,
  );
  const stranger = await certs({ NUXEO_ADMIN: 'alice', NUXEO_ADMIN_PASSWORD: 'alice' });
  t.match(
    stranger.stderr,
    /Privilege 'Read' is not granted to 'alice'/,
    'an account without rights there cannot even list',
  );
  const approved = await certs({ NUXEO_ADMIN: 'carol', NUXEO_ADMIN_PASSWORD: 'carol-s3cret' });
  t.equal(approved.code, 0, approved.stderr);
  t.equal((await store.list())[0]?.status, 'approved', 'CERTS_USER approves');
  t.notOk(approved.stderr.includes('carol-s3cret'), 'no password in the log');
  sandbox.faults.add({ method: 'PUT', path: `/api/v1/id/${filed.uid}`, status: 409 });
  const conflict = await certs({ NUXEO_ADMIN: 'carol', NUXEO_ADMIN_PASSWORD: 'carol-s3cret' });
  t.not(conflict.code, 0);
  t.match(conflict.stderr, /HTTP 409/, "any other refusal is the repository's, as it said it");

  // Users from a directory: the script makes none, uses those there, and names one it cannot find.
  const directory = { ...env, CREATE_USERS: 'no', SERVICE_USER: 'alice', CERTS_USER: 'dave' };
  const missing = await run('bash', [join(dir, 'set-up.sh')], { cwd: PROJECT, env: directory }).catch(
    (error: { code: number; stderr: string }) => error,
  );
  t.match(missing, { code: 1, stderr: /user dave not found: create it in your directory/ });
  const dave = await fetch(`${baseUrl}/api/v1/user/dave`, {
    headers: { authorization: basic('Administrator', 'Administrator') },
  });
  t.equal(dave.status, 404, 'nobody made');
});
