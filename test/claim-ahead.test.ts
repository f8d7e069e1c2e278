import t, { type Test } from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { quietLog, sandboxEnv, type Env } from './helpers/env.js';
import { cli, startCli } from './helpers/run-cli.js';
import { until } from './helpers/until.js';
import { runJob } from '../src/job/run.js';
import { exceptionXml } from '../sandbox/erp/soap-codec.js';
import { NO_BLOBS, type StoredDoc } from '../sandbox/repository/store.js';

/**
 * A call SAP can be asked about (a link's lookup) has its documents claimed while they wait for a
 * slot, so no slot waits for a claim: what that costs a crash, and a claim that waited long.
 */

t.setTimeout(300_000);

/** Invoices labelled by the intake and given their SAP object: READY for the link task. */
async function readyInvoices(env: Env, n: number): Promise<string[]> {
  const uids = await Promise.all(Array.from({ length: n }, (_, i) => env.upload('ERP/Invoices', `invoice-${i}.pdf`)));
  await env.job({ task: 'link' });
  uids.forEach((uid, i) => env.fill(uid, { 'erpCreateALDocument:erpObjectId': `INV-${i}` }));
  env.sandbox.index.catchUp();
  return uids;
}

const status = (env: Env, uid: string): unknown => env.props(uid)['erpTaskStatus:status'];

/** A claim as another run writes one: IN_PROGRESS, its name, an expiry a minute away. */
const anotherRunsClaim = (): Record<string, unknown> => ({
  'erpTaskStatus:status': 'IN_PROGRESS',
  'erpTaskStatus:claimedBy': 'another-run',
  'erpTaskStatus:claimExpires': new Date(Date.now() + 60_000).toISOString(),
});

/** Three scans labelled by the intake, the second with a bar code SAP refuses: their list is refused, each goes again alone. */
async function listWithABadCode(env: Env): Promise<string[]> {
  const codes = ['BC-0001', 'bad code!', 'BC-0003'];
  const scans = await Promise.all(codes.map((_, i) => env.upload('ERP/Barcode', `scan-${i + 1}.pdf`)));
  await env.run();
  codes.forEach((code, i) => env.fill(scans[i], { 'erpBarcode:barcode': code }));
  env.sandbox.index.catchUp();
  return scans;
}

/** The function modules SAP is asked from now on, in order. */
function askedFunctions(env: Env): string[] {
  const asked: string[] = [];
  env.erp.faults.observe = (_req, _res, functionName) => void (functionName !== undefined && asked.push(functionName));
  return asked;
}

/** SAP well again: the next run looks the invoice's link up before it sends it, and links it. */
async function looksUpFirst(t: Test, env: Env): Promise<void> {
  env.erp.faults.clear();
  const asked = askedFunctions(env);
  const next = await env.job({ task: 'link', observer: { now: () => new Date(Date.now() + 1_000) } });
  t.same(next.tasks.link.counts, { DONE: 1 });
  t.same(asked, ['ARCHIV_GET_CONNECTIONS', 'ARCHIV_CONNECTION_INSERT'], 'looked up first');
}

function oneCall(env: Env): void {
  const erpYaml = join(env.location.configDir, 'erpHttp.yaml');
  writeFileSync(erpYaml, readFileSync(erpYaml, 'utf8').replace('maxConcurrentCalls: 8', 'maxConcurrentCalls: 1'));
}

t.test('a claim that waited more than 30 s for its slot is written again before its call', async (t) => {
  const env = await sandboxEnv(t);
  oneCall(env);
  const [first, second] = await readyInvoices(env, 2);
  const puts = new Map<string, number>();
  env.sandbox.faults.observe = (req) => {
    const uid = /\/id\/([^/?]+)$/.exec(req.url ?? '')?.[1];
    if (req.method === 'PUT' && uid !== undefined) puts.set(uid, (puts.get(uid) ?? 0) + 1);
  };
  let clock = Date.now();
  env.erp.faults.hold(); // the first call holds the one slot
  const run = runJob(
    { location: env.location, dryRun: false, task: 'link', observer: { now: () => new Date(clock) } },
    quietLog,
  );
  await env.erp.faults.whenHeld(1);
  await until(() => status(env, first) === 'IN_PROGRESS' && status(env, second) === 'IN_PROGRESS', 'both claimed');
  const claimedAt = (uid: string): number => Date.parse(String(env.props(uid)['erpTaskStatus:lastAttempt']));
  // Which of the two holds the slot is the search's order: the other was claimed ahead.
  const aheadAt = new Map([first, second].map((uid) => [uid, claimedAt(uid)]));
  clock += 31_000;
  env.erp.faults.release();
  const report = await run;

  t.same(report.tasks.link.counts, { DONE: 2 });
  const [out, ahead] = puts.get(first) === 2 ? [first, second] : [second, first];
  t.same(puts.get(out), 2, 'the one that went out at once: its claim and its DONE');
  t.same(puts.get(ahead), 3, 'the one claimed ahead while the other held the slot: its claim, again, and its DONE');
  t.equal(
    claimedAt(ahead) - (aheadAt.get(ahead) as number),
    31_000,
    'its claim written again when its slot came, to hold from then on',
  );
  t.equal(env.erp.tables.links.length, 2, 'one link each');
});

