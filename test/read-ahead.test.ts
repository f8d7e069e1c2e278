import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { sandboxEnv } from './helpers/env.js';
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
