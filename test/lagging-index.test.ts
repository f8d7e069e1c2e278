import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAPPING, quietLog, sandboxEnv, type Env } from './helpers/env.js';
import { runJob } from '../src/job/run.js';
import { NO_BLOBS, type StoredDoc } from '../sandbox/repository/store.js';

// Runs over real HTTP, one of 605 documents: 4 s idle, several times that on a busy machine.
t.setTimeout(120_000);

/**
 * The job against a search index that lags its writes, as Elasticsearch behind a stock Nuxeo:
 * here it never catches up unless the test says so, so every search answers from the state the
 * test chose. A hit that no longer matches is never worked on.
 */

const NEVER_CAUGHT_UP = 3_600_000;
const uploadMany = (env: Env, folder: string, prefix: string, n: number) =>
  Promise.all(Array.from({ length: n }, (_, i) => env.upload(folder, `${prefix}-${i}.pdf`)));
const status = (env: Env, uid: string) => env.props(uid)['erpTaskStatus:status'];
const token = (env: Env, uid: string) => env.sandbox.store.changeToken(env.sandbox.store.get(uid) as StoredDoc);
const run = (env: Env, task?: string) => runJob({ location: env.location, dryRun: false, task }, quietLog);
/** A change the index does not see: straight in the repository, without nx-es-sync. */
const behindTheIndex = (env: Env, uid: string, values: Record<string, unknown>) =>
  env.sandbox.store.update(env.sandbox.actor(), env.sandbox.store.get(uid) as StoredDoc, values, NO_BLOBS, {});

t.test(
  'what a run labels it sends in the same run, though its search cannot see the labels yet; the next run relabels nothing',
  async (t) => {
    const env = await sandboxEnv(t, { sandbox: { repository: { searchLagMs: NEVER_CAUGHT_UP } } });
    const uids = await uploadMany(env, 'ERP/Workflow', 'approval', 4);
    const first = await run(env);
    t.equal(first.intake.counts.labelled, 4);
    t.same(first.tasks.workflow.counts, { DONE: 4 }, 'sent in the same run');
    const tokens = uids.map((uid) => token(env, uid));

    const second = await run(env);
    t.equal(
      second.intake.counts.labelled,
      0,
      'the index still has them unlabelled; the documents it returns are labelled: left alone',
    );
    t.same(
      uids.map((uid) => token(env, uid)),
      tokens,
      'not one of them written again (a relabel would put them back to READY)',
    );
    t.same(
      uids.map((uid) => status(env, uid)),
      ['DONE', 'DONE', 'DONE', 'DONE'],
    );
    t.equal(env.erp.tables.inbox.length, 4);
  },
);

t.test("a task's search returns documents that are done, or claimed by another run: neither is sent", async (t) => {
  const env = await sandboxEnv(t, { sandbox: { repository: { searchLagMs: NEVER_CAUGHT_UP } } });
  const uids = await uploadMany(env, 'ERP/Workflow', 'approval', 4);
  await run(env, 'link'); // the intake alone: the workflow documents are READY
  env.sandbox.index.catchUp(); // the index has them READY, and keeps them so
  t.same((await run(env, 'workflow')).tasks.workflow.counts, { DONE: 4 });
  const [taken] = uids;
  behindTheIndex(env, taken, {
    'erpTaskStatus:status': 'IN_PROGRESS',
    'erpTaskStatus:claimedBy': 'another-run',
    'erpTaskStatus:claimExpires': new Date(Date.now() + 60_000).toISOString(),
  });

  const again = await run(env, 'workflow');
  t.same(
    again.tasks.workflow.counts,
    { CLAIMED_ELSEWHERE: 1 },
    'four READY hits: three are DONE (skipped, nothing to report), one another run holds',
  );
  t.equal(env.erp.tables.inbox.length, 4, 'no second work item');
  t.equal(again.exitCode, 0);
});

t.test('hits of deleted documents are dropped: a short or an empty page is not the end of the backlog', async (t) => {
  const env = await sandboxEnv(t, { sandbox: { repository: { searchLagMs: NEVER_CAUGHT_UP } } });
  const workflowYaml = join(env.location.jobsDir, 'workflow.yaml');
  writeFileSync(workflowYaml, readFileSync(workflowYaml, 'utf8').replace('batchSize: 50', 'batchSize: 2'));
  const uids = await uploadMany(env, 'ERP/Workflow', 'approval', 7);
  await run(env, 'link');
  env.sandbox.index.catchUp();
  // The three first in uuid order go, unseen by the index: the first page of two is empty, the second short.
  const gone = [...uids].sort().slice(0, 3);
  for (const uid of gone) env.sandbox.store.remove(env.sandbox.actor(), env.sandbox.store.get(uid) as StoredDoc);
  const report = await run(env, 'workflow');
  t.same(report.tasks.workflow.counts, { DONE: 4 }, 'the four left are all sent in this run');
  t.equal(env.erp.tables.inbox.length, 4);
});

