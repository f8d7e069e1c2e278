import t from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sandboxEnv, type Env } from './helpers/env.js';
import { CHILD_EXEC_ARGV, CLI } from './helpers/run-cli.js';

// Three runs in processes of their own, killed on purpose: 23 s on an idle machine, a time-out of
// several times that for a busy one.
t.setTimeout(300_000);

/** Crashes and a failing ERP: whatever happens, SAP gets each link, bar code and work item once. */
const intake = (env: Env) => env.job({ task: 'link' });

/** Run one task in its own process and SIGKILL it as soon as SAP has the work, before its status write lands. */
async function killAfterErpCall(env: Env, task: string, uid: string, landed: () => boolean): Promise<void> {
  // Claim and status write of this document each take 1.5 s: the kill falls inside the second.
  env.sandbox.faults.add({ method: 'PUT', path: `/id/${uid}`, delayMs: 1500, times: 2 });
  const child = spawn(
    process.execPath,
    [...CHILD_EXEC_ARGV, CLI, 'run', '--task', task, '--config', env.location.configDir],
    {
      env: { ...process.env, NUXEO_PASSWORD: 'Administrator', SAP_PASSWORD: 'sandbox' },
      stdio: 'ignore',
    },
  );
  const exited = once(child, 'exit');
  while (!landed()) await sleep(10);
  child.kill('SIGKILL');
  await exited;
}

t.test(
  'a run killed between the ERP call and the status write: the next run creates no second link, bar code row or work item',
  async (t) => {
    // The link and the bar code are looked up; the work item cannot be: an operator decides.
    const env = await sandboxEnv(t);
    const invoice = await env.upload('ERP/Invoices', 'invoice.pdf');
    const scan = await env.upload('ERP/Barcode', 'scan.pdf');
    const approval = await env.upload('ERP/Workflow', 'approval.pdf');
    await intake(env);
    env.fill(invoice, { 'erpCreateALDocument:erpObjectId': '4711' });
    env.fill(scan, { 'erpBarcode:barcode': 'BC-9' });

    await killAfterErpCall(env, 'link', invoice, () => env.erp.tables.links.length > 0);
    await killAfterErpCall(env, 'barcode', scan, () => env.erp.tables.barcodes.length > 0);
    await killAfterErpCall(env, 'workflow', approval, () => env.erp.tables.inbox.length > 0);
    t.same(
      [invoice, scan, approval].map((uid) => env.props(uid)['erpTaskStatus:status']),
      ['IN_PROGRESS', 'IN_PROGRESS', 'IN_PROGRESS'],
      'the killed runs left their claims',
    );

    const later = new Date(Date.now() + 3_600_000); // the claims have expired
    const next = await env.job({ observer: { now: () => later } });
    t.same(next.tasks.link.counts, { DONE: 1 }, 'the link is found in SAP and counts as done');
    t.same(next.tasks.barcode.counts, { DONE: 1 }, 'the bar code is found in BDS_BAR_EX and counts as done');
    t.same(next.tasks.workflow.counts, { FAILED: 1 }, 'the work item cannot be looked up: an operator decides');
    t.equal(env.erp.tables.links.length, 1, 'one link');
    t.equal(env.erp.tables.barcodes.length, 1, 'one bar code row');
    t.equal(env.erp.tables.inbox.length, 1, 'one work item');
    t.match(
      env.props(approval)['erpTaskStatus:message'],
      /^run [0-9a-f-]+ was interrupted while sending this document and SAP may have it already: check in SAP transaction SWI1 \(work items by date\) or the inbox of the agents of document type ZINVWF \(SBWP\): a work item for document [0-9a-f-]+, then `connect2erp retry --doc /,
    );
    await env.job({ observer: { now: () => later } });
    t.equal(env.erp.tables.inbox.length, 1, 'and no later run sends it by itself');
  },
);

t.test(
  'SAP failing at first (503, time-outs, dropped connections): the backlog ends DONE with nothing twice, and only the answers lost are charged',
  async (t) => {
    const env = await sandboxEnv(t);
    const erpYaml = join(env.location.configDir, 'erpHttp.yaml');
    writeFileSync(erpYaml, `${readFileSync(erpYaml, 'utf8')}    timeouts: {requestMs: 300}\n`);
    for (const task of ['link', 'barcode']) {
      const settings = `name: ${task}\nuseCase: ${task}\nfunction: RFC\nschedule: "* * * * *"\nattempts: 20\nbatchSize: 5\nbackoff: {initialMs: 1, factor: 1}\n`;
      writeFileSync(join(env.location.jobsDir, `${task}.yaml`), settings);
    }
    const invoices = await Promise.all(
      Array.from({ length: 12 }, (_, i) => env.upload('ERP/Invoices', `invoice-${i}.pdf`)),
    );
    const scans = await Promise.all(Array.from({ length: 12 }, (_, i) => env.upload('ERP/Barcode', `scan-${i}.pdf`)));
    await intake(env);
    invoices.forEach((uid, i) => env.fill(uid, { 'erpCreateALDocument:erpObjectId': `INV-${i}` }));
    scans.forEach((uid, i) => env.fill(uid, { 'erpBarcode:barcode': `BC-${i}` }));
    const faults = env.erp.faults;
    // SAP does not take these: the system's, no attempt charged.
    faults.add({ functionName: 'ARCHIV_CONNECTION_INSERT', status: 503, times: 2 });
    faults.add({ functionName: 'BAPI_BARCODE_SENDLIST', status: 503, times: 2 });
    // These leave and no answer comes back: charged, and SAP is asked at the next attempt.
    faults.add({ functionName: 'ARCHIV_CONNECTION_INSERT', drop: true, times: 2 });
    // SAP links the document but the answer comes too late (undici's time-outs tick every half second or
    // so: two seconds is late for 300 ms whatever the tick): the lookup of the next attempt finds it.
    faults.add({ functionName: 'ARCHIV_CONNECTION_INSERT', delayMs: 2000, handleAfterDisconnect: true, times: 2 });
    faults.add({ functionName: 'BAPI_BARCODE_SENDLIST', loseAnswer: true });

    let runs = 0;
    for (; runs < 15; runs++) {
      const report = await env.run();
      t.same(report.problems, [], 'the configuration is valid');
      if ([...invoices, ...scans].every((uid) => env.props(uid)['erpTaskStatus:status'] === 'DONE')) break;
      await sleep(5);
    }
    t.ok(runs < 15, `every document DONE after ${runs + 1} runs`);
    t.equal(new Set(env.erp.tables.links.map((l) => l.OBJECT_ID)).size, 12);
    t.equal(env.erp.tables.links.length, 12, 'no link twice');
    t.equal(env.erp.tables.barcodes.length, 12, 'no bar code row twice');
    const attempts = [...invoices, ...scans].reduce(
      (sum, uid) => sum + Number(env.props(uid)['erpTaskStatus:attempts'] ?? 0),
      0,
    );
    t.ok(attempts >= 4 + 1, `the answers lost are charged: ${attempts} attempts`);
    t.ok(attempts <= 4 + 5, 'the 503s are not: at most the lost answers and the list whose answer was lost');
  },
);
