import t, { type Test } from 'tap';
import { PassThrough } from 'node:stream';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sandboxEnv, type Env } from './helpers/env.js';
import { createLogger } from '../src/log.js';
import { runJob } from '../src/job/run.js';
import { exceptionXml } from '../sandbox/erp/soap-codec.js';

/**
 * Every failure has a scope: an SAP system's outage stops that system's lanes and charges no
 * document an attempt, a function module refused stops its lane, an ABAP dump on one document is
 * that document's; the other systems and tasks go on.
 */

t.setTimeout(120_000);

const uploadMany = (env: Env, folder: string, prefix: string, n: number) =>
  Promise.all(Array.from({ length: n }, (_, i) => env.upload(folder, `${prefix}-${i}.pdf`)));
const statusOf = (env: Env, uid: string) => [
  env.props(uid)['erpTaskStatus:status'],
  env.props(uid)['erpTaskStatus:attempts'],
];
/** Waiting as before the run, or released by it: never charged, never on the way to FAILED. */
const untouched = (env: Env, uid: string) =>
  ['READY,0', 'PENDING_INPUT,0'].includes(statusOf(env, uid).join()) &&
  env.props(uid)['erpTaskStatus:claimedBy'] == null;

/** A run whose log lines are kept, on a clock `hoursLater` ahead of the machine's. */
async function logged(env: Env, options: { task?: string; hoursLater?: number } = {}) {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const later = new Date(Date.now() + (options.hoursLater ?? 0) * 3_600_000);
  env.sandbox.index.catchUp();
  const report = await runJob(
    { location: env.location, dryRun: false, task: options.task, observer: { now: () => later } },
    createLogger({ stream, json: true, level: 'warn' }),
  );
  const lines = text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { level: string; message: string; system?: string; kind?: string });
  return { report, lines };
}

/** erpHttp.yaml's SOAP-RFC address of S4H, changed to `url`; returns the one it had. */
function pointS4hAt(env: Env, url: string): string {
  const file = join(env.location.configDir, 'erpHttp.yaml');
  const text = readFileSync(file, 'utf8');
  const [, before] = /url: (http:\/\/[^\s]+\/sap\/bc\/soap\/rfc)/.exec(text) as RegExpExecArray;
  writeFileSync(file, text.replace(before, url));
  return before;
}

const DEAD = 'http://127.0.0.1:1/sap/bc/soap/rfc';

/** A sandbox with `n` approvals labelled READY for the workflow task, S4H taking `calls` at once. */
async function readyApprovals(t: Test, n: number, calls = 8): Promise<{ env: Env; approvals: string[] }> {
  const env = await sandboxEnv(t);
  if (calls !== 8) callsAtOnce(env, calls);
  const approvals = await uploadMany(env, 'ERP/Workflow', 'approval', n);
  await env.job({ task: 'link' });
  return { env, approvals };
}

/** S4H takes `n` calls at once (erpHttp.yaml's maxConcurrentCalls, 8 as shipped). */
function callsAtOnce(env: Env, n: number): void {
  const file = join(env.location.configDir, 'erpHttp.yaml');
  writeFileSync(file, readFileSync(file, 'utf8').replace('maxConcurrentCalls: 8', `maxConcurrentCalls: ${n}`));
}

t.test(
  'SAP unreachable for three runs: no document charged or moved toward FAILED, each run exits 4 with the outage logged as an error; the first run after SAP is back links each once',
  async (t) => {
    const env = await sandboxEnv(t);
    const invoices = await uploadMany(env, 'ERP/Invoices', 'invoice', 20);
    await env.job({ task: 'link' });
    invoices.forEach((uid, i) => env.fill(uid, { 'erpCreateALDocument:erpObjectId': `INV-${i}` }));
    const live = pointS4hAt(env, DEAD);
    for (const hoursLater of [1, 2, 3]) {
      const { report, lines } = await logged(env, { task: 'link', hoursLater });
      t.equal(report.exitCode, 4, `run ${hoursLater}: exit 4`);
      t.match(report.outages, [{ system: 'S4H', kind: 'unavailable', reason: /ECONNREFUSED/ }]);
      t.ok(
        lines.some((l) => l.level === 'error' && l.message === 'ERP outage' && l.system === 'S4H'),
        'the outage is logged at level error',
      );
      t.same(
        invoices.filter((uid) => !untouched(env, uid)),
        [],
        'every invoice waiting, none claimed, no attempt charged',
      );
      t.ok(report.tasks.link.counts.RELEASED > 0, 'the calls tried are released');
      t.equal(
        (report.tasks.link.counts.RELEASED ?? 0) + (report.tasks.link.counts.DONE ?? 0),
        report.tasks.link.documents.length,
      );
    }
    pointS4hAt(env, live);
    const { report } = await logged(env, { task: 'link', hoursLater: 4 });
    t.equal(report.exitCode, 0);
    t.same(report.tasks.link.counts, { DONE: 20 });
    t.equal(env.erp.tables.links.length, 20);
    t.equal(new Set(env.erp.tables.links.map((l) => l.ARC_DOC_ID)).size, 20, 'each once');
  },
);