t.test(
  'a run killed with links claimed ahead of their slots: a later run looks each up, sends it once, fails none',
  async (t) => {
    const env = await sandboxEnv(t);
    const uids = await readyInvoices(env, 24);
    env.erp.faults.hold(); // SAP has the first 8 calls and has not answered when the run dies
    const run = startCli(['run', '--task', 'link', '--config', env.location.configDir]);
    await env.erp.faults.whenHeld(8);
    await until(() => uids.filter((uid) => status(env, uid) === 'IN_PROGRESS').length === 16, '8 more claimed ahead');
    run.child.kill('SIGKILL');
    await run.exited;
    t.equal(
      uids.filter((uid) => status(env, uid) === 'IN_PROGRESS').length,
      16,
      'the calls out and as many claimed ahead (maxConcurrentCalls 8 each); the other 8 unclaimed',
    );
    env.erp.faults.release(); // SAP makes the 8 links it had; the answers go nowhere
    const later = new Date(Date.now() + 3_600_000); // the dead run's claims have expired
    env.sandbox.index.catchUp();
    const next = await runJob(
      { location: env.location, dryRun: false, task: 'link', observer: { now: () => later } },
      quietLog,
    );
    t.same(next.tasks.link.counts, { DONE: 24 }, 'taken over and looked up: none for an operator');
    t.equal(env.erp.tables.links.length, 24, 'one link per invoice');
    t.equal(new Set(env.erp.tables.links.map((link) => link.ARC_DOC_ID)).size, 24);
  },
);

t.test(
  'the repository refusing the credentials while links are claimed ahead stops the run: none waits for a place forever',
  async (t) => {
    t.setTimeout(60_000);
    const env = await sandboxEnv(t);
    oneCall(env);
    await readyInvoices(env, 3);
    const refused = { status: 401, headers: { 'Content-Type': 'text/html' }, body: '<h1>401 Unauthorized</h1>' };
    env.sandbox.faults.add({ method: 'PUT', ...refused, times: 1 }); // the first claim
    const report = await runJob({ location: env.location, dryRun: false, task: 'link' }, quietLog);
    t.equal(report.exitCode, 2);
    t.match(report.problems.join('\n'), /failed with HTTP 401 \(check the credentials in storage\.yaml\)/);
  },
);

t.test(
  'a link another run claims between the search and its claim is left to it, and its place to claim ahead goes to the next at once',
  async (t) => {
    t.setTimeout(60_000);
    const env = await sandboxEnv(t);
    oneCall(env); // one slot and one place to claim ahead
    const uids = await readyInvoices(env, 3);
    let puts = 0;
    let takenElsewhere: string | undefined;
    env.sandbox.faults.observe = (req) => {
      const uid = uids.find((one) => req.url?.endsWith(`/id/${one}`));
      if (req.method !== 'PUT' || uid === undefined || ++puts !== 2) return;
      // The second claim (the first goes out in the slot): another run's lands first, so this run's,
      // written with the change token its search read, meets a 409.
      takenElsewhere = uid;
      const { store } = env.sandbox;
      const doc = store.get(uid) as StoredDoc;
      store.update(env.sandbox.actor(), doc, anotherRunsClaim(), NO_BLOBS, { changeToken: store.changeToken(doc) });
    };
    const asked = askedFunctions(env);
    env.erp.faults.hold(); // the first link's call holds the one slot
    const run = runJob({ location: env.location, dryRun: false, task: 'link' }, quietLog);
    await env.erp.faults.whenHeld(1);
    // A unit with nothing claimed waits for no slot: the place it had goes to the third link while the call is out.
    await until(() => uids.every((uid) => status(env, uid) === 'IN_PROGRESS'), 'the third claimed ahead');
    env.erp.faults.release();
    const report = await run;
    t.same(report.tasks.link.counts, { CLAIMED_ELSEWHERE: 1, DONE: 2 });
    t.same(asked, ['ARCHIV_CONNECTION_INSERT', 'ARCHIV_CONNECTION_INSERT'], 'none for the one another run holds');
    t.equal(env.props(takenElsewhere as string)['erpTaskStatus:claimedBy'], 'another-run', 'left to it');
  },
);

