import t, { type Test } from 'tap';
import fc from 'fast-check';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { quietLog, sandboxEnv, type Env } from './helpers/env.js';
import { addFiles, completeMapping } from './helpers/backlog.js';
import { startCli } from './helpers/run-cli.js';
import { runJob } from '../src/job/run.js';
import { exceptionXml } from '../sandbox/erp/soap-codec.js';
import type { FaultRule } from '../sandbox/faults.js';
import { NO_BLOBS, type StoredDoc } from '../sandbox/repository/store.js';

/**
 * The run's promises, checked on generated cases: page and round sizes, search lag, SAP latency,
 * faults (answers lost, late, dropped, 503s, ABAP dumps), the repository's answers to writes lost,
 * a run killed with SIGKILL, two runs at once, an SAP system down. After runs that complete the
 * work (and an operator who checks SAP for the work items the job could not look up): every
 * document is in SAP exactly once, no link, bar code or Rest upload is FAILED, nothing is left
 * claimed; with a system down, the other systems' documents are all sent in the same run and the
 * down one's wait, none charged.
 * `C2E_MODEL_RUNS` sets the number of cases (CI: the default; `npm run test:long`: thousands).
 */

const RUNS = Number(process.env.C2E_MODEL_RUNS ?? 10);
t.setTimeout(Math.max(300_000, RUNS * 30_000));

const FUNCTIONS = [
  'ARCHIV_CONNECTION_INSERT',
  'BAPI_BARCODE_SENDLIST',
  'ARCHIV_PROCESS_RFCINPUT',
  'AttachmentContentSet',
  'ARCHIV_GET_CONNECTIONS',
  'RFC_READ_TABLE',
  'GetAllOriginals',
] as const;

const fault = fc.record({
  functionName: fc.constantFrom(...FUNCTIONS),
  kind: fc.constantFrom('lose', 'late', 'drop', '503', 'dump'),
  skip: fc.integer({ min: 0, max: 6 }),
});

const scenario = fc.record({
  pageSize: fc.integer({ min: 1, max: 12 }),
  intakeRoundSize: fc.integer({ min: 1, max: 20 }),
  batchSize: fc.integer({ min: 1, max: 10 }),
  searchLagMs: fc.constantFrom(0, 0, 30),
  sapLatencyMs: fc.integer({ min: 0, max: 3 }),
  documents: fc.record({
    link: fc.integer({ min: 0, max: 8 }),
    barcode: fc.integer({ min: 0, max: 8 }),
    workflow: fc.integer({ min: 0, max: 8 }),
    rest: fc.integer({ min: 0, max: 6 }),
  }),
  faults: fc.array(fault, { maxLength: 6 }),
  /** The repository writes (PUTs) whose answers are lost, each after this many others: labels, claims, outcomes. */
  repositoryLost: fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 3 }),
  interference: fc.constantFrom('none', 'overlap', 'crash', 'down'),
  crashAfterCalls: fc.integer({ min: 1, max: 6 }),
});
type Scenario = typeof scenario extends fc.Arbitrary<infer S> ? S : never;

/** A fault as the ERP sandbox takes it: answers too late for the 300 ms the job waits (its time-outs tick every half second or so) are lost too. */
function rule(f: Scenario['faults'][number]): FaultRule {
  const base = { functionName: f.functionName, skip: f.skip };
  if (f.kind === 'lose') return { ...base, loseAnswer: true };
  if (f.kind === 'late') return { ...base, delayMs: 1500, handleAfterDisconnect: true };
  if (f.kind === 'drop') return { ...base, drop: true };
  if (f.kind === '503') return { ...base, status: 503 };
  return {
    ...base,
    status: 500,
    headers: { 'content-type': 'text/xml; charset=utf-8' },
    body: exceptionXml(f.functionName, { name: 'SYSTEM_FAILURE', text: 'Runtime error' }),
  };
}

const DEAD = 'http://127.0.0.1:1';

