import t, { type Test } from 'tap';
import { quietLog, sandboxEnv, type Env } from './helpers/env.js';
import { addFiles, completeMapping } from './helpers/backlog.js';
import { runJob } from '../src/job/run.js';
import type { FaultRule } from '../sandbox/faults.js';
import type { TaskRecord } from '../src/job/records.js';
import { NO_BLOBS, type StoredDoc } from '../sandbox/repository/store.js';

/**
 * Scans whose bar code the mapping takes from their title (helpers/backlog.ts): ready when labelled.
 * A document ready when the intake labels it, for a task whose call SAP can be asked about, is
 * labelled and claimed in one write: one write fewer per document. What the run did not send is
 * given back, never left claimed.
 */

const status = (env: Env, uid: string): unknown => env.props(uid)['erpTaskStatus:status'];
/** New scans, each titled with a bar code SAP permits. */
const scans = async (env: Env, n: number): Promise<string[]> =>
  addFiles(
    env,
    'Barcode',
    Array.from({ length: n }, (_, i) => `BC-${i}`),
  );

/** The writes (PUTs) each document gets, counted as the repository sees them. */
function writesPerDocument(env: Env): Map<string, number> {
  const puts = new Map<string, number>();
  env.sandbox.faults.observe = (req) => {
    const uid = /\/id\/([^/?]+)$/.exec(req.url ?? '')?.[1];
    if (req.method === 'PUT' && uid !== undefined) puts.set(uid, (puts.get(uid) ?? 0) + 1);
  };
  return puts;
}

t.test(
  'a new scan, ready as it is labelled, gets two writes in all: labels with its claim, then its outcome',
  async (t) => {
    const env = await sandboxEnv(t, { mapping: completeMapping() });
    const uids = await scans(env, 12);
    const puts = writesPerDocument(env);
    const report = await env.job();

    t.same(report.intake.counts, { labelled: 12, planned: 0, ready: 12, pendingInput: 0, skipped: 0, errors: 0 });
    t.same(report.tasks.barcode.counts, { DONE: 12 });
    t.same(
      uids.map((uid) => puts.get(uid)),
      Array(12).fill(2),
      'one write for the labels and the claim, one for DONE',
    );
    t.same(
      uids.map((uid) => status(env, uid)),
      Array(12).fill('DONE'),
    );
    t.equal(env.erp.tables.barcodes.length, 12, 'each bar code in SAP once');
  },
);

t.test(
  'a workflow start, which SAP cannot be asked about, is labelled READY and claimed when its call has a slot',
  async (t) => {
    const env = await sandboxEnv(t);
    const uids = await Promise.all(
      Array.from({ length: 3 }, (_, i) => env.upload('ERP/Workflow', `approval-${i}.pdf`)),
    );
    const puts = writesPerDocument(env);
    const report = await env.job();
    t.same(report.tasks.workflow.counts, { DONE: 3 });
    t.same(
      uids.map((uid) => puts.get(uid)),
      [3, 3, 3],
      'labels, claim, outcome',
    );
  },
);

t.test(
  'labelled and claimed, then the run stops before handing them over: given back READY, none charged',
  async (t) => {
    const env = await sandboxEnv(t, { mapping: completeMapping() });
    const uids = await scans(env, 12);
    const stop = new AbortController();
    env.sandbox.index.catchUp();
    const report = await runJob(
      {
        location: env.location,
        dryRun: false,
        stop: stop.signal,
        // The first document labelled stops the run: its page is labelled, nothing of it handed to a lane.
        observer: { document: (phase) => phase === 'intake' && stop.abort('SIGTERM') },
      },
      quietLog,
    );

    t.equal(report.intake.counts.ready, 12, 'the page was labelled (and claimed)');
    t.same(report.tasks.barcode.counts, { RELEASED: 12 }, 'every claim given back, each with its record');
    t.same(
      uids.map((uid) => [
        status(env, uid),
        env.props(uid)['erpTaskStatus:claimedBy'],
        env.props(uid)['erpTaskStatus:attempts'],
      ]),
      Array(12).fill(['READY', null, 0]),
      'READY, unclaimed, no attempt charged',
    );
    t.equal(env.erp.tables.barcodes.length, 0, 'nothing sent');

    const next = await env.job();
    t.same(next.tasks.barcode.counts, { DONE: 12 }, 'the next run sends them');
    t.equal(env.erp.tables.barcodes.length, 12);
  },
);

