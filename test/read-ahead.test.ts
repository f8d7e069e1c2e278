import t from 'tap';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { until } from './helpers/until.js';
import { parse, stringify } from 'yaml';
import { quietLog, sandboxEnv } from './helpers/env.js';
import { erpSchema } from '../src/config/erp-schema.js';
import { ErpSandbox } from '../sandbox/erp/server.js';
import { createLogger } from '../src/log.js';
import { runJob } from '../src/job/run.js';
import type { StoredDoc } from '../sandbox/repository/store.js';

t.setTimeout(120_000);

t.test(
  'one knob: every call SAP agreed to is kept busy whatever the page size, and no more documents are read ahead than the calls need',
  async (t) => {
    const env = await sandboxEnv(t);
    const erpYaml = join(env.location.configDir, 'erpHttp.yaml');
    writeFileSync(erpYaml, readFileSync(erpYaml, 'utf8').replace('maxConcurrentCalls: 8', 'maxConcurrentCalls: 16'));
    const workflowYaml = join(env.location.jobsDir, 'workflow.yaml');
    writeFileSync(workflowYaml, readFileSync(workflowYaml, 'utf8').replace('batchSize: 50', 'batchSize: 5'));
    const uids = await Promise.all(
      Array.from({ length: 120 }, (_, i) => env.upload('ERP/Workflow', `approval-${i}.pdf`)),
    );
    await env.job({ task: 'link' }); // the intake makes them READY
    env.sandbox.index.catchUp();

    const lines: Array<Record<string, unknown>> = [];
    const stream = new PassThrough();
    stream.on('data', (chunk: Buffer) => lines.push(JSON.parse(String(chunk)) as Record<string, unknown>));
    env.erp.faults.hold(); // SAP has the calls and answers none: the run stays where the limits put it
    const stop = new AbortController();
    const run = runJob(
      { location: env.location, dryRun: false, task: 'workflow', stop: stop.signal },
      createLogger({ json: true, stream, level: 'warn' }),
    );
    await env.erp.faults.whenHeld(16); // pages of 5 documents: more than three pages' calls at once
    stop.abort('SIGTERM');
    env.erp.faults.release();
    const report = await run;

    const counts = report.tasks.workflow.counts;
    t.equal(counts.DONE, 16, 'the 16 calls under way finish');
    t.ok(
      (counts.RELEASED ?? 0) <= 15 + 5 + 5,
      `${counts.RELEASED} waited for a call slot unclaimed: fewer than the slots and the page that passed the mark, and the page read ahead`,
    );
    const untouched = uids.filter(
      (uid) => (env.sandbox.store.get(uid) as StoredDoc).properties['erpTaskStatus:status'] === 'READY',
    );
    t.equal(untouched.length, 120 - 16, 'nothing was claimed but the calls that went out');
    t.equal(env.erp.tables.inbox.length, 16);
    t.match(
      lines.find((line) => line.message === 'configuration advice' && line.key === 'batchSize'),
      {
        level: 'warn',
        file: workflowYaml,
        advice: /^pages of 5 documents keep the 16 calls of ERP system "S4H" busy only while/,
      },
      'the run says that pages of 5 hold 16 calls back when the repository is slow',
    );
  },
);

