import t from 'tap';
import { quietLog, sandboxEnv, type Env } from './helpers/env.js';
import { cli as run } from './helpers/run-cli.js';
import { retryFailed } from '../src/operator/retry.js';
import { renderStatus, taskStatus } from '../src/operator/status.js';
import { dryRunWriter, liveWriter } from '../src/ports/repository-writer.js';

// Operator commands run as child processes, with whole runs between them: 30 s on an idle machine,
// 108 s once on a busy one; the time-out leaves room for a machine busier still.
t.setTimeout(360_000);

/** The operator commands: what state the documents are in, and putting failures back. */

/** The command against this test's sandbox configuration, a while after the last write: the search index has it. */
const cli = (env: Env, args: string[]) => {
  env.sandbox.index.catchUp();
  return run([...args, '--config', env.location.configDir]);
};

/** Two invoices that fail (one unknown object type, one value too long), one waiting, one workflow done. */
async function failures(env: Env) {
  const wrong = await env.upload('ERP/Invoices', 'wrong.pdf');
  const long = await env.upload('ERP/Invoices', 'long.pdf');
  const waiting = await env.upload('ERP/Invoices', 'waiting.pdf');
  const flow = await env.upload('ERP/Workflow', 'flow.pdf');
  await env.job({ task: 'barcode' });
  env.fill(wrong, { 'erpCreateALDocument:erpObjectId': '1', 'erpCreateALDocument:erpObject': 'VBRK' });
  env.fill(long, { 'erpCreateALDocument:erpObjectId': 'x'.repeat(51) });
  await env.run();
  env.sandbox.index.catchUp(); // the operator looks a while later: the search index has the run's writes
  return { wrong, long, waiting, flow };
}

t.test('status counts documents per status per task and lists the failures with their messages', async (t) => {
  const env = await sandboxEnv(t);
  const { wrong } = await failures(env);
  const status = await taskStatus(env.config.tasks, env.client);
  t.match(
    status.find((s) => s.task === 'link'),
    { counts: { FAILED: 2, PENDING_INPUT: 1, DONE: 0, READY: 0, RETRY: 0, IN_PROGRESS: 0 } },
  );
  t.match(
    status.find((s) => s.task === 'workflow'),
    { counts: { DONE: 1, FAILED: 0 }, failures: [] },
  );
  const link = status.find((s) => s.task === 'link')!;
  t.match(
    link.failures.find((f) => f.uid === wrong),
    { message: /Combination of object type VBRK and document type ZFIINVOICE not maintained/ },
  );
  const text = renderStatus(status);
  t.match(text, /^task\s+PENDING_INPUT\s+READY\s+IN_PROGRESS\s+RETRY\s+DONE\s+FAILED\n/);
  t.match(text, /\nlink\s+1\s+0\s+0\s+0\s+0\s+2\n/);
  t.match(text, /\nfailed in task link:\n/);
  t.match(renderStatus(await taskStatus(env.config.tasks, env.client, 1)), /failed in task link \(first 1 of 2\):/);
  env.fill(wrong, { 'erpTaskStatus:message': null });
  t.match(
    renderStatus(await taskStatus(env.config.tasks, env.client)),
    /wrong\.pdf \([0-9a-f-]+\)\n {4}(\n|$)/,
    'a failure set by hand may have no message',
  );

  const shown = await cli(env, ['status', '--task', 'link']);
  t.equal(shown.code, 0, shown.stderr);
  t.match(shown.stdout, /\nlink\s+1\s+0\s+0\s+0\s+0\s+2\n/);
  t.notMatch(shown.stdout, /\nworkflow/, '--task shows one task');
  const unknown = await cli(env, ['status', '--task', 'nope']);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, 'no task named "nope"; the tasks: barcode, link, workflow');
});

