import t, { type Test } from 'tap';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { quietLog, sandboxEnv, type Env } from './helpers/env.js';
import { runJob } from '../src/job/run.js';
import { loadConfig } from '../src/config/load.js';
import type { ConfigError } from '../common/errors.js';
import { NO_BLOBS, type StoredDoc } from '../sandbox/repository/store.js';
import { exceptionXml } from '../sandbox/erp/soap-codec.js';

// Runs over real HTTP: 3 s idle, several times that on a busy machine.
t.setTimeout(120_000);

/**
 * A claim is one attempt's: its token is new to the attempt, its outcome is written with the
 * change token the claim left, and it must outlast the calls it covers.
 */

/**
 * An edit as Web UI saves one, with the document's change token (Nuxeo then counts a user change:
 * the repository sandbox's Store.update), unlike `env.fill`.
 */
function edit(env: Env, uid: string, values: Record<string, unknown>): void {
  const { store } = env.sandbox;
  const doc = store.get(uid) as StoredDoc;
  env.sandbox.index.sync(() =>
    store.update(env.sandbox.actor(), doc, values, NO_BLOBS, { changeToken: store.changeToken(doc) }),
  );
}

const workflow = (env: Env) => {
  env.sandbox.index.catchUp();
  return runJob({ location: env.location, dryRun: false, task: 'workflow' }, quietLog);
};

/** An approval's workflow run, with `meanwhile` done while SAP holds its call. */
async function whileSending(t: Test, meanwhile: (env: Env, uid: string) => void) {
  const env = await sandboxEnv(t);
  const uid = await env.upload('ERP/Workflow', 'approval.pdf');
  await env.job({ task: 'link' });
  env.erp.faults.hold();
  const run = workflow(env);
  await env.erp.faults.whenHeld(1);
  meanwhile(env, uid);
  env.erp.faults.release();
  return { env, uid, report: await run };
}

t.test("a user's edit while the call is out: the outcome is written on top of it, the edit kept", async (t) => {
  const { env, uid, report } = await whileSending(t, (env, uid) =>
    edit(env, uid, { 'dc:description': 'checked by the clerk' }),
  );
  t.same(report.tasks.workflow.counts, { DONE: 1 });
  t.equal(env.props(uid)['dc:description'], 'checked by the clerk');
  t.equal(env.props(uid)['erpTaskStatus:status'], 'DONE');
  t.equal(env.erp.tables.inbox.length, 1);
});

t.test(
  'a claim taken over by another run while the call was out: this run writes nothing over it, and says so',
  async (t) => {
    const theirs = 'a-later-run/1';
    const { env, uid, report } = await whileSending(t, (env, uid) => {
      t.match(
        env.props(uid)['erpTaskStatus:claimedBy'],
        /^[0-9a-f-]{36}\/\d+$/,
        "a claim's token: the run's id and the claim's number",
      );
      // The claim expired, and another run took the document over.
      edit(env, uid, {
        'erpTaskStatus:claimedBy': theirs,
        'erpTaskStatus:claimExpires': new Date(Date.now() + 600_000).toISOString(),
      });
    });
    t.match(report.tasks.workflow.documents, [
      { uid, result: 'SKIPPED', message: /its claim expired while this run sent it, and another run took it over/ },
    ]);
    t.same(
      [env.props(uid)['erpTaskStatus:status'], env.props(uid)['erpTaskStatus:claimedBy']],
      ['IN_PROGRESS', theirs],
      "left as the other run's",
    );
  },
);

t.test('an outcome whose answer was lost: the write sent again meets itself, and the document is DONE', async (t) => {
  const env = await sandboxEnv(t);
  const uid = await env.upload('ERP/Workflow', 'approval.pdf');
  await env.job({ task: 'link' });
  // The claim goes through; the outcome is written and its answer lost.
  env.sandbox.faults.add({ method: 'PUT', path: `/id/${uid}`, skip: 1, loseAnswer: true });
  const report = await workflow(env);
  t.same(report.tasks.workflow.counts, { DONE: 1 });
  t.equal(env.props(uid)['erpTaskStatus:status'], 'DONE');
  t.equal(env.erp.tables.inbox.length, 1);
});

