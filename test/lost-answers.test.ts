import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { quietLog, sandboxEnv, type Env } from './helpers/env.js';
import { addFiles, completeMapping } from './helpers/backlog.js';
import { runJob } from '../src/job/run.js';
import { loadConfig } from '../src/config/load.js';
import { RepositoryClient } from '../src/repository/client.js';
import { renderStatus, taskStatus } from '../src/operator/status.js';
import type { FaultRule } from '../sandbox/faults.js';

/**
 * A lost answer (a time-out after SAP did the work, a connection dropped, an answer that never
 * came back) is settled by asking SAP at the next attempt, before anything is sent again: a link
 * in the link table, a bar code in BDS_BAR_EX or, matched since, among the links, an upload among
 * the business object's attachments by the key its name starts with. Only a work item, which no
 * remote-enabled read finds, goes to an operator, with where to look.
 */

t.setTimeout(240_000);

const names = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(3, '0')}`);
const status = (env: Env, uid: string) => env.props(uid)['erpTaskStatus:status'];
const count = <T>(values: T[]) => {
  const counts = new Map<T, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
};

/** Runs, each an hour after the last (every back-off and claim over), until one finds nothing to do. */
async function untilQuiet(env: Env, start: number, most = 10): Promise<number> {
  for (let run = 1; run <= most; run++) {
    const later = new Date(start + run * 3_600_000);
    env.sandbox.index.catchUp();
    const report = await runJob({ location: env.location, dryRun: false, observer: { now: () => later } }, quietLog);
    if (report.problems.length > 0) throw new Error(report.problems.join('\n'));
    const touched = Object.values(report.tasks).reduce((sum, task) => sum + task.documents.length, 0);
    if (touched === 0 && report.intake.counts.labelled === 0) return run;
  }
  return most + 1;
}

t.test(
  '25 faults over 390 documents (answers lost, late, dropped, 503s): no document twice in SAP, none FAILED that SAP never had, for links, bar codes and Rest uploads',
  async (t) => {
    // A link over Rest for the documents of ERP/Attachments, to a system S4R: the same SAP's attachment service.
    const mapping = completeMapping((entries) => {
      const invoices = entries.find((entry) => entry.path.endsWith('/Invoices')) as (typeof entries)[number];
      return [
        ...entries,
        {
          ...invoices,
          path: '/default-domain/workspaces/ERP/Attachments',
          properties: { ...invoices.properties, 'erpHttpContent:source': 'S4R' },
        },
      ];
    });
    const env = await sandboxEnv(t, { mapping });
    const { configDir, jobsDir } = env.location;
    const erpYaml = join(configDir, 'erpHttp.yaml');
    const erp = readFileSync(erpYaml, 'utf8');
    const s4r = erp.slice(erp.indexOf('  - name: S4H')).replace('name: S4H', 'name: S4R');
    // Answers that come after a second are not waited for (the late ones below come after three: undici's
    // time-outs tick every half second or so).
    writeFileSync(erpYaml, `${erp}    timeouts: {requestMs: 1000}\n${s4r}    timeouts: {requestMs: 1000}\n`);
    for (const task of ['link', 'barcode', 'workflow']) {
      const file = join(jobsDir, `${task}.yaml`);
      const text = readFileSync(file, 'utf8').replace('batchSize: 100', 'batchSize: 25'); // four lists of bar codes
      writeFileSync(file, `${text}${task === 'link' ? 'systems: [S4H]\n' : ''}`);
    }
    writeFileSync(
      join(jobsDir, 'link-rest.yaml'),
      'name: link-rest\nuseCase: link\nfunction: Rest\nschedule: "*/5 * * * *"\nsystems: [S4R]\n',
    );
    const invoices = addFiles(
      env,
      'Invoices',
      names('INVOICE', 100).map((n) => `${n}.pdf`),
    );
    const scans = addFiles(env, 'Barcode', names('BC', 100));
    const approvals = addFiles(
      env,
      'Workflow',
      names('APPROVAL', 100).map((n) => `${n}.pdf`),
    );
    const uploads = addFiles(
      env,
      'Attachments',
      names('ATTACHMENT', 90).map((n) => `${n}.pdf`),
    );

    const faults: Array<FaultRule & { times: number }> = [
      { functionName: 'ARCHIV_CONNECTION_INSERT', loseAnswer: true, skip: 5, times: 3 },
      { functionName: 'ARCHIV_CONNECTION_INSERT', delayMs: 3000, handleAfterDisconnect: true, skip: 20, times: 2 },
      { functionName: 'ARCHIV_CONNECTION_INSERT', drop: true, skip: 40, times: 2 },
      { functionName: 'ARCHIV_CONNECTION_INSERT', status: 503, skip: 60, times: 1 },
      { functionName: 'BAPI_BARCODE_SENDLIST', loseAnswer: true, times: 1 },
      { functionName: 'BAPI_BARCODE_SENDLIST', loseAnswer: true, skip: 1, times: 1 },
      { functionName: 'BAPI_BARCODE_SENDLIST', drop: true, skip: 2, times: 1 },
      { functionName: 'BAPI_BARCODE_SENDLIST', status: 503, skip: 3, times: 1 },
      { functionName: 'ARCHIV_PROCESS_RFCINPUT', loseAnswer: true, skip: 10, times: 2 },
      { functionName: 'ARCHIV_PROCESS_RFCINPUT', delayMs: 3000, handleAfterDisconnect: true, skip: 30, times: 1 },
      { functionName: 'ARCHIV_PROCESS_RFCINPUT', drop: true, skip: 50, times: 1 },
      { functionName: 'ARCHIV_PROCESS_RFCINPUT', status: 503, skip: 70, times: 1 },
      { functionName: 'AttachmentContentSet', loseAnswer: true, skip: 5, times: 3 },
      { functionName: 'AttachmentContentSet', drop: true, skip: 30, times: 2 },
      { functionName: 'AttachmentContentSet', status: 503, skip: 50, times: 1 },
      // And two of the lookups that settle them.
      { functionName: 'ARCHIV_GET_CONNECTIONS', status: 503, times: 1 },
      { functionName: 'GetAllOriginals', drop: true, times: 1 },
    ];
    t.equal(
      faults.reduce((sum, fault) => sum + fault.times, 0),
      25,
      '25 faults',
    );
    for (const fault of faults) env.erp.faults.add(fault);

    const runs = await untilQuiet(env, Date.now());
    t.ok(runs <= 10, `quiet after ${runs} runs`);
    const { links, barcodes, inbox, attachments } = env.erp.tables;
    const once = (label: string, uids: string[], keys: string[]) => {
      const counts = count(keys);
      t.same(
        uids.filter((uid) => counts.get(uid) !== 1),
        [],
        `${label}: each in SAP exactly once`,
      );
    };
    once(
      'links',
      invoices,
      links.map((l) => l.ARC_DOC_ID),
    );
    once(
      'bar codes',
      scans,
      barcodes.map((b) => b.DOCID),
    );
    once(
      'uploads',
      uploads,
      attachments.map((a) => a.FileName.slice(0, 36)),
    );
    t.same(
      [...invoices, ...scans, ...uploads].filter((uid) => status(env, uid) !== 'DONE'),
      [],
      'every link, bar code and upload DONE: none FAILED, none left claimed',
    );
    t.equal(Math.max(...count(inbox.map((w) => w.ARC_DOC_ID)).values()), 1, 'no work item twice');
    const failed = approvals.filter((uid) => status(env, uid) === 'FAILED');
    t.same(
      approvals.filter((uid) => !['DONE', 'FAILED'].includes(status(env, uid) as string)),
      [],
      'every approval DONE, or with an operator',
    );
    t.ok(
      failed.length >= 3 && failed.length <= 4,
      `${failed.length} work items whose answer was lost wait for an operator`,
    );
    for (const uid of failed)
      t.match(
        env.props(uid)['erpTaskStatus:message'],
        /SAP may have it, so it is not sent again by itself: check in SAP transaction SWI1/,
      );

    // `status` lists them, with where to look.
    const config = loadConfig(env.location);
    const text = renderStatus(await taskStatus(config.tasks, new RepositoryClient(config.storage, quietLog)));
    t.match(
      text,
      new RegExp(`failed in task workflow:\\n(.*\\n)*.*\\(${failed[0]}\\)\\n.*check in SAP transaction SWI1`),
    );
  },
);

t.test(
  'a bar-code list whose answer was lost is settled per document: found in BDS_BAR_EX, or among the links once SAP matched it, or sent again',
  async (t) => {
    const env = await sandboxEnv(t, { mapping: completeMapping() });
    const scans = addFiles(env, 'Barcode', names('BC', 6));
    // SAP stores the list of six, the answer is lost.
    env.erp.faults.add({ functionName: 'BAPI_BARCODE_SENDLIST', loseAnswer: true });
    const first = await runJob({ location: env.location, dryRun: false, task: 'barcode' }, quietLog);
    t.same(first.tasks.barcode.counts, { RETRY: 6 }, 'the whole list waits for its next attempt, none FAILED');
    t.equal(env.erp.tables.barcodes.length, 6);
    // A user enters BC-000 in the business transaction: SAP links the document and deletes the external row.
    t.ok(env.erp.enterBarcode('100', 'BC-000', { SAP_OBJECT: 'BKPF', OBJECT_ID: '4711', AR_OBJECT: 'ZBARCODE' }));
    t.notOk(
      env.erp.enterBarcode('100', 'BC-999', { SAP_OBJECT: 'BKPF', OBJECT_ID: '4711', AR_OBJECT: 'ZBARCODE' }),
      'a bar code SAP has no external row for matches nothing',
    );
    // And BC-005 never made it: as if the list had stopped before it.
    env.erp.tables.barcodes.splice(
      env.erp.tables.barcodes.findIndex((row) => row.BARCODE === 'BC-005'),
      1,
    );
    const later = new Date(Date.now() + 3_600_000);
    env.sandbox.index.catchUp();
    const second = await runJob(
      { location: env.location, dryRun: false, task: 'barcode', observer: { now: () => later } },
      quietLog,
    );
    t.same(second.tasks.barcode.counts, { DONE: 6 });
    t.same(
      env.erp.tables.barcodes.map((row) => row.BARCODE).sort(),
      ['BC-001', 'BC-002', 'BC-003', 'BC-004', 'BC-005'],
      'BC-005 sent again, alone; the four found not sent again',
    );
    t.match(env.erp.tables.links, [{ ARC_DOC_ID: scans[0], OBJECT_ID: '4711' }], 'BC-000 found among the links');

    // Without S_TABU_NAM for BDS_BAR_EX a bar code whose answer was lost cannot be looked up: an operator decides.
    const [blind] = addFiles(env, 'Barcode', ['BC-100']);
    env.erp.faults.add({ functionName: 'BAPI_BARCODE_SENDLIST', loseAnswer: true });
    await runJob({ location: env.location, dryRun: false, task: 'barcode', observer: { now: () => later } }, quietLog);
    env.erp.customizing.users.CONNECTOR.tables = [];
    const even = new Date(later.getTime() + 3_600_000);
    env.sandbox.index.catchUp();
    const third = await runJob(
      { location: env.location, dryRun: false, task: 'barcode', observer: { now: () => even } },
      quietLog,
    );
    t.same(third.tasks.barcode.counts, { FAILED: 1 });
    t.match(
      env.props(blind)['erpTaskStatus:message'],
      /whether SAP has it already cannot be told, the lookup failed: RFC_READ_TABLE raised NOT_AUTHORIZED: No authorization for table BDS_BAR_EX; SAP may have it, so it is not sent again by itself: check in SAP, then `connect2erp retry --doc /,
    );
    t.equal(env.erp.tables.barcodes.filter((row) => row.BARCODE === 'BC-100').length, 1, 'not sent blind');
  },
);