t.test('a dry run and a pilot (--limit) claim nothing as they label', async (t) => {
  const env = await sandboxEnv(t, { mapping: completeMapping() });
  const uids = await scans(env, 4);
  const dry = await env.job({ dryRun: true });
  t.same(dry.tasks.barcode.counts, { PLANNED: 4 });
  t.same(
    uids.map((uid) => status(env, uid)),
    [undefined, undefined, undefined, undefined],
    'a dry run writes nothing',
  );
  const pilot = await env.job({ limit: 2 });
  t.same(pilot.tasks.barcode.counts, { DONE: 2, RELEASED: 2 });
  t.same(
    uids.map((uid) => status(env, uid)).sort(),
    ['DONE', 'DONE', 'READY', 'READY'],
    'the two beyond the limit READY, never claimed',
  );
});

t.test(
  'a scan whose SAP system, taken from the file, is not in erpHttp.yaml is labelled READY, not claimed, and waits for input',
  async (t) => {
    const mapping = completeMapping((entries) =>
      entries.map((entry) =>
        entry.path.endsWith('/Barcode')
          ? { ...entry, properties: { ...entry.properties, 'erpHttpContent:source': '$dc:title' } }
          : entry,
      ),
    );
    const env = await sandboxEnv(t, { mapping });
    const [uid] = await scans(env, 1);
    const puts = writesPerDocument(env);
    const report = await env.job();
    t.equal(report.intake.counts.ready, 1);
    t.same(report.tasks.barcode.counts, { PENDING_INPUT: 1 });
    t.equal(puts.get(uid), 2, 'labels, then what it waits for: never claimed');
    t.match(env.props(uid), {
      'erpTaskStatus:status': 'PENDING_INPUT',
      'erpTaskStatus:message': /no ERP system "BC-0" with a RFC connection/,
      'erpTaskStatus:claimedBy': null,
    });
  },
);

/** What happens to the scan's writes and reads from its renewal on, and whether a user edits it just before. */
interface Renewal {
  /** The renewal and the writes after it. */
  write?: Omit<FaultRule, 'method' | 'path'>;
  read?: Omit<FaultRule, 'method' | 'path'>;
  /** A user changes the scan as its renewal arrives: the renewal's changeToken is out of date. */
  edited?: boolean;
}

/**
 * A scan ready as it is labelled, the clock moved 31 s on as its labels with its claim reach the
 * repository (its slot came late, as behind a long list), so its claim is written again before its
 * call, meeting `renewal`.
 */
async function lateRenewal(t: Test, renewal: Renewal) {
  const env = await sandboxEnv(t, { mapping: completeMapping() });
  const [uid] = await scans(env, 1);
  const start = Date.now();
  let clock = start;
  let writes = 0;
  env.sandbox.faults.observe = (req) => {
    if (req.method !== 'PUT' || req.url?.endsWith(`/id/${uid}`) !== true) return;
    writes += 1;
    if (writes === 1) clock += 31_000;
    if (writes === 2 && renewal.edited === true) userEdit(env, uid);
  };
  if (renewal.write !== undefined)
    env.sandbox.faults.add({ method: 'PUT', path: `/id/${uid}`, skip: 1, ...renewal.write });
  if (renewal.read !== undefined) env.sandbox.faults.add({ method: 'GET', path: `/id/${uid}`, ...renewal.read });
  const report = await env.job({ observer: { now: () => new Date(clock) } });
  return { env, uid, report, records: report.tasks.barcode?.documents ?? [] };
}