t.test(
  "a slow ERP system does not hold up a task's documents for another: its calls beyond its slots and a page wait for the next run",
  async (t) => {
    const env = await sandboxEnv(t);
    const slow = new ErpSandbox(); // a second SAP system, which takes its calls and does not answer
    const slowUrl = await slow.start();
    t.teardown(() => slow.stop());
    const erpYaml = join(env.location.configDir, 'erpHttp.yaml');
    const [system] = erpSchema.parse(parse(readFileSync(erpYaml, 'utf8'))).systems;
    writeFileSync(
      erpYaml,
      stringify({
        systems: [
          { ...system, rest: undefined, rfc: { ...system.rfc, auth: { username: 'CONNECTOR', password: 'sandbox' } } },
          {
            ...system,
            name: 'ECC',
            maxConcurrentCalls: 2,
            // The test holds ECC's calls: they must not end by a time-out however slow the machine is.
            timeouts: { ...system.timeouts, requestMs: 600_000 },
            rest: undefined,
            rfc: {
              ...system.rfc,
              url: `${slowUrl}/sap/bc/soap/rfc`,
              auth: { username: 'CONNECTOR', password: 'sandbox' },
            },
          },
        ],
      }),
    );
    // A claim must outlast its calls: those to ECC may take ten minutes each.
    for (const task of ['link', 'barcode', 'workflow'])
      appendFileSync(join(env.location.jobsDir, `${task}.yaml`), 'claimTimeoutMs: 5000000\n');
    const workflowYaml = join(env.location.jobsDir, 'workflow.yaml');
    writeFileSync(workflowYaml, readFileSync(workflowYaml, 'utf8').replace('batchSize: 50', 'batchSize: 5'));
    const uids = await Promise.all(
      Array.from({ length: 60 }, (_, i) => env.upload('ERP/Workflow', `approval-${i}.pdf`)),
    );
    await env.job({ task: 'link' }); // the intake makes them READY, for S4H
    // Every other document in uuid order, the order the task's pages come in: each page has documents
    // of both systems. (A task meets a system on its pages: first pages of ECC alone would hold the
    // reading until ECC freed a slot, as nothing yet says S4H has room.)
    const toEcc = [...uids].sort().filter((_, i) => i % 2 === 1);
    for (const uid of toEcc) env.fill(uid, { 'erpHttpContent:source': 'ECC' });
    env.sandbox.index.catchUp();

    slow.faults.hold();
    const stop = new AbortController();
    const run = runJob({ location: env.location, dryRun: false, task: 'workflow', stop: stop.signal }, quietLog);
    await until(() => env.erp.tables.inbox.length === 30, 'every S4H document is in S4H', 60_000);
    stop.abort('SIGTERM');
    slow.faults.release();
    const report = await run;

    t.equal(env.erp.tables.inbox.length, 30, 'S4H got all its documents while ECC held its calls');
    t.equal(slow.tables.inbox.length, 2, 'ECC got the 2 calls it takes at once');
    const ecc = report.tasks.workflow.documents.filter((r) => toEcc.includes(r.uid));
    const left = ecc.filter((r) =>
      /^left for the next run: ERP system ECC has more calls waiting/.test(r.message ?? ''),
    );
    t.ok(left.length > 0, `${left.length} ECC documents left for the next run, unclaimed`);
    t.ok(
      ecc.filter((r) => r.result === 'RELEASED').length - left.length <= 2 + 5,
      'at most its slots and a page waited for ECC when the run stopped',
    );
    const ready = toEcc.filter(
      (uid) => (env.sandbox.store.get(uid) as StoredDoc).properties['erpTaskStatus:status'] === 'READY',
    );
    t.equal(ready.length, 30 - 2, 'every ECC document but the two sent is as the intake left it, for the next run');
  },
);

t.test(
  "each pod of the migration Job warns when the pods' calls exceed what SAP agreed, whatever its task",
  async (t) => {
    const env = await sandboxEnv(t);
    process.env.CONNECT2ERP_PODS = '4'; // as the Job sets it, = its parallelism
    t.teardown(() => delete process.env.CONNECT2ERP_PODS);
    const lines: Array<Record<string, unknown>> = [];
    const stream = new PassThrough();
    stream.on('data', (chunk: Buffer) => lines.push(JSON.parse(String(chunk)) as Record<string, unknown>));
    const report = await runJob(
      { location: env.location, dryRun: true, task: 'workflow' },
      createLogger({ json: true, stream, level: 'warn' }),
    );
    t.equal(report.exitCode, 0, 'a warning stops nothing');
    t.match(
      lines.filter((line) => line.message === 'configuration advice'),
      [
        {
          level: 'warn',
          file: join(env.location.configDir, 'erpHttp.yaml'),
          key: 'systems.0.maxConcurrentCalls',
          advice:
            /^4 pods at once × 8 calls make 32 calls in flight to ERP system "S4H", more than the 8 its SAP team agreed to/,
        },
      ],
      'told by a run of one task: it concerns every task of the deployment',
    );
  },
);