/** A landscape for one case: the shipped tasks, a Rest link to S4R (the same SAP), the workflow's documents for ECC. */
async function landscape(teardowns: Array<() => Promise<void> | void>, s: Scenario) {
  const mapping = completeMapping((entries) => {
    const invoices = entries.find((entry) => entry.path.endsWith('/Invoices')) as (typeof entries)[number];
    const ecc = (entry: (typeof entries)[number]) =>
      entry.path.endsWith('/Workflow')
        ? { ...entry, properties: { ...entry.properties, 'erpHttpContent:source': 'ECC' } }
        : entry;
    return [
      ...entries.map(ecc),
      {
        ...invoices,
        path: '/default-domain/workspaces/ERP/Attachments',
        properties: { ...invoices.properties, 'erpHttpContent:source': 'S4R' },
      },
    ];
  });
  const fakeTest = { teardown: (fn: () => Promise<void> | void) => teardowns.push(fn) } as unknown as Test;
  const env = await sandboxEnv(fakeTest, {
    mapping,
    sandbox: { repository: { searchLagMs: s.searchLagMs } },
    storage: { pageSize: String(s.pageSize), intakeRoundSize: String(s.intakeRoundSize) },
  });
  const { configDir, jobsDir } = env.location;
  const erpYaml = join(configDir, 'erpHttp.yaml');
  const erp = readFileSync(erpYaml, 'utf8');
  const block = erp.slice(erp.indexOf('  - name: S4H'));
  const live = /url: (http:\/\/[\d.:]+)\/sap/.exec(erp)?.[1] as string;
  const system = (name: string) => `${block.replace('name: S4H', `name: ${name}`)}    timeouts: {requestMs: 300}\n`;
  const write = (ecc: string) =>
    writeFileSync(
      erpYaml,
      `${erp}    timeouts: {requestMs: 300}\n${system('S4R')}${system('ECC').replaceAll(live, ecc)}`,
    );
  write(s.interference === 'down' ? DEAD : live);
  for (const task of ['link', 'barcode', 'workflow']) {
    const file = join(jobsDir, `${task}.yaml`);
    const text = readFileSync(file, 'utf8')
      .replace(/batchSize: \d+/, `batchSize: ${s.batchSize}`)
      .replace(/attempts: \d+/, 'attempts: 30');
    writeFileSync(file, `${text}${task === 'link' ? 'systems: [S4H]\n' : ''}`);
  }
  writeFileSync(
    join(jobsDir, 'link-rest.yaml'),
    `name: link-rest\nuseCase: link\nfunction: Rest\nschedule: "*/5 * * * *"\nsystems: [S4R]\nattempts: 30\nbatchSize: ${s.batchSize}\n`,
  );
  const names = (prefix: string, n: number, extension = '') =>
    Array.from({ length: n }, (_, i) => `${prefix}-${i}${extension}`);
  const docs = {
    link: addFiles(env, 'Invoices', names('INVOICE', s.documents.link, '.pdf')),
    barcode: addFiles(env, 'Barcode', names('BC', s.documents.barcode)),
    workflow: addFiles(env, 'Workflow', names('APPROVAL', s.documents.workflow, '.pdf')),
    rest: addFiles(env, 'Attachments', names('ATTACHMENT', s.documents.rest, '.pdf')),
  };
  return { env, docs, eccBack: () => write(live) };
}

async function run(env: Env, at: number) {
  env.sandbox.index.catchUp();
  const report = await runJob(
    { location: env.location, dryRun: false, observer: { now: () => new Date(at) } },
    quietLog,
  );
  if (report.problems.length > 0) throw new Error(report.problems.join('\n'));
  return report;
}

/** The case's trouble: one run with the faults, two at once, one killed, or one with ECC down. */
async function chaos(env: Env, s: Scenario, docs: Record<string, string[]>): Promise<string | undefined> {
  env.erp.faults.latencyMs = s.sapLatencyMs;
  if (s.interference !== 'down') {
    for (const f of s.faults) env.erp.faults.add(rule(f));
    for (const skip of s.repositoryLost) env.sandbox.faults.add({ method: 'PUT', skip, loseAnswer: true });
  }
  if (s.interference === 'none') await run(env, Date.now());
  if (s.interference === 'overlap') await Promise.all([run(env, Date.now()), run(env, Date.now())]);
  if (s.interference === 'crash') {
    const child = startCli(['run', '--config', env.location.configDir]);
    let calls = 0;
    env.erp.faults.observe = () => {
      if (++calls === s.crashAfterCalls) child.child.kill('SIGKILL');
    };
    await child.exited;
    env.erp.faults.observe = () => undefined;
  }
  if (s.interference !== 'down') return undefined;
  // ECC down: every other system's document is sent in the same run, ECC's wait, none charged.
  const report = await run(env, Date.now());
  const other = [...docs.link, ...docs.barcode, ...docs.rest].filter((uid) => status(env, uid) !== 'DONE');
  const ecc = docs.workflow.filter(
    (uid) => !['READY,0', 'PENDING_INPUT,0'].includes(`${status(env, uid)},${attempts(env, uid)}`),
  );
  if (other.length > 0) return `with ECC down, ${other.length} documents of S4H and S4R were not sent`;
  if (ecc.length > 0) return `with ECC down, ${ecc.length} of its documents were charged or claimed`;
  if (docs.workflow.length > 0 && report.exitCode !== 4) return `with ECC down, the run exited ${report.exitCode}`;
  return undefined;
}

