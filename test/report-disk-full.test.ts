import t, { type Test } from 'tap';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sandboxEnv, type Env } from './helpers/env.js';
import { startCli } from './helpers/run-cli.js';

/** Reports on a disk that fills (every file the run writes limited by `ulimit -f`): the linking goes on, the last good report stays. */

t.setTimeout(120_000);

const LAST_GOOD = '{"runId":"the last good one"}\n';

async function backlog(env: Env, count: number): Promise<void> {
  await Promise.all(Array.from({ length: count }, (_, i) => env.upload('ERP/Workflow', `approval-${i}.pdf`)));
}

t.test(
  'the disk fills while the run spools its records: every document is still sent, the last good report stays, exit 2 names the file and why',
  async (t) => {
    const env = await sandboxEnv(t);
    await backlog(env, 400);
    const reports = t.testdir();
    const json = join(reports, 'run.json');
    const html = join(reports, 'run.html');
    writeFileSync(json, LAST_GOOD);
    // The JSON report lists 400 documents with their values (about 400 KB); the page a row each
    // (about 130 KB): the one does not fit, the other does.
    const run = startCli(
      ['run', '--task', 'workflow', '--config', env.location.configDir, '--report', json, '--report-html', html],
      {},
      { fileSizeLimitKiB: 256 },
    );
    const { code, stdout, stderr } = await run.exited;
    t.equal(code, 2, 'a report not written is a problem of the run');
    t.match(stdout, /\ntask workflow: 400 DONE\n/, 'the 400 documents were sent all the same');
    t.equal(readFileSync(json, 'utf8'), LAST_GOOD, 'the last good report is left as it was');
    t.same(readdirSync(reports).sort(), ['run.html', 'run.json'], 'no spool or half-written file left behind');
    t.match(
      readFileSync(html, 'utf8'),
      `the report ${json} was not written`,
      'the page is written all the same, and says so',
    );
    const line = stderr.split('\n').find((l) => l.includes('"report not written"'));
    t.match(
      JSON.parse(line ?? '{}'),
      { level: 'error', file: json, reason: /EFBIG/ },
      'an error line names the file and the reason',
    );
    t.match(stdout, `the report ${json} was not written (EFBIG`, 'and so does the summary');
  },
);

/** A run of 3 documents with both reports, a folder put in the way of `blocked` while it waits on the repository: that one cannot be replaced. */
async function runWithBlocked(t: Test, blocked: 'run.json' | 'run.html') {
  const env = await sandboxEnv(t);
  await backlog(env, 3);
  const reports = t.testdir();
  const json = join(reports, 'run.json');
  const html = join(reports, 'run.html');
  env.sandbox.faults.hold();
  const run = startCli([
    'run',
    '--task',
    'workflow',
    '--config',
    env.location.configDir,
    '--report',
    json,
    '--report-html',
    html,
  ]);
  await env.sandbox.faults.whenHeld(1);
  mkdirSync(join(reports, blocked, 'in-the-way'), { recursive: true });
  env.sandbox.faults.release();
  return { ...(await run.exited), json, html };
}

t.test('a page that cannot be written names itself; the JSON report is written all the same', async (t) => {
  const { code, stdout, stderr, json, html } = await runWithBlocked(t, 'run.html');
  t.equal(code, 2);
  t.match(stdout, /\ntask workflow: 3 DONE\n/);
  t.match(JSON.parse(readFileSync(json, 'utf8')), { tasks: { workflow: { counts: { DONE: 3 } } } });
  t.match(stdout, `the report ${html} was not written (EISDIR`);
  t.match(stderr, /"level":"error".*"message":"report not written"/);
  t.match(
    JSON.parse(readFileSync(json, 'utf8')),
    { exitCode: 2, problems: [`the report ${html} was not written (EISDIR: illegal operation on a directory, rename`] },
    'the JSON report, written after the page, names it and exits as the run does',
  );
});

t.test('a JSON report that cannot be written names itself; the page is written all the same and says so', async (t) => {
  const { code, stdout, json, html } = await runWithBlocked(t, 'run.json');
  t.equal(code, 2);
  t.match(stdout, /\ntask workflow: 3 DONE\n/);
  t.match(stdout, `the report ${json} was not written (EISDIR`);
  t.match(readFileSync(html, 'utf8'), `the report ${json} was not written`);
});