t.test(
  'an answer lost on every attempt: the last one is looked up, and a document SAP never had fails only once its attempts are used up',
  async (t) => {
    const env = await sandboxEnv(t, { mapping: completeMapping() });
    const file = join(env.location.jobsDir, 'link.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('attempts: 5', 'attempts: 2'));
    const [invoice] = addFiles(env, 'Invoices', ['INVOICE-1.pdf']);
    // Dropped before SAP does anything, every time: it never reaches SAP.
    env.erp.faults.add({ functionName: 'ARCHIV_CONNECTION_INSERT', drop: true, times: 10 });
    const start = Date.now();
    const at = (hours: number) => new Date(start + hours * 3_600_000);
    const run = async (hours: number) => {
      env.sandbox.index.catchUp();
      return runJob(
        { location: env.location, dryRun: false, task: 'link', observer: { now: () => at(hours) } },
        quietLog,
      );
    };
    t.same((await run(0)).tasks.link.counts, { RETRY: 1 });
    t.same(
      (await run(1)).tasks.link.counts,
      { RETRY: 1 },
      'its attempts are used up, but its last answer was lost: asked again at the next attempt',
    );
    t.equal(env.props(invoice)['erpTaskStatus:attempts'], 2);
    t.same((await run(2)).tasks.link.counts, { FAILED: 1 });
    t.match(
      env.props(invoice)['erpTaskStatus:message'],
      /not in SAP \(looked up after its answer was lost\), and its attempts are used up/,
    );
    t.equal(env.erp.tables.links.length, 0);
  },
);

t.test(
  'a lookup that does not answer on the last attempt leaves the document to an operator, with where to look, never sent blind',
  async (t) => {
    const env = await sandboxEnv(t, { mapping: completeMapping() });
    const file = join(env.location.jobsDir, 'link.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('attempts: 5', 'attempts: 1'));
    const erpYaml = join(env.location.configDir, 'erpHttp.yaml');
    writeFileSync(erpYaml, `${readFileSync(erpYaml, 'utf8')}    timeouts: {requestMs: 300}\n`);
    const [invoice] = addFiles(env, 'Invoices', ['INVOICE-1.pdf']);
    // SAP links it and the answer is lost; at the next attempt the lookup gets no answer in time.
    env.erp.faults.add({ functionName: 'ARCHIV_CONNECTION_INSERT', loseAnswer: true });
    env.erp.faults.add({ functionName: 'ARCHIV_GET_CONNECTIONS', delayMs: 3_000 });
    const at = (hours: number) => new Date(Date.now() + hours * 3_600_000);
    const run = async (hours: number) => {
      env.sandbox.index.catchUp();
      return runJob(
        { location: env.location, dryRun: false, task: 'link', observer: { now: () => at(hours) } },
        quietLog,
      );
    };
    t.same((await run(0)).tasks.link.counts, { RETRY: 1 }, 'its one attempt used up, but its answer lost: asked again');
    t.same((await run(1)).tasks.link.counts, { FAILED: 1 });
    t.match(
      env.props(invoice)['erpTaskStatus:message'],
      /the lookup failed: ARCHIV_GET_CONNECTIONS on S4H failed \(ETIMEDOUT\).*; SAP may have it, so it is not sent again by itself: check in SAP, then `connect2erp retry --doc /,
    );
    t.equal(env.erp.tables.links.length, 1, 'linked once');
  },
);