const status = (env: Env, uid: string) => env.props(uid)['erpTaskStatus:status'];
const attempts = (env: Env, uid: string) => env.props(uid)['erpTaskStatus:attempts'];

/** Runs an hour apart (claims expired, back-offs over) until one has nothing to do. */
async function complete(env: Env, from: number): Promise<number> {
  for (let i = 1; i <= 8; i++) {
    const report = await run(env, from + i * 3_600_000);
    const touched = Object.values(report.tasks).reduce((sum, task) => sum + task.documents.length, 0);
    if (touched === 0) return from + i * 3_600_000;
  }
  throw new Error('still sending after 8 runs');
}

/** An operator: a work item the job could not look up is checked in SAP, and put back when SAP does not have it. */
function operator(env: Env, workflow: string[]): void {
  const { store } = env.sandbox;
  for (const uid of workflow.filter((u) => status(env, u) === 'FAILED')) {
    if (env.erp.tables.inbox.some((item) => item.ARC_DOC_ID === uid)) continue;
    env.sandbox.index.sync(() =>
      store.update(
        env.sandbox.actor(),
        store.get(uid) as StoredDoc,
        { 'erpTaskStatus:status': 'READY', 'erpTaskStatus:attempts': 0, 'erpTaskStatus:message': null },
        NO_BLOBS,
      ),
    );
  }
}

/** What must hold once the work is complete: a list of what does not. */
function broken(env: Env, docs: Record<string, string[]>): string[] {
  const problems: string[] = [];
  const { links, barcodes, inbox, attachments } = env.erp.tables;
  const once = (kind: string, uids: string[], keys: string[]) => {
    for (const uid of uids) {
      const n = keys.filter((key) => key === uid).length;
      if (n !== 1) problems.push(`${kind} ${uid} is in SAP ${n} times`);
    }
  };
  once(
    'invoice',
    docs.link,
    links.map((l) => l.ARC_DOC_ID),
  );
  once(
    'scan',
    docs.barcode,
    barcodes.map((b) => b.DOCID),
  );
  once(
    'approval',
    docs.workflow,
    inbox.map((w) => w.ARC_DOC_ID),
  );
  once(
    'upload',
    docs.rest,
    attachments.map((a) => a.FileName.slice(0, 36)),
  );
  for (const uid of [...docs.link, ...docs.barcode, ...docs.rest])
    if (status(env, uid) !== 'DONE')
      problems.push(`${uid} is ${String(status(env, uid))}: ${String(env.props(uid)['erpTaskStatus:message'])}`);
  for (const uid of docs.workflow)
    if (!['DONE', 'FAILED'].includes(status(env, uid) as string))
      problems.push(`approval ${uid} is ${String(status(env, uid))}`);
  return problems;
}

t.test(`${RUNS} generated cases: every document in SAP exactly once, whatever the interleaving`, async (t) => {
  await fc.assert(
    fc.asyncProperty(scenario, async (s) => {
      const teardowns: Array<() => Promise<void> | void> = [];
      try {
        const { env, docs, eccBack } = await landscape(teardowns, s);
        const lanes = await chaos(env, s, docs);
        if (lanes !== undefined) throw new Error(lanes);
        env.erp.faults.clear();
        env.sandbox.faults.clear();
        env.erp.faults.latencyMs = 0;
        eccBack();
        const later = await complete(env, Date.now());
        operator(env, docs.workflow);
        await complete(env, later);
        const problems = broken(env, docs);
        if (problems.length > 0) throw new Error(problems.slice(0, 5).join('\n'));
      } finally {
        for (const teardown of teardowns.reverse()) await teardown();
      }
    }),
    { numRuns: RUNS, endOnFailure: true },
  );
  t.pass(`${RUNS} cases held`);
});