t.test(
  'two SAP systems, one unreachable: every document of the other is linked in the same run; the dead one reads nothing once it is known down',
  async (t) => {
    const env = await sandboxEnv(t);
    appendFileSync(
      join(env.location.configDir, 'erpHttp.yaml'),
      `  - name: ECC\n    client: "100"\n    rfc: {url: "${DEAD}", auth: {username: CONNECTOR, password: sandbox}}\n`,
    );
    const invoices = await uploadMany(env, 'ERP/Invoices', 'invoice', 30);
    await env.job({ task: 'link' });
    const toEcc = new Set([...invoices].sort().filter((_, i) => i % 3 === 0));
    invoices.forEach((uid, i) =>
      env.fill(uid, {
        'erpCreateALDocument:erpObjectId': `INV-${i}`,
        ...(toEcc.has(uid) ? { 'erpHttpContent:source': 'ECC' } : {}),
      }),
    );
    const { report, lines } = await logged(env, { task: 'link', hoursLater: 1 });
    t.equal(report.exitCode, 4);
    t.match(report.outages, [{ system: 'ECC', kind: 'unavailable' }]);
    t.same(
      invoices.filter((uid) => !toEcc.has(uid) && env.props(uid)['erpTaskStatus:status'] !== 'DONE'),
      [],
      "S4H's 20 invoices are all linked in the same run",
    );
    t.equal(env.erp.tables.links.length, 20);
    t.same(
      [...toEcc].filter((uid) => !untouched(env, uid)),
      [],
      "ECC's wait, none charged",
    );
    t.ok(lines.some((l) => l.message === 'ERP system unavailable' && l.system === 'ECC'));
  },
);

t.test(
  "a function module SAP refuses the user (S_RFC) stops that task's calls to the system, and the other tasks go on",
  async (t) => {
    const env = await sandboxEnv(t);
    const approvals = await uploadMany(env, 'ERP/Workflow', 'approval', 5);
    const invoices = await uploadMany(env, 'ERP/Invoices', 'invoice', 5);
    await env.job({ task: 'link' });
    invoices.forEach((uid, i) => env.fill(uid, { 'erpCreateALDocument:erpObjectId': `INV-${i}` }));
    env.erp.customizing.users.CONNECTOR.rfc = ['RFC_PING', 'ARCHIV_CONNECTION_INSERT', 'ARCHIV_GET_CONNECTIONS'];
    const { report } = await logged(env, { hoursLater: 1 });
    t.equal(report.exitCode, 2, 'a person must change something');
    t.match(report.outages, [
      {
        system: 'S4H',
        task: 'workflow',
        kind: 'refused',
        reason: /No RFC authorization for function module ARCHIV_PROCESS_RFCINPUT/,
      },
    ]);
    t.same(report.tasks.link.counts, { DONE: 5 }, 'the link task goes on');
    t.match(report.tasks.workflow, { state: 'stopped', reason: /task workflow on ERP system S4H refused/ });
    t.same(
      approvals.filter((uid) => !untouched(env, uid)),
      [],
      'the approvals wait, none charged',
    );
  },
);

const dump = {
  status: 500,
  headers: { 'content-type': 'text/xml; charset=utf-8' },
  body: exceptionXml('ARCHIV_PROCESS_RFCINPUT', { name: 'SYSTEM_FAILURE', text: 'Runtime error CONVT_NO_NUMBER' }),
};

