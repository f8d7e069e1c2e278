import t, { type Test } from 'tap';
import { getEventListeners } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { until } from './helpers/until.js';
import { sandboxEnv, type Env } from './helpers/env.js';
import { startCli, type Running } from './helpers/run-cli.js';
import { type StoredDoc } from '../sandbox/repository/store.js';
import type { RunReport } from '../src/job/report/report.js';
import { NEVER, StopAwareQueue, withinGrace } from '../src/stop.js';
import { NotSentError } from '../common/errors.js';

/** Signals, deadlines and overlapping runs, each with real processes against the sandboxes. */

const docs = (env: Env, uids: string[]) => uids.map((uid) => env.sandbox.store.get(uid) as StoredDoc);
const statuses = (env: Env, uids: string[]) => docs(env, uids).map((d) => String(d.properties['erpTaskStatus:status']));
const count = (values: string[], value: string) => values.filter((v) => v === value).length;

// Whole runs in child processes, several of them over backlogs of 120: 40 s on an idle machine, a
// time-out of several times that for a busy one.
t.setTimeout(360_000);
const uploadMany = (env: Env, folder: string, prefix: string, n: number) =>
  Promise.all(Array.from({ length: n }, (_, i) => env.upload(folder, `${prefix}-${i}.pdf`)));

function runProcess(env: Env, args: string[]): Running {
  env.sandbox.index.catchUp();
  return startCli(['run', ...args, '--config', env.location.configDir], { CONNECT2ERP_LOG_LEVEL: 'info' });
}

const readReport = (path: string): RunReport => JSON.parse(readFileSync(path, 'utf8')) as RunReport;

/** One work item per document, never two: the workflow start cannot be looked up in SAP. */
function assertOneWorkItemEach(t: Test, env: Env, uids: string[]): void {
  const perDoc = new Map<string, number>();
  for (const item of env.erp.tables.inbox) perDoc.set(item.ARC_DOC_ID, (perDoc.get(item.ARC_DOC_ID) ?? 0) + 1);
  t.equal(env.erp.tables.inbox.length, perDoc.size, 'no document has two work items');
  t.ok(
    uids.every((uid) => perDoc.get(uid) === 1),
    `each of the ${uids.length} documents has its one work item`,
  );
}

t.test(
  'SIGTERM: calls under way finish, claimed documents not yet sent go back to READY, report written, exit 3',
  async (t) => {
    const env = await sandboxEnv(t);
    const uids = await uploadMany(env, 'ERP/Workflow', 'approval', 30);
    env.erp.faults.latencyMs = 200;
    const dir = env.dir;
    const run = runProcess(env, [
      '--task',
      'workflow',
      '--report',
      join(dir, 'report.json'),
      '--report-html',
      join(dir, 'report.html'),
    ]);
    await until(() => env.erp.tables.inbox.length >= 4, 'SAP has its first work items');
    run.child.kill('SIGTERM');
    const { code, stderr, stdout } = await run.exited;

    t.equal(code, 3, 'exit code 3: interrupted');
    const report = readReport(join(dir, 'report.json'));
    t.same(
      report.interrupted,
      { reason: 'SIGTERM', graceExpired: false, leftClaimed: [] },
      'everything under way finished within the grace period',
    );
    t.equal(report.exitCode, 3);
    const counts = report.tasks.workflow.counts;
    t.ok(counts.DONE >= 4 && counts.RELEASED > 0, `some done (${counts.DONE}), the rest released (${counts.RELEASED})`);
    t.equal(counts.DONE + counts.RELEASED, 30, 'every claimed document is accounted for');
    const now = statuses(env, uids);
    t.equal(count(now, 'IN_PROGRESS'), 0, 'no claim is left behind');
    t.equal(count(now, 'DONE'), counts.DONE, 'DONE in the repository as in the report');
    t.equal(count(now, 'READY'), counts.RELEASED, 'released documents are READY again');
    t.equal(env.erp.tables.inbox.length, counts.DONE, 'only the documents reported DONE reached SAP');
    t.match(stderr, /"message":"run stopping".*"reason":"SIGTERM"/, 'the stop is logged');
    t.match(stdout, /interrupted \(SIGTERM\): work under way finished, the rest is left for the next run/);
    t.match(
      stdout,
      /\ntask workflow: stopped early \(SIGTERM\); the rest of its backlog waits for the next run; \d+ (DONE|RELEASED), \d+ (DONE|RELEASED)\n/,
      'the task says it was cut short, not "nothing to do"',
    );
    t.match(
      readFileSync(join(dir, 'report.html'), 'utf8'),
      '<tr><td>task workflow</td><td>stopped early (SIGTERM); the rest of its backlog waits for the next run</td>',
    );
    t.match(readFileSync(join(dir, 'report.html'), 'utf8'), /3 \(interrupted\)/, 'the HTML report is written too');

    env.erp.faults.latencyMs = 0;
    const next = await env.job({ task: 'workflow' });
    t.equal(next.tasks.workflow.counts.DONE, counts.RELEASED, 'the next run sends the released ones');
    assertOneWorkItemEach(t, env, uids);
  },
);