t.test('a server whose maximum page size is below pageSize: every page is read all the same', async (t) => {
  const env = await sandboxEnv(t, { sandbox: { repository: { maxPageSize: 2 } }, storage: { pageSize: '5' } });
  const uids = await uploadMany(env, 'ERP/Workflow', 'approval', 7);
  const report = await run(env, 'link');
  t.equal(report.intake.counts.labelled, 7, 'the intake reads every page');
  env.sandbox.index.catchUp(); // the next scheduled run
  t.same(
    (await run(env, 'workflow')).tasks.workflow.counts,
    { DONE: 7 },
    "and a task's search (its batch size, 50, is clamped too)",
  );
  t.same(
    uids.map((uid) => status(env, uid)).filter((s) => s !== 'DONE'),
    [],
  );
});

t.test("what the intake labelled is sent in the same run only as the task's systems and filter allow", async (t) => {
  const env = await sandboxEnv(t, { sandbox: { repository: { searchLagMs: NEVER_CAUGHT_UP } } });
  const { jobsDir, configDir } = env.location;
  const edit = (file: string, change: (text: string) => string) =>
    writeFileSync(file, change(readFileSync(file, 'utf8')));
  const workflowYaml = join(jobsDir, 'workflow.yaml');
  const original = readFileSync(workflowYaml, 'utf8');
  edit(
    join(configDir, 'erpHttp.yaml'),
    (text) =>
      `${text}  - name: ECC\n    client: "200"\n    rfc: {url: "http://127.0.0.1:1", auth: {username: U, password: p}}\n`,
  );
  writeFileSync(workflowYaml, `${original}systems: [ECC]\n`);
  await env.upload('ERP/Workflow', 'a.pdf');
  t.same((await run(env)).tasks.workflow.counts, {}, 'a.pdf is for S4H, the task for ECC only');
  writeFileSync(workflowYaml, `${original}filter: "dc:title <> 'b.pdf'"\n`);
  await env.upload('ERP/Workflow', 'b.pdf');
  const c = await env.upload('ERP/Workflow', 'c.pdf');
  t.same(
    (await run(env)).tasks.workflow.counts,
    { DONE: 1 },
    'the filter is asked of the repository: b.pdf is left out',
  );
  t.same(
    env.erp.tables.inbox.map((item) => item.ARC_DOC_ID),
    [c],
  );
});

t.test(
  "the repository refusing the filter's check of what the intake labelled stops the run, naming the search",
  async (t) => {
    const env = await sandboxEnv(t, { sandbox: { repository: { searchLagMs: NEVER_CAUGHT_UP } } });
    const workflowYaml = join(env.location.jobsDir, 'workflow.yaml');
    writeFileSync(workflowYaml, `${readFileSync(workflowYaml, 'utf8')}filter: "dc:title <> 'b.pdf'"\n`);
    await env.upload('ERP/Workflow', 'a.pdf');
    env.sandbox.faults.add({ path: 'FROM+Document+WHERE+ecm%3Auuid+IN', status: 400, body: 'no' });
    const report = await run(env);
    t.equal(report.exitCode, 1);
    t.match(report.failure, /search failed with HTTP 400/);
    t.match(report.intake, { state: 'stopped' });
  },
);

t.test('a task stopped while it sends what the intake labelled claims nothing more', async (t) => {
  const env = await sandboxEnv(t, { sandbox: { repository: { searchLagMs: NEVER_CAUGHT_UP } } });
  const workflowYaml = join(env.location.jobsDir, 'workflow.yaml');
  writeFileSync(workflowYaml, readFileSync(workflowYaml, 'utf8').replace('batchSize: 50', 'batchSize: 1'));
  // One call at a time: the documents are sent one after another, so the stop falls between them.
  const erpYaml = join(env.location.configDir, 'erpHttp.yaml');
  writeFileSync(erpYaml, readFileSync(erpYaml, 'utf8').replace('maxConcurrentCalls: 8', 'maxConcurrentCalls: 1'));
  await uploadMany(env, 'ERP/Workflow', 'approval', 4);
  const stop = new AbortController();
  const report = await runJob(
    {
      location: env.location,
      dryRun: false,
      stop: stop.signal,
      observer: { document: (phase) => phase === 'task workflow' && stop.abort('SIGTERM') },
    },
    quietLog,
  );
  t.match(report.tasks.workflow, { state: 'stopped', reason: 'SIGTERM' });
  t.ok(env.erp.tables.inbox.length < 4, `${env.erp.tables.inbox.length} of 4 sent before the stop, none after`);
});