t.test('retry puts FAILED documents back, one or all, and the next run sends them again', async (t) => {
  const env = await sandboxEnv(t);
  const { wrong, long, waiting, flow } = await failures(env);
  const dry = await retryFailed({ tasks: env.config.tasks }, env.client, dryRunWriter(), quietLog);
  t.equal(dry.length, 2, 'a dry run names both');
  t.equal(env.props(wrong)['erpTaskStatus:status'], 'FAILED', '…and changes nothing');

  const refused = await cli(env, ['retry', '--doc', flow]);
  t.equal(refused.code, 1);
  t.match(refused.stderr, /flow\.pdf \([0-9a-f-]+\) is DONE, not FAILED/);
  const unknown = await cli(env, ['retry', '--doc', 'no-such-uid']);
  t.equal(unknown.code, 2, 'a usage error');
  t.match(unknown.stderr, 'no document has the uid no-such-uid');
  t.match(
    (await cli(env, ['retry', '--task', 'workflow', '--doc', wrong])).stderr,
    /belongs to none of the tasks workflow/,
  );
  t.match(
    (await cli(env, ['retry', '--doc', env.sandbox.store.getByPath('/default-domain')!.uid])).stderr,
    /is not a task document, not FAILED/,
  );

  env.fill(wrong, { 'erpCreateALDocument:erpObject': 'BKPF' });
  const one = await cli(env, ['retry', '--doc', wrong]);
  t.equal(one.code, 0, one.stderr);
  t.match(one.stdout, /^1 document\(s\) put back to READY\n\s+\/.*wrong\.pdf/);
  t.match(env.props(wrong), {
    'erpTaskStatus:status': 'READY',
    'erpTaskStatus:attempts': 0,
    'erpTaskStatus:message': null,
  });
  t.equal(env.props(long)['erpTaskStatus:status'], 'FAILED', 'only that one');
  const report = await env.run();
  t.equal(report.tasks.link.counts.DONE, 1, 'the corrected document is linked');

  env.sandbox.faults.add({
    method: 'PUT',
    path: `/id/${long}`,
    status: 500,
    body: '{"entity-type":"exception","status":500,"message":"disk full"}',
  });
  await t.rejects(
    retryFailed({ tasks: env.config.tasks }, env.client, liveWriter(env.client), quietLog),
    /failed with HTTP 500: disk full/,
    'any other error stops the command',
  );
  // A document a run changes meanwhile is left alone; the others are put back.
  env.sandbox.faults.add({
    method: 'PUT',
    path: `/id/${long}`,
    status: 409,
    body: '{"entity-type":"exception","status":409,"message":"Invalid change token"}',
  });
  t.same(
    await retryFailed({ tasks: env.config.tasks }, env.client, liveWriter(env.client), quietLog),
    [],
    'the conflict leaves it',
  );
  const all = await cli(env, ['retry', '--task', 'link', '--dry-run']);
  t.match(all.stdout, /^1 document\(s\) would be put back to READY/);
  t.match(all.stderr, /"message":"document would be put back"/, 'the log says what it would do…');
  t.notMatch(all.stderr, /"message":"document put back"/, '…not that it did');
  t.equal(env.props(waiting)['erpTaskStatus:status'], 'PENDING_INPUT', 'waiting documents are not touched');
});

t.test('template prints a built-in call as YAML', async (t) => {
  const printed = await run(['template', 'Link', 'REST']);
  t.equal(printed.code, 0, 'in any case');
  t.match(printed.stdout, /^rest:\n {2}service: \/sap\/opu\/odata\/sap\/API_CV_ATTACHMENT_SRV\n/);
  t.equal((await run(['template', 'link', 'constructor'])).code, 2, 'nothing but RFC or Rest');
  const wrong = await run(['template', 'link', 'SOAP']);
  t.equal(wrong.code, 2);
  t.match(
    wrong.stderr,
    'usage: connect2erp template link|link-by-reference|barcode|workflow|workflow-to-agent|read-supplier-invoice|read-purchase-order RFC|Rest',
  );
  const none = await run(['template', 'barcode', 'Rest']);
  t.equal(none.code, 2);
  t.match(none.stderr, 'no Rest template for barcode: SAP offers no standard REST service for it');
});