t.test(
  'grace period over: the run exits at once, listing the calls still in flight, and a later run takes them over',
  async (t) => {
    const env = await sandboxEnv(t);
    const uids = await uploadMany(env, 'ERP/Invoices', 'invoice', 16);
    await env.job({ task: 'link' });
    uids.forEach((uid, i) => env.fill(uid, { 'erpCreateALDocument:erpObjectId': `INV-${i}` }));
    env.erp.faults.hold(); // SAP answers none of the calls: they are still under way when the grace period ends
    const run = runProcess(env, ['--task', 'link', '--grace', '500ms', '--report', join(env.dir, 'report.json')]);
    await env.erp.faults.whenHeld(8);
    await until(() => count(statuses(env, uids), 'IN_PROGRESS') === 16, 'the next 8 claimed ahead');
    await sleep(100);
    t.equal(
      count(statuses(env, uids), 'IN_PROGRESS'),
      16,
      'a link is looked up before it is sent again: the calls out (maxConcurrentCalls 8) and as many claimed ahead of a slot, no more',
    );
    run.child.kill('SIGTERM');
    await run.logged(/"message":"run stopping"/);
    run.child.kill('SIGTERM');
    const { code, stderr } = await run.exited;

    t.equal(code, 3, 'ends by itself while SAP still holds its calls');
    t.match(
      stderr,
      /"message":"already stopping".*"signal":"SIGTERM"/,
      'a second signal does not cut the grace period short',
    );
    const report = readReport(join(env.dir, 'report.json'));
    t.equal(report.interrupted?.graceExpired, true);
    const left = report.interrupted?.leftClaimed ?? [];
    t.equal(left.length, 8, 'the calls in flight stay claimed');
    t.same(
      statuses(
        env,
        left.map((d) => d.uid),
      ),
      Array(8).fill('IN_PROGRESS'),
    );
    t.same(report.tasks.link.counts, { RELEASED: 8 }, 'what was settled before the grace period ran out is counted');
    t.equal(
      count(statuses(env, uids), 'READY'),
      8,
      'the 8 claimed ahead of a slot were released at the stop: READY for the next run, no attempt charged',
    );

    env.erp.faults.release(); // SAP does the held work after all; its answers go nowhere
    const later = new Date(Date.now() + 3_600_000); // the claims have expired
    const next = await env.job({ task: 'link', observer: { now: () => later } });
    t.equal(next.tasks.link.counts.DONE, 16);
    t.equal(env.erp.tables.links.length, 16, 'one link per invoice: the taken-over ones are looked up first');
    t.equal(new Set(env.erp.tables.links.map((l) => l.ARC_DOC_ID)).size, 16);
  },
);

t.test('--max-duration stops a run like SIGTERM does', async (t) => {
  const env = await sandboxEnv(t);
  const uids = await uploadMany(env, 'ERP/Workflow', 'approval', 16);
  await env.job({ task: 'link' }); // the intake makes them READY
  // SAP holds its answers: the backlog is still under way when the deadline comes, however fast the
  // machine. The deadline only has to come after the run's first eight calls, a few requests in.
  env.erp.faults.hold();
  const run = runProcess(env, ['--task', 'workflow', '--max-duration', '3s', '--report', join(env.dir, 'report.json')]);
  await env.erp.faults.whenHeld(8);
  t.equal(
    count(statuses(env, uids), 'IN_PROGRESS'),
    8,
    'a workflow start cannot be looked up: claimed at the pace of sending, only the calls out (maxConcurrentCalls 8)',
  );
  await run.logged(/"message":"run stopping".*"reason":"--max-duration"/);
  env.erp.faults.release();
  const { code, stdout } = await run.exited;
  t.equal(code, 3);
  const report = readReport(join(env.dir, 'report.json'));
  t.equal(report.interrupted?.reason, '--max-duration');
  t.match(stdout, /interrupted \(--max-duration\)/);
  t.match(
    stdout,
    /\ntask workflow: stopped early \(--max-duration\); the rest of its backlog waits for the next run; 8 (DONE|RELEASED), 8 (DONE|RELEASED)\n/,
    'the summary says the task was cut short, and why',
  );
  t.same(
    report.tasks.workflow.counts,
    { DONE: 8, RELEASED: 8 },
    'the 8 calls under way finish, the 8 waiting are released',
  );
  t.equal(count(statuses(env, uids), 'IN_PROGRESS'), 0);
  t.equal(env.erp.tables.inbox.length, 8);
});

t.test('a bad duration is a configuration error', async (t) => {
  for (const value of ['1500', 'soon', '0s']) {
    const { code, stderr } = await startCli(['run', '--max-duration', value]).exited;
    t.equal(code, 2, value);
    t.match(stderr, `command line: --max-duration: "${value}" is not a duration such as 90s, 25m or 1h`);
  }
});