t.test(
  "an ABAP dump on one document: sent alone once more, then that document's own outcome; its neighbours are sent",
  async (t) => {
    // One call at a time: the dumps fall on the first document sent, twice.
    const { env, approvals } = await readyApprovals(t, 6, 1);
    env.erp.faults.add({ functionName: 'ARCHIV_PROCESS_RFCINPUT', ...dump, times: 2 });
    const { report } = await logged(env, { task: 'workflow', hoursLater: 1 });
    t.equal(report.exitCode, 0, 'no outage: SAP answered the others');
    t.same(report.tasks.workflow.counts, { RETRY: 1, DONE: 5 });
    const [dumped] = report.tasks.workflow.documents.filter((d) => d.result === 'RETRY');
    t.match(dumped.message, /SYSTEM_FAILURE.*Runtime error CONVT_NO_NUMBER/);
    t.same(statusOf(env, dumped.uid), ['RETRY', 1], 'its own attempt, after its back-off');
    t.equal(env.erp.tables.inbox.length, 5);
    t.ok(approvals.includes(dumped.uid));
  },
);

t.test(
  'an ABAP dump on every call: after more documents in a row than calls at once the lane stops, none charged, exit 4; the link task goes on',
  async (t) => {
    const env = await sandboxEnv(t);
    callsAtOnce(env, 2);
    const approvals = await uploadMany(env, 'ERP/Workflow', 'approval', 12);
    const invoices = await uploadMany(env, 'ERP/Invoices', 'invoice', 3);
    await env.job({ task: 'link' });
    invoices.forEach((uid, i) => env.fill(uid, { 'erpCreateALDocument:erpObjectId': `INV-${i}` }));
    env.erp.faults.add({ functionName: 'ARCHIV_PROCESS_RFCINPUT', ...dump, times: 1000 });
    const { report, lines } = await logged(env, { hoursLater: 1 });
    t.equal(report.exitCode, 4);
    t.match(report.outages, [
      { system: 'S4H', task: 'workflow', kind: 'unavailable', reason: /runtime error for 3 documents in a row/ },
    ]);
    t.same(
      approvals.filter((uid) => !untouched(env, uid)),
      [],
      'every approval waits, none charged',
    );
    t.equal(env.erp.tables.inbox.length, 0);
    t.same(report.tasks.link.counts, { DONE: 3 }, 'the link task, on the same system, goes on');
    t.ok(lines.some((l) => l.level === 'error' && l.message === 'lane stopped'));
  },
);

t.test(
  "a breaker opened by an outage probes the system on the run's clock, and sends again once SAP answers",
  async (t) => {
    const { env, approvals } = await readyApprovals(t, 12, 1);
    // SAP's gateway turns the calls away: after three the breaker opens.
    env.erp.faults.add({ functionName: 'ARCHIV_PROCESS_RFCINPUT', status: 503, times: 100 });
    // The first probe finds SAP still down too.
    env.erp.faults.add({ functionName: 'RFC_PING', status: 503 });
    let clock = Date.now();
    let released = 0;
    const probes: number[] = [];
    env.erp.faults.observe = (_req, res, functionName) => {
      if (functionName !== 'RFC_PING') return;
      probes.push(clock);
      // SAP is back once its first probe is answered; the next probe is due twice as long after.
      if (probes.length === 1) res.once('finish', () => env.erp.faults.clear());
    };
    const stream = new PassThrough();
    let log = '';
    stream.on('data', (chunk: Buffer) => (log += chunk.toString()));
    env.sandbox.index.catchUp();
    const report = await runJob(
      {
        location: env.location,
        dryRun: false,
        task: 'workflow',
        observer: {
          now: () => new Date(clock),
          document: (_, record) => {
            // Each document left while the breaker is open moves the clock on: 6 s, less than a probe's 10 s after a failed one.
            if ('result' in record && record.result === 'RELEASED' && ++released >= 4) clock += 6_000;
          },
        },
      },
      createLogger({ stream, json: true, level: 'warn' }),
    );
    const { RELEASED, DONE } = report.tasks.workflow.counts;
    t.ok(RELEASED >= 5 && DONE >= 1 && RELEASED + DONE === 12, `${RELEASED} released, ${DONE} sent after the probes`);
    t.equal(probes.length, 2, 'a probe that fails, then one that SAP answers');
    t.ok(
      probes[1] - probes[0] >= 10_000,
      `the second ${(probes[1] - probes[0]) / 1000} s after the first: twice as long`,
    );
    t.match(log, /"message":"ERP system unavailable"[^\n]*\n(.*\n)*.*"message":"ERP system answers again"/);
    t.same(report.outages, [], 'SAP answered again: no outage to report');
    t.equal(report.exitCode, 0);
    t.same(
      approvals.filter((uid) => env.props(uid)['erpTaskStatus:status'] !== 'DONE' && !untouched(env, uid)),
      [],
      'none charged',
    );
    t.equal(env.erp.tables.inbox.length, DONE);
  },
);