t.test(
  'a file moved behind the index, out of its mapped folder or into a deeper one, is labelled for where it is, not where the index saw it',
  async (t) => {
    const mapping = JSON.parse(MAPPING) as {
      mapping: Array<Record<string, unknown> & { path: string; properties: Record<string, unknown> }>;
    };
    const workflow = mapping.mapping.find((entry) =>
      entry.path.endsWith('/Workflow'),
    ) as (typeof mapping.mapping)[number];
    mapping.mapping.push({
      ...workflow,
      path: `${workflow.path}/Urgent`,
      properties: { ...workflow.properties, 'erpStartWorkflow:erpObjId': 'APPROVER2' },
    });
    const env = await sandboxEnv(t, {
      sandbox: { repository: { searchLagMs: NEVER_CAUGHT_UP } },
      mapping: JSON.stringify(mapping),
    });
    const store = env.sandbox.store;
    const parent = store.getByPath('/default-domain/workspaces/ERP/Workflow') as StoredDoc;
    const urgent = env.sandbox.index.sync(() =>
      store.create(env.sandbox.actor(), parent, { type: 'Workspace', name: 'Urgent', properties: {} }, NO_BLOBS),
    );
    const moved = await env.upload('ERP/Workflow', 'moved.pdf');
    const away = await env.upload('ERP/Workflow', 'away.pdf');
    store.move(env.sandbox.actor(), store.get(moved) as StoredDoc, urgent);
    store.move(
      env.sandbox.actor(),
      store.get(away) as StoredDoc,
      store.getByPath('/default-domain/workspaces/ERP/Invoices') as StoredDoc,
    );
    const stale = await run(env);
    t.equal(
      stale.intake.counts.labelled,
      0,
      "both come back from the Workflow entry's search, and are under another entry now: left alone",
    );
    env.sandbox.index.catchUp();
    await run(env);
    t.equal(
      env.props(moved)['erpStartWorkflow:erpObjId'],
      'APPROVER2',
      'labelled by the deeper entry, once its search finds it',
    );
    t.ok(
      env.props(away)['erpCreateALDocument:erpObject'] === 'BKPF' &&
        env.props(away)['erpStartWorkflow:erpObjId'] === undefined,
      'and the other as an invoice',
    );
  },
);

t.test(
  'a backlog the index never shows labelled is sent in the same run, the intake labelling no further ahead of the sending than intakeRoundSize and its pages under way',
  async (t) => {
    const env = await sandboxEnv(t, {
      sandbox: { repository: { searchLagMs: NEVER_CAUGHT_UP } },
      storage: { intakeRoundSize: '50', pageSize: '25' },
    });
    const { store } = env.sandbox;
    const parent = store.getByPath('/default-domain/workspaces/ERP/Workflow') as StoredDoc;
    const blob = store.storeBlob(Buffer.from('%PDF-1.4 approval'), 'approval.pdf', 'application/pdf');
    // Uploaded long ago: the index has them unlabelled.
    const uids = env.sandbox.index.sync(() =>
      Array.from(
        { length: 605 },
        (_, i) =>
          store.create(
            env.sandbox.actor(),
            parent,
            { type: 'File', name: `approval-${i}.pdf`, properties: { 'dc:title': `approval-${i}` } },
            () => ({ ...blob, name: `approval-${i}.pdf` }),
          ).uid,
      ),
    );
    let ahead = 0;
    let most = 0;
    env.sandbox.index.catchUp();
    const first = await runJob(
      {
        location: env.location,
        dryRun: false,
        observer: {
          document: (phase) => {
            ahead += phase === 'intake' ? 1 : -1;
            most = Math.max(most, ahead);
          },
        },
      },
      quietLog,
    );
    t.equal(first.intake.counts.labelled, 605);
    t.same(first.tasks.workflow.counts, { DONE: 605 }, 'every document labelled is sent in the same run');
    t.same(
      uids.filter((uid) => status(env, uid) !== 'DONE'),
      [],
    );
    // Two pages are labelled at once, and a page is labelled whole before the intake waits.
    t.ok(most <= 50 + 2 * 25, `at most ${most} labelled and not yet sent at once`);
    t.equal(env.erp.tables.inbox.length, 605);
  },
);