t.test(
  'two runs at once on one backlog (two pods): each document labelled once, one folder, one work item',
  async (t) => {
    const env = await sandboxEnv(t);
    // A backlog an earlier run labelled READY and the index has: both runs' searches find it.
    const approvals = await uploadMany(env, 'ERP/Workflow', 'approval', 120);
    await env.job({ task: 'link' });
    writeFileSync(
      join(env.location.jobsDir, 'link.yaml'),
      readFileSync(join(env.location.jobsDir, 'link.yaml'), 'utf8').replace('enabled: true', 'enabled: false'),
    );
    const invoices = await uploadMany(env, 'ERP/Invoices', 'invoice', 30);
    env.sandbox.faults.latencyMs = 5;
    env.erp.faults.latencyMs = 100; // 120 work items, 8 at a time (maxConcurrentCalls): 1.5 s for one run alone
    // SAP holds every call until both runs have their 8 under way (a run alone has at most 8), so
    // they overlap however late the second process starts on a busy machine.
    env.erp.faults.hold();
    const dir = env.dir;
    const first = runProcess(env, ['--report', join(dir, 'a.json')]);
    const second = runProcess(env, ['--report', join(dir, 'b.json')]);
    await env.erp.faults.whenHeld(16);
    env.erp.faults.release();
    const [a, b] = await Promise.all([first.exited, second.exited]);
    t.same([a.code, b.code], [0, 0], 'both runs succeed: a document the other run has is not a failure');

    const reports = [readReport(join(dir, 'a.json')), readReport(join(dir, 'b.json'))];
    const done = reports.map((r) => r.tasks.workflow.counts.DONE ?? 0);
    t.ok(done[0] > 0 && done[1] > 0, `the runs really overlapped and shared the work (${done[0]} + ${done[1]})`);
    t.equal(done[0] + done[1], 120, 'every document is processed by exactly one of them');
    assertOneWorkItemEach(t, env, approvals);

    const labelled = reports.map(
      (r) => r.intake.documents.filter((d) => d.result === 'labelled' && invoices.includes(d.uid)).length,
    );
    t.equal(labelled[0] + labelled[1], 30, 'each invoice labelled by exactly one run');
    for (const uid of invoices) {
      const folders = [...env.sandbox.store.all()].filter(
        (d) => d.type === 'Folder' && d.properties['dc:source'] === uid,
      );
      if (folders.length !== 1) t.fail(`invoice ${uid} has ${folders.length} archive-link folders`);
    }
    for (const d of docs(env, invoices)) {
      const name = d.path.split('/').at(-1)?.replace('.pdf', '');
      if (!d.path.endsWith(`/${name}/${name}.pdf`) || d.properties['erpTaskStatus:claimedBy'] != null)
        t.fail(`${d.path}: claim ${String(d.properties['erpTaskStatus:claimedBy'])}`);
    }
  },
);

t.test('a stop while the run is claiming: the rest of the page is not claimed', async (t) => {
  const env = await sandboxEnv(t);
  const uids = await uploadMany(env, 'ERP/Workflow', 'approval', 20);
  await env.job({ task: 'link' }); // the intake makes them READY
  env.sandbox.faults.latencyMs = 30;
  const stop = new AbortController();
  const running = env.job({ task: 'workflow', stop: stop.signal });
  await until(() => count(statuses(env, uids), 'IN_PROGRESS') > 0, 'the first claim');
  stop.abort('test');
  const report = await running;
  t.equal(report.interrupted?.reason, 'test');
  t.equal(report.exitCode, 3);
  const now = statuses(env, uids);
  t.equal(count(now, 'IN_PROGRESS'), 0);
  t.ok(count(now, 'READY') > 0, `unclaimed or released: ${count(now, 'READY')} of 20 are READY for the next run`);
  t.equal(env.erp.tables.inbox.length, count(now, 'DONE'));
});

t.test(
  'the ERP concurrency limit: once stopped, waiting calls are refused at once and later ones at the door; calls under way finish',
  async (t) => {
    const stop = new AbortController();
    const limit = new StopAwareQueue(1, stop.signal);
    const underWay = limit.run('first', () => sleep(50).then(() => 'answered'));
    const waiting = limit.run('second', async () => 'sent');
    await sleep(5); // the first is under way, the second waits for its turn
    stop.abort('SIGTERM');
    await t.rejects(waiting, {
      name: 'NotSentError',
      message: 'second: not sent, the run is stopping (SIGTERM)',
      target: 'second',
      transient: true,
    });
    await t.rejects(
      limit.run('third', async () => 'sent'),
      NotSentError,
    );
    t.equal(await underWay, 'answered');
    t.equal(
      await withinGrace(new Promise(() => undefined), stop.signal, 20),
      false,
      'grace counted from a stop that came before',
    );
    t.equal(await withinGrace(sleep(5), new AbortController().signal, 20), true, 'work that ends needs no stop');
  },
);

t.test(
  'queues made without a stop leave nothing on the process-wide NEVER: none kept alive, no listener-leak warning',
  async (t) => {
    const before = getEventListeners(NEVER, 'abort').length;
    const queues = Array.from({ length: 20 }, () => new StopAwareQueue(2, NEVER));
    t.same(await Promise.all(queues.map((queue, i) => queue.run(`call ${i}`, async () => i))), [...Array(20).keys()]);
    t.equal(getEventListeners(NEVER, 'abort').length, before, 'no abort listener added to NEVER');
  },
);
