import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { templateYaml } from '../src/config/templates.js';
import { sandboxEnv, type Env } from './helpers/env.js';
import { cli } from './helpers/run-cli.js';

/** `verify: true`: a write SAP answered but did not keep is found before the document says DONE. */

t.setTimeout(120_000);

/** The link task with the built-in call, `verify` set as given. */
function linkWithVerify(env: Env, verify: string): void {
  const file = join(env.location.jobsDir, 'link.yaml');
  const call = (templateYaml('link', 'RFC') as string).replace(/^rfc:\n/, `rfc:\n  verify: ${verify}\n`);
  writeFileSync(file, `${readFileSync(file, 'utf8')}${call}`);
}

async function invoices(env: Env, n: number): Promise<string[]> {
  const uids = await Promise.all(Array.from({ length: n }, (_, i) => env.upload('ERP/Invoices', `invoice-${i}.pdf`)));
  await env.job({ task: 'link' });
  uids.forEach((uid, i) => env.fill(uid, { 'erpCreateALDocument:erpObjectId': `10000000${i}2026` }));
  return uids;
}

t.test('an SAP that answers but does not keep the link: RETRY, not DONE; sent again once it keeps it', async (t) => {
  const env = await sandboxEnv(t);
  linkWithVerify(env, 'true');
  const [uid] = await invoices(env, 1);
  const dry = await env.job({ task: 'link', dryRun: true });
  t.match(dry.tasks.link.documents[0], { result: 'PLANNED' }, 'a dry run plans the call, and reads nothing back');
  env.erp.uncommitted.add('ARCHIV_CONNECTION_INSERT');
  const first = await env.job({ task: 'link' });
  t.equal(env.erp.tables.links.length, 0, 'SAP kept nothing');
  t.equal(env.props(uid)['erpTaskStatus:status'], 'RETRY', 'the document is not DONE');
  t.match(first.tasks.link.documents[0], {
    result: 'RETRY',
    message:
      /SAP answered, but reading the work back \(verify\) finds nothing: it may not have been kept \(committed\)/,
  });
  env.erp.uncommitted.clear();
  const later = new Date(Date.now() + 10 * 60_000);
  await env.job({ task: 'link', observer: { now: () => later } });
  t.equal(env.props(uid)['erpTaskStatus:status'], 'DONE');
  t.equal(env.erp.tables.links.length, 1, 'linked once');
});

t.test('a read back that fails leaves the document uncertain too: looked up at its next attempt', async (t) => {
  const env = await sandboxEnv(t);
  linkWithVerify(env, 'true');
  const [uid] = await invoices(env, 1);
  env.erp.faults.add({ functionName: 'ARCHIV_GET_CONNECTIONS', status: 500, body: '' });
  const run = await env.job({ task: 'link' });
  t.equal(env.erp.tables.links.length, 1, 'SAP has it');
  t.match(run.tasks.link.documents[0], {
    result: 'RETRY',
    message: /reading the work back \(verify\) could not be made \(.*\): whether SAP kept it is not known/,
  });
  const later = new Date(Date.now() + 10 * 60_000);
  await env.job({ task: 'link', observer: { now: () => later } });
  t.equal(env.props(uid)['erpTaskStatus:status'], 'DONE', 'found by its lookup, not sent twice');
  t.equal(env.erp.tables.links.length, 1);
});

t.test('its cost: one read more per document, measured in calls to SAP', async (t) => {
  const calls = async (verify: string): Promise<number> => {
    const env = await sandboxEnv(t);
    linkWithVerify(env, verify);
    await invoices(env, 5);
    const seen: string[] = [];
    env.erp.faults.observe = (_req, _res, name) => void (name !== undefined && seen.push(name));
    await env.job({ task: 'link' });
    t.equal(env.erp.tables.links.length, 5);
    return seen.length;
  };
  t.equal(await calls('false'), 5, 'without verify: the insert alone');
  t.equal(await calls('true'), 10, 'with verify: the insert and its lookup');
});

t.test('verify without a lookup is a configuration problem', async (t) => {
  const env = await sandboxEnv(t);
  const file = join(env.location.jobsDir, 'workflow.yaml');
  const call = (templateYaml('workflow', 'RFC') as string).replace(/^rfc:\n/, 'rfc:\n  verify: true\n');
  writeFileSync(file, `${readFileSync(file, 'utf8')}${call}`);
  const { code, stderr } = await cli(['validate', '--config', env.location.configDir]);
  t.equal(code, 2);
  t.match(stderr, /workflow\.yaml: rfc\.verify: verify reads the work back with the call's lookup: declare one/);
});
