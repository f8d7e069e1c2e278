import t from 'tap';
import { copyFileSync, cpSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sandboxEnv } from './helpers/env.js';
import { cli, PROJECT } from './helpers/run-cli.js';

/**
 * The README's runbook, command by command as a newcomer types them, against the sandboxes (a
 * repository set up as docs/nuxeo-setup.md leaves it, an SAP as docs/sap-setup.md leaves it): every
 * block marked `<!-- runbook -->` in "Go-live, step by step", in order, from the folder that holds
 * `config/` and `jobs/`, to a first document in SAP and a reconciliation that finds nothing wrong.
 */
t.setTimeout(240_000);

const README = readFileSync(join(PROJECT, 'README.md'), 'utf8');
const GO_LIVE = README.slice(README.indexOf('## Go-live, step by step'), README.indexOf('\n## Commands'));
/** Each `connect2erp …` line of the marked blocks, its comment dropped, split into arguments. */
const STEPS = [...GO_LIVE.matchAll(/<!-- runbook -->\s*```sh\n([\s\S]*?)```/g)]
  .flatMap((block) => block[1].split('\n'))
  .map((line) => line.replace(/\s+#.*$/, '').trim())
  .filter((line) => line.startsWith('connect2erp '))
  .map((line) => line.split(/\s+/).slice(1));

t.test("the README's go-live runbook, on the sandboxes, to a first document in SAP", async (t) => {
  t.same(
    STEPS.map((args) => args[0]),
    ['validate', 'mapping', 'validate', 'doctor', 'run', 'run', 'reconcile'],
    'validate the mapping, upload it, validate, doctor, a dry run, a pilot, reconcile',
  );
  const env = await sandboxEnv(t);
  // The newcomer's folder: config/ (with the mapping file they edit), jobs/ and the crontab beside
  // it. Inside the project (t.testdir()): a process started outside it loses tap's coverage.
  const folder = t.testdir();
  cpSync(env.location.configDir, join(folder, 'config'), { recursive: true });
  cpSync(env.location.jobsDir, join(folder, 'jobs'), { recursive: true });
  const mapping = 'connector_configuration_connect_to_erp.json';
  copyFileSync(join(PROJECT, 'config', mapping), join(folder, 'config', mapping));
  copyFileSync(join(PROJECT, 'crontab'), join(folder, 'crontab'));
  // Documents waiting at go-live: approvals to start a workflow for, and invoices still missing their object id.
  for (let i = 0; i < 8; i++) await env.upload('ERP/Workflow', `approval-${i}.pdf`);
  for (let i = 0; i < 2; i++) await env.upload('ERP/Invoices', `invoice-${i}.pdf`);
  env.sandbox.index.catchUp();
  const administrator = { NUXEO_ADMIN: 'Administrator', NUXEO_ADMIN_PASSWORD: 'Administrator' };
  for (const args of STEPS) {
    const step = `connect2erp ${args.join(' ')}`;
    if (args.includes('--limit')) t.equal(env.erp.tables.inbox.length, 0, `nothing in SAP before: ${step}`);
    const { code, stdout, stderr } = await cli(args, administrator, { cwd: folder });
    t.equal(code, 0, `${step}: ${stderr.slice(-600)}`);
    if (args[0] === 'doctor') t.match(stdout, /\n\d+ passed, 0 failed, \d+ not checked\n$/, 'doctor passes');
    // Minutes pass between one scheduled step and the next: the search index has caught up.
    env.sandbox.index.catchUp();
  }
  t.ok(existsSync(join(folder, 'dry-run.html')), 'the dry run wrote its page');
  t.ok(existsSync(join(folder, 'pilot.html')), 'and the pilot');
  t.equal(env.erp.tables.inbox.length, 5, 'the pilot sent exactly 5 documents to SAP');
});