t.test(
  "a runtime error on a lane's last document: at the lane's end, SAP answering RFC_PING makes it the document's; SAP not answering, the system's",
  async (t) => {
    const {
      env,
      approvals: [approval],
    } = await readyApprovals(t, 1);
    env.erp.faults.add({ functionName: 'ARCHIV_PROCESS_RFCINPUT', ...dump, times: 2 });
    const answered = await logged(env, { task: 'workflow', hoursLater: 1 });
    t.same(answered.report.tasks.workflow.counts, { RETRY: 1 }, "SAP answers: the document's");
    t.same(statusOf(env, approval), ['RETRY', 1]);

    env.erp.faults.add({ functionName: 'ARCHIV_PROCESS_RFCINPUT', ...dump, times: 2 });
    env.erp.faults.add({ functionName: 'RFC_PING', status: 503 });
    const silent = await logged(env, { task: 'workflow', hoursLater: 2 });
    t.same(silent.report.tasks.workflow.counts, { RELEASED: 1 }, "SAP does not answer: the system's");
    t.equal(silent.report.exitCode, 4);
    t.same(statusOf(env, approval), ['READY', 1], 'no attempt charged for it');
  },
);

t.test(
  "documents the intake hands to a system that is down open its breaker, and the task's search reads nothing",
  async (t) => {
    // The intake waits after each page until its document is settled: the breaker is open before the search.
    const env = await sandboxEnv(t, { storage: { pageSize: '1', intakeRoundSize: '1' } });
    const live = pointS4hAt(env, DEAD);
    const approvals = await uploadMany(env, 'ERP/Workflow', 'approval', 6);
    let searches = 0;
    env.sandbox.faults.observe = (req) => {
      const query = new URL(req.url ?? '', 'http://x').searchParams.get('query') ?? '';
      if (query.includes("erpTaskStatus:status IN ('READY', 'PENDING_INPUT')")) searches += 1;
    };
    const { report } = await logged(env, { task: 'workflow', hoursLater: 1 });
    t.equal(report.intake.counts.labelled, 6);
    t.equal(report.exitCode, 4);
    t.equal(searches, 0, 'no page of due documents is read for a task whose systems are all down');
    t.same(
      approvals.filter((uid) => !untouched(env, uid)),
      [],
      'labelled, none charged',
    );
    pointS4hAt(env, live);
    await logged(env, { task: 'workflow', hoursLater: 2 });
    t.ok(searches > 0, 'with SAP up, the same run reads its page (the count sees the search)');
  },
);