/** A user's edit in the Web UI, which sends the document's changeToken: it changes the token. */
function userEdit(env: Env, uid: string): void {
  const { store } = env.sandbox;
  const doc = store.get(uid) as StoredDoc;
  store.update(env.sandbox.actor(), doc, { 'dc:description': 'edited meanwhile' }, NO_BLOBS, {
    changeToken: store.changeToken(doc),
  });
}

/** The one record a scan got. */
function onlyRecord(t: Test, records: TaskRecord[]): TaskRecord {
  t.equal(records.length, 1, 'one record');
  return records[0];
}

t.test(
  'a claim that cannot be written again before its call (the scan edited meanwhile) is given back READY, not sent',
  async (t) => {
    const { env, uid, records } = await lateRenewal(t, { edited: true });
    const record = onlyRecord(t, records);
    t.equal(env.erp.tables.barcodes.length, 0, 'SAP never called');
    t.match(record, {
      uid,
      result: 'RELEASED',
      message: /^not sent: its claim could not be written again before its call \(.*409/,
    });
    t.match(env.props(uid), {
      'erpTaskStatus:status': 'READY',
      'erpTaskStatus:claimedBy': null,
      'dc:description': 'edited meanwhile',
    });
    const next = await env.job();
    t.same(next.tasks.barcode.counts, { DONE: 1 }, 'the next run sends it');
    t.equal(env.erp.tables.barcodes.length, 1);
  },
);

t.test('a renewal refused (409) that cannot be read back either is recorded as still claimed, not sent', async (t) => {
  const { env, uid, records } = await lateRenewal(t, {
    write: { status: 409, body: '{}' },
    read: { status: 503, times: 100 },
  });
  const record = onlyRecord(t, records);
  t.equal(env.erp.tables.barcodes.length, 0, 'SAP never called');
  t.match(record, {
    uid,
    result: 'ERROR',
    message: /503.*nor read back, so it was not sent; it stays IN_PROGRESS until its claim expires/,
  });
  t.equal(status(env, uid), 'IN_PROGRESS');
});

t.test('a renewal whose answer was lost is found written, and the scan is sent under it', async (t) => {
  const { env, uid, records } = await lateRenewal(t, { write: { loseAnswer: true } });
  const record = onlyRecord(t, records);
  t.match(record, { uid, result: 'DONE' });
  t.equal(env.erp.tables.barcodes.length, 1, 'sent once');
  t.equal(status(env, uid), 'DONE');
});

t.test(
  'a claim the repository will not write again nor take back (503) is recorded as still claimed, as it is',
  async (t) => {
    const { env, uid, records } = await lateRenewal(t, { write: { status: 503, times: 100 } });
    const record = onlyRecord(t, records);
    t.equal(env.erp.tables.barcodes.length, 0, 'SAP never called');
    t.match(record, { uid, result: 'ERROR', message: /503.*stays IN_PROGRESS until its claim expires/ });
    t.equal(status(env, uid), 'IN_PROGRESS');
  },
);

t.test('a renewal refused for the credentials (401) stops the run, the scan still claimed and not sent', async (t) => {
  const { env, uid, report, records } = await lateRenewal(t, { write: { status: 401 } });
  t.match(report.problems, [/401/]);
  t.same(records, [], 'no record: the run stopped');
  t.equal(env.erp.tables.barcodes.length, 0, 'SAP never called');
  t.equal(status(env, uid), 'IN_PROGRESS');
});

t.test(
  'labels and claim whose answer was lost are found written: the scan is sent in the same run, not left claimed until the claim expires',
  async (t) => {
    const env = await sandboxEnv(t, { mapping: completeMapping() });
    const [uid] = await scans(env, 1);
    // The write goes through; its answer is lost, and the client's second try meets a used change token.
    env.sandbox.faults.add({ method: 'PUT', path: `/id/${uid}`, loseAnswer: true });
    const report = await env.job();
    t.same(report.intake.counts, { labelled: 1, planned: 0, ready: 1, pendingInput: 0, skipped: 0, errors: 0 });
    t.same(report.tasks.barcode.counts, { DONE: 1 });
    t.equal(status(env, uid), 'DONE');
    t.equal(env.erp.tables.barcodes.length, 1, 'sent once');
  },
);

t.test(
  'labels and claim whose answer was lost, found claimed but with a value the repository did not store: an error, undone, nothing sent',
  async (t) => {
    const env = await sandboxEnv(t, { mapping: completeMapping() });
    const [uid] = await scans(env, 1);
    // The page's second facet is answered but not added (a server without its declaration): its values are dropped.
    env.sandbox.faults.add({ path: '/automation/Document.AddFacet', status: 204, skip: 1, times: 1 });
    env.sandbox.faults.add({ method: 'PUT', path: `/id/${uid}`, loseAnswer: true });
    const report = await env.job();
    t.match(report.intake.documents, [{ uid, result: 'error', error: /accepted but did not store erpBarcode:/ }]);
    t.same(report.tasks.barcode.counts, {}, 'not handed to the lane');
    t.equal(env.erp.tables.barcodes.length, 0, 'nothing sent');
    t.notOk(env.props(uid)['erpHttpContent:docId'], 'undone: the next run labels it again');
    t.not(status(env, uid), 'IN_PROGRESS', 'not left claimed');
  },
);

t.test(
  'labels without a claim whose answer was lost are found written: reported labelled, not as changed by another run',
  async (t) => {
    const env = await sandboxEnv(t);
    // A workflow start is labelled READY, unclaimed; its labels go through and their answer is lost.
    const uid = await env.upload('ERP/Workflow', 'approval.pdf');
    env.sandbox.faults.add({ method: 'PUT', path: `/id/${uid}`, loseAnswer: true });
    const report = await env.job();
    t.same(report.intake.counts, { labelled: 1, planned: 0, ready: 1, pendingInput: 0, skipped: 0, errors: 0 });
    t.same(report.tasks.workflow.counts, { DONE: 1 }, 'handed to its task in the same run');
    t.equal(env.erp.tables.inbox.length, 1, 'started once');
  },
);

t.test(
  'labels without a claim refused (409) and found not written: skipped as changed by another run, labelled by the next',
  async (t) => {
    const env = await sandboxEnv(t);
    const uid = await env.upload('ERP/Workflow', 'approval.pdf');
    env.sandbox.faults.add({ method: 'PUT', path: `/id/${uid}`, status: 409, times: 1 });
    const report = await env.job();
    t.match(report.intake.documents, [
      { uid, result: 'skipped', skipped: /changed by another run or a user while being labelled/ },
    ]);
    t.same(report.tasks.workflow.counts, {});
    const next = await env.job();
    t.same(next.intake.counts.labelled, 1);
    t.same(next.tasks.workflow.counts, { DONE: 1 });
    t.equal(env.erp.tables.inbox.length, 1);
  },
);

t.test(
  'labels and claim refused (409), found not written or not read back: that scan alone is left, and the next run labels and sends it',
  async (t) => {
    const env = await sandboxEnv(t, { mapping: completeMapping() });
    const [unread, changed, other] = await scans(env, 3);
    for (const uid of [unread, changed]) env.sandbox.faults.add({ method: 'PUT', path: `/id/${uid}`, status: 409 });
    env.sandbox.faults.add({ method: 'GET', path: `/id/${unread}`, status: 503, times: 100 });
    const report = await env.job();
    const record = (uid: string) => report.intake.documents.find((d) => d.uid === uid);
    t.match(record(unread), { result: 'error', error: /503/ });
    t.match(record(changed), { result: 'skipped', skipped: /changed by another run or a user while being labelled/ });
    t.same(report.tasks.barcode.counts, { DONE: 1 }, 'their neighbour labelled and sent');
    t.equal(status(env, other), 'DONE');
    env.sandbox.faults.clear();
    const next = await env.job();
    t.same(next.tasks.barcode.counts, { DONE: 2 });
    t.equal(env.erp.tables.barcodes.length, 3, 'each sent once');
  },
);