t.test(
  'a link taken over from a dead run waits for its slot unclaimed: stopped before it, it stays taken over and is looked up later',
  async (t) => {
    const env = await sandboxEnv(t);
    oneCall(env);
    const uids = await readyInvoices(env, 2);
    const past = new Date(Date.now() - 60_000).toISOString();
    for (const uid of uids)
      env.fill(uid, {
        'erpTaskStatus:status': 'IN_PROGRESS',
        'erpTaskStatus:task': 'link',
        'erpTaskStatus:claimedBy': 'dead-run/1',
        'erpTaskStatus:claimExpires': past,
      });
    env.sandbox.index.catchUp();
    env.erp.faults.hold(); // the first document's lookup holds the one slot
    const stop = new AbortController();
    const run = runJob({ location: env.location, dryRun: false, task: 'link', stop: stop.signal }, quietLog);
    await env.erp.faults.whenHeld(1);
    stop.abort('SIGTERM');
    env.erp.faults.release();
    const report = await run;
    t.equal(report.exitCode, 3);
    const waited = uids.filter((uid) => env.props(uid)['erpTaskStatus:claimedBy'] === 'dead-run/1');
    t.equal(waited.length, 1, 'the one that waited for the slot was never claimed: still the dead run’s, taken over');
    t.equal(env.props(waited[0])['erpTaskStatus:status'], 'IN_PROGRESS');

    const lookups: string[] = [];
    env.erp.faults.observe = (_req, _res, functionName) =>
      void (functionName !== undefined && lookups.push(functionName));
    const next = await env.job({ task: 'link' });
    t.equal(next.tasks.link.counts.RELEASED, undefined);
    t.equal(env.props(waited[0])['erpTaskStatus:status'], 'DONE');
    t.ok(lookups.includes('ARCHIV_GET_CONNECTIONS'), 'looked up before it is sent again');
    t.equal(
      new Set(env.erp.tables.links.map((link) => link.ARC_DOC_ID)).size,
      env.erp.tables.links.length,
      'no invoice linked twice',
    );
  },
);

t.test(
  'a link taken over from a dead run whose lookup meets SAP down stays taken over: the next run looks it up, never sends it blind',
  async (t) => {
    const env = await sandboxEnv(t);
    const [uid] = await readyInvoices(env, 1);
    env.fill(uid, {
      'erpTaskStatus:status': 'IN_PROGRESS',
      'erpTaskStatus:task': 'link',
      'erpTaskStatus:claimedBy': 'dead-run/1',
      'erpTaskStatus:claimExpires': new Date(Date.now() - 60_000).toISOString(),
    });
    env.sandbox.index.catchUp();
    env.erp.faults.add({ functionName: 'ARCHIV_GET_CONNECTIONS', status: 503, times: 10 });
    const down = await env.job({ task: 'link' });
    t.same(down.tasks.link.counts, { RELEASED: 1 });
    t.match(env.props(uid), { 'erpTaskStatus:status': 'IN_PROGRESS', 'erpTaskStatus:attempts': 0 });

    await looksUpFirst(t, env);
  },
);

t.test(
  'a bar code sent again alone after SAP refused its list, whose lookup meets SAP down, is not left READY to be sent blind',
  async (t) => {
    const env = await sandboxEnv(t);
    const scans = await listWithABadCode(env);
    // SAP refuses the list for its bad row; each goes again alone, looked up first, and SAP is down by then.
    env.erp.faults.add({ functionName: 'RFC_READ_TABLE', status: 503, times: 1_000 });
    const down = await runJob({ location: env.location, dryRun: false, task: 'barcode' }, quietLog);
    t.same(down.tasks.barcode.counts, { RELEASED: 3 });
    t.same(
      scans.map((uid) => [status(env, uid), env.props(uid)['erpTaskStatus:attempts']]),
      scans.map(() => ['IN_PROGRESS', 0]),
      'none READY with its attempts unchanged, which the next run would send without a lookup',
    );

    env.erp.faults.clear();
    const asked = askedFunctions(env);
    const later = new Date(Date.now() + 1_000); // every claim given back expired at once
    env.sandbox.index.catchUp();
    const next = await runJob(
      { location: env.location, dryRun: false, task: 'barcode', observer: { now: () => later } },
      quietLog,
    );
    t.same(next.tasks.barcode.counts, { DONE: 2, FAILED: 1 });
    t.ok(
      asked.includes('RFC_READ_TABLE') && asked.indexOf('RFC_READ_TABLE') < asked.indexOf('BAPI_BARCODE_SENDLIST'),
      `looked up before anything was sent: ${asked.join(', ')}`,
    );
    t.same(env.erp.tables.barcodes.map((row) => row.BARCODE).sort(), ['BC-0001', 'BC-0003']);
  },
);