t.test(
  'validate refuses a claim shorter than the calls it covers, naming the system and the time needed',
  async (t) => {
    const env = await sandboxEnv(t);
    appendFileSync(join(env.location.jobsDir, 'barcode.yaml'), 'claimTimeoutMs: 60000\n');
    const erpYaml = join(env.location.configDir, 'erpHttp.yaml');
    writeFileSync(erpYaml, `${readFileSync(erpYaml, 'utf8')}    timeouts: {connectMs: 2000, requestMs: 8000}\n`);
    const error = (() => {
      try {
        loadConfig(env.location);
        return undefined;
      } catch (thrown) {
        return thrown as ConfigError;
      }
    })();
    t.match(error?.problems, [
      {
        file: /barcode\.yaml$/,
        path: 'claimTimeoutMs',
        message:
          '60000 is shorter than a claim must hold: up to 6 calls to ERP system "S4H" of up to 10000 ms each (its timeouts.connectMs + timeouts.requestMs), and 60000 ms more; set it to 120000 or more, or shorten the system\'s time-outs',
      },
    ]);
    t.equal(error?.problems.length, 1, 'the link and workflow tasks keep the default, 15 minutes');
  },
);

t.test(
  'a claim taken over while SAP turned its call away: released by the run that holds it, not this one',
  async (t) => {
    const { env, uid, report } = await whileSending(t, (env, uid) => {
      edit(env, uid, { 'erpTaskStatus:claimedBy': 'a-later-run/1' });
      env.erp.faults.add({ functionName: 'ARCHIV_PROCESS_RFCINPUT', status: 503 });
    });
    t.match(report.tasks.workflow.documents, [{ uid, result: 'SKIPPED' }]);
    t.equal(env.props(uid)['erpTaskStatus:claimedBy'], 'a-later-run/1');
  },
);

t.test('a claim taken over while SAP refused its call: the failure is not written over the other run', async (t) => {
  const { env, uid, report } = await whileSending(t, (env, uid) => {
    edit(env, uid, { 'erpTaskStatus:claimedBy': 'a-later-run/1' });
    env.erp.faults.add({
      functionName: 'ARCHIV_PROCESS_RFCINPUT',
      status: 500,
      headers: { 'content-type': 'text/xml; charset=utf-8' },
      body: exceptionXml('ARCHIV_PROCESS_RFCINPUT', { name: 'NO_WORKITEM_CREATED', text: 'No work item created' }),
    });
  });
  t.match(report.tasks.workflow.documents, [{ uid, result: 'SKIPPED' }]);
  t.same(
    [env.props(uid)['erpTaskStatus:status'], env.props(uid)['erpTaskStatus:claimedBy']],
    ['IN_PROGRESS', 'a-later-run/1'],
  );
});

t.test(
  "a crashed run's workflow start whose values no longer map goes to an operator with the general advice",
  async (t) => {
    const env = await sandboxEnv(t);
    const uid = await env.upload('ERP/Workflow', 'approval.pdf');
    await env.job({ task: 'link' });
    // A run died during its call; a user has since put a value too long for its field.
    env.fill(uid, {
      'erpTaskStatus:status': 'IN_PROGRESS',
      'erpTaskStatus:claimedBy': 'a-dead-run/7',
      'erpTaskStatus:claimExpires': '2000-01-01T00:00:00.000Z',
      'erpStartWorkflow:erpArchiveObject': 'MUCH-TOO-LONG-A-TYPE',
    });
    const report = await workflow(env);
    t.same(report.tasks.workflow.counts, { FAILED: 1 });
    t.equal(
      env.props(uid)['erpTaskStatus:message'],
      `run a-dead-run was interrupted while sending this document and SAP may have it already: check in SAP, then \`connect2erp retry --doc ${uid}\` to send it again`,
    );
  },
);

t.test(
  'an outcome that meets a change at every one of its three writes is left as it is, the document still claimed',
  async (t) => {
    const env = await sandboxEnv(t);
    const uid = await env.upload('ERP/Workflow', 'approval.pdf');
    await env.job({ task: 'link' });
    // The claim goes through; every write of the outcome meets a 409, and the document is still this claim's.
    env.sandbox.faults.add({
      method: 'PUT',
      path: `/id/${uid}`,
      skip: 1,
      times: 3,
      status: 409,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ 'entity-type': 'exception', status: 409, message: `${uid}, Invalid change token` }),
    });
    const report = await workflow(env);
    t.match(report.tasks.workflow.documents, [{ uid, result: 'SKIPPED', message: /changed by a user or another run/ }]);
    t.equal(env.props(uid)['erpTaskStatus:status'], 'IN_PROGRESS', 'a later run takes it over once its claim expires');
    t.equal(env.erp.tables.inbox.length, 1);
  },
);