t.test(
  "SAP refusing the logon: the first call's 401 stops the system's lanes at once, the other documents are never claimed",
  async (t) => {
    const { env, approvals } = await readyApprovals(t, 4, 1);
    let calls = 0;
    env.erp.faults.observe = (_req, _res, functionName) => void (functionName === 'ARCHIV_PROCESS_RFCINPUT' && calls++);
    process.env.SAP_PASSWORD = 'wrong';
    const { report } = await logged(env, { task: 'workflow', hoursLater: 1 }).finally(
      () => (process.env.SAP_PASSWORD = 'sandbox'),
    );
    t.equal(report.exitCode, 2);
    t.equal(calls, 0, 'refused at the door: the 401 comes before the call is read');
    t.match(
      report.tasks.workflow.documents.filter((d) => /^left for the next run/.test(d.message ?? '')),
      [{ result: 'RELEASED', message: /^left for the next run: ERP system S4H refused the connector \(.*HTTP 401/ }],
    );
    t.same(
      approvals.filter((uid) => !untouched(env, uid)),
      [],
      'none charged',
    );
  },
);

t.test(
  "a login page where SAP's SOAP answer belongs: the system refuses the connector, its documents wait, none charged",
  async (t) => {
    const { env, approvals } = await readyApprovals(t, 4, 1);
    env.erp.faults.add({
      status: 200,
      headers: { 'Content-Type': 'text/html' },
      body: '<html><body>Please sign in</body></html>',
      times: 100,
    });
    const { report } = await logged(env, { task: 'workflow', hoursLater: 1 });
    t.equal(report.exitCode, 2);
    t.match(report.outages, [
      {
        system: 'S4H',
        kind: 'refused',
        reason:
          /the server answered a web page \(a login page\?\) — check the URL and the credentials \(rfc\.url and rfc\.auth of system S4H in erpHttp\.yaml\)/,
      },
    ]);
    t.same(
      approvals.filter((uid) => !untouched(env, uid)),
      [],
      'none charged',
    );
  },
);

t.test('a probe SAP does not answer in time is a failed probe: the breaker stays open', async (t) => {
  const env = await sandboxEnv(t);
  callsAtOnce(env, 1);
  const erpYaml = join(env.location.configDir, 'erpHttp.yaml');
  writeFileSync(erpYaml, `${readFileSync(erpYaml, 'utf8')}    timeouts: {requestMs: 200}\n`);
  const approvals = await uploadMany(env, 'ERP/Workflow', 'approval', 8);
  await env.job({ task: 'link' });
  env.erp.faults.add({ functionName: 'ARCHIV_PROCESS_RFCINPUT', status: 503, times: 3 });
  // SAP takes the probe and never answers within the 200 ms the job waits.
  env.erp.faults.add({ functionName: 'RFC_PING', delayMs: 1_000, times: 1 });
  let clock = Date.now();
  let released = 0;
  env.sandbox.index.catchUp();
  const report = await runJob(
    {
      location: env.location,
      dryRun: false,
      task: 'workflow',
      observer: {
        now: () => new Date(clock),
        document: (_, record) => {
          if ('result' in record && record.result === 'RELEASED' && ++released === 4) clock += 6_000;
        },
      },
    },
    createLogger({ stream: new PassThrough(), level: 'error' }),
  );
  t.same(report.tasks.workflow.counts, { RELEASED: 8 }, 'the probe timed out: nothing more is sent in this run');
  t.match(report.outages, [{ system: 'S4H', kind: 'unavailable', reason: /RFC_PING on S4H failed \(ETIMEDOUT\)/ }]);
  t.same(
    approvals.filter((uid) => !untouched(env, uid)),
    [],
  );
});

t.test(
  'a runtime error held while the intake waits for its documents to settle: decided once the lane is idle, so the run goes on',
  async (t) => {
    // The intake waits after each page until its document is settled: a held runtime error must not stall it.
    const env = await sandboxEnv(t, { storage: { pageSize: '1', intakeRoundSize: '1' } });
    // One call at a time: both runtime errors fall on the first document.
    callsAtOnce(env, 1);
    const approvals = await uploadMany(env, 'ERP/Workflow', 'approval', 3);
    env.erp.faults.add({ functionName: 'ARCHIV_PROCESS_RFCINPUT', ...dump, times: 2 });
    const { report } = await logged(env, { task: 'workflow', hoursLater: 1 });
    t.equal(report.intake.counts.labelled, 3);
    t.same(report.tasks.workflow.counts, { RETRY: 1, DONE: 2 }, 'the dumped one is its own, the others sent');
    t.equal(approvals.filter((uid) => env.props(uid)['erpTaskStatus:status'] === 'DONE').length, 2);
  },
);

for (const probeFails of [true, false])
  t.test(
    `a run stopped while a probe is out (${probeFails ? 'failing' : 'answered'}) learns nothing from it and sends nothing more`,
    async (t) => {
      const env = await sandboxEnv(t);
      callsAtOnce(env, 1);
      await uploadMany(env, 'ERP/Workflow', 'approval', 8);
      await env.job({ task: 'link' });
      env.erp.faults.add({ functionName: 'ARCHIV_PROCESS_RFCINPUT', status: 503, times: 3 });
      if (probeFails) env.erp.faults.add({ functionName: 'RFC_PING', status: 503 });
      const stop = new AbortController();
      // The probe reaches SAP as the run is told to stop.
      env.erp.faults.observe = (_req, _res, functionName) =>
        void (functionName === 'RFC_PING' && stop.abort('SIGTERM'));
      let clock = Date.now();
      env.sandbox.index.catchUp();
      const report = await runJob(
        {
          location: env.location,
          dryRun: false,
          task: 'workflow',
          stop: stop.signal,
          observer: {
            now: () => new Date(clock),
            document: () => void (clock += 6_000),
          },
        },
        createLogger({ stream: new PassThrough(), level: 'error' }),
      );
      t.equal(report.interrupted?.reason, 'SIGTERM');
      t.equal(env.erp.tables.inbox.length, 0, 'nothing sent after the stop');
      if (probeFails) {
        t.equal(report.exitCode, 4, 'the three 503s before it are the outage');
        t.notMatch(report.outages[0].reason, /RFC_PING/, 'not the probe');
      } else {
        t.same(report.outages, [], 'SAP answered the probe');
        t.equal(report.exitCode, 3);
        // In whatever order the lane's records come: each record moves the clock on, so it decides which unit probes.
        const { documents } = report.tasks.workflow;
        const kinds = documents.map((d) => {
          const message = String(d.message);
          if (message.startsWith('ARCHIV_PROCESS_RFCINPUT on S4H failed with HTTP 503')) return '503';
          if (message.startsWith('left for the next run: ERP system S4H unavailable')) return 'breaker open';
          return message.includes('not sent, the run is stopping (SIGTERM)') ? 'stopping' : message;
        });
        t.ok(documents.length === 8 && documents.every((d) => d.result === 'RELEASED'), 'all 8 released, none charged');
        t.equal(kinds.filter((k) => k === '503').length, 3, 'the three 503s');
        t.ok(kinds.includes('breaker open'), 'left while the breaker was open, until the probe');
        t.ok(kinds.includes('stopping'), 'the rest refused once the run stopped');
        t.ok(
          kinds.every((k) => ['503', 'breaker open', 'stopping'].includes(k)),
          `no other outcome: ${kinds.join(', ')}`,
        );
      }
    },
  );

for (const probe of ['times out', 'is refused the user', 'meets the run stopping'] as const)
  t.test(`a lane's last runtime error, decided by a probe that ${probe}`, async (t) => {
    const env = await sandboxEnv(t);
    const erpYaml = join(env.location.configDir, 'erpHttp.yaml');
    writeFileSync(erpYaml, `${readFileSync(erpYaml, 'utf8')}    timeouts: {requestMs: 300}\n`);
    const [approval] = await uploadMany(env, 'ERP/Workflow', 'approval', 1);
    await env.job({ task: 'link' });
    env.erp.faults.add({ functionName: 'ARCHIV_PROCESS_RFCINPUT', ...dump, times: 2 });
    const stop = new AbortController();
    if (probe === 'times out') env.erp.faults.add({ functionName: 'RFC_PING', delayMs: 3_000 });
    if (probe === 'is refused the user') env.erp.customizing.users.CONNECTOR.rfc = ['ARCHIV_PROCESS_RFCINPUT'];
    if (probe === 'meets the run stopping') {
      env.erp.faults.add({ functionName: 'RFC_PING', status: 503 });
      env.erp.faults.observe = (_req, _res, functionName) =>
        void (functionName === 'RFC_PING' && stop.abort('SIGTERM'));
    }
    env.sandbox.index.catchUp();
    const report = await runJob(
      { location: env.location, dryRun: false, task: 'workflow', stop: stop.signal },
      createLogger({ stream: new PassThrough(), level: 'error' }),
    );
    if (probe === 'is refused the user') {
      t.same(report.tasks.workflow.counts, { RETRY: 1 }, "SAP answered, if only to refuse: the document's");
      t.same(statusOf(env, approval), ['RETRY', 1]);
      return;
    }
    t.same(report.tasks.workflow.counts, { RELEASED: 1 }, 'nothing to tell whose it is: it waits, uncharged');
    t.same(statusOf(env, approval), ['READY', 0]);
    if (probe === 'times out') t.match(report.outages, [{ reason: /RFC_PING on S4H failed \(ETIMEDOUT\)/ }]);
    else t.same([report.outages, report.exitCode], [[], 3], 'a stop is not an outage');
  });