t.test('a link that ends in a runtime error once is looked up, sent again and linked once', async (t) => {
  const env = await sandboxEnv(t);
  await readyInvoices(env, 1);
  env.erp.faults.add({
    functionName: 'ARCHIV_CONNECTION_INSERT',
    status: 500,
    headers: { 'content-type': 'text/xml; charset=utf-8' },
    body: exceptionXml('ARCHIV_CONNECTION_INSERT', { name: 'SYSTEM_FAILURE', text: 'Runtime error CONVT_NO_NUMBER' }),
  });
  const asked = askedFunctions(env);
  const run = await env.job({ task: 'link' });
  t.same(run.tasks.link.counts, { DONE: 1 });
  t.same(asked, ['ARCHIV_CONNECTION_INSERT', 'ARCHIV_GET_CONNECTIONS', 'ARCHIV_CONNECTION_INSERT']);
  t.equal(env.erp.tables.links.length, 1);
});

t.test(
  'a link sent again after a runtime error, whose lookup meets SAP down, is not left READY to be sent blind',
  async (t) => {
    const env = await sandboxEnv(t);
    const [uid] = await readyInvoices(env, 1);
    // SAP dumps on the link (it may have stored it), and is down when the link is looked up to be sent again.
    env.erp.faults.add({
      functionName: 'ARCHIV_CONNECTION_INSERT',
      status: 500,
      headers: { 'content-type': 'text/xml; charset=utf-8' },
      body: exceptionXml('ARCHIV_CONNECTION_INSERT', { name: 'SYSTEM_FAILURE', text: 'Runtime error CONVT_NO_NUMBER' }),
    });
    env.erp.faults.add({ functionName: 'ARCHIV_GET_CONNECTIONS', status: 503, times: 1_000 });
    const down = await env.job({ task: 'link' });
    t.same(down.tasks.link.counts, { RELEASED: 1 });
    t.match(
      env.props(uid),
      { 'erpTaskStatus:status': 'IN_PROGRESS', 'erpTaskStatus:attempts': 0 },
      'taken over, not READY',
    );

    await looksUpFirst(t, env);
  },
);

t.test(
  'bar codes of a refused list given back unsent go back READY when the call has no lookup: nothing to ask SAP',
  async (t) => {
    const env = await sandboxEnv(t);
    // The built-in call without its lookup, as a custom template may be.
    const task = readFileSync(join(env.location.jobsDir, 'barcode.yaml'), 'utf8');
    const { stdout } = await cli(['template', 'barcode', 'RFC']);
    const withoutLookup = stdout.replace(/^ {2}lookup:\n(?: {4}.*\n)+/m, '');
    t.notMatch(withoutLookup, /lookup/);
    writeFileSync(join(env.location.jobsDir, 'barcode.yaml'), `${task}${withoutLookup}`);
    const scans = await listWithABadCode(env);
    // SAP refuses the list for its bad row, and is down when each goes again alone.
    env.erp.faults.add({ functionName: 'BAPI_BARCODE_SENDLIST', status: 503, skip: 1, times: 1_000 });
    const down = await runJob({ location: env.location, dryRun: false, task: 'barcode' }, quietLog);
    t.same(down.tasks.barcode.counts, { RELEASED: 3 });
    t.same(
      scans.map((uid) => [status(env, uid), env.props(uid)['erpTaskStatus:attempts']]),
      scans.map(() => ['READY', 0]),
      'READY, no attempt charged: taken over, a call without a lookup would go to an operator',
    );
    env.erp.faults.clear();
    env.sandbox.index.catchUp();
    const next = await runJob({ location: env.location, dryRun: false, task: 'barcode' }, quietLog);
    t.same(next.tasks.barcode.counts, { DONE: 2, FAILED: 1 });
    t.same(env.erp.tables.barcodes.map((row) => row.BARCODE).sort(), ['BC-0001', 'BC-0003']);
  },
);
