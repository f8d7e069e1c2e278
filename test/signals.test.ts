import t from 'tap';
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  constants,
  createReadStream,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { text } from 'node:stream/consumers';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as turn, setTimeout as sleep } from 'node:timers/promises';
import { sandboxEnv } from './helpers/env.js';
import { logLines, startCli, type Running } from './helpers/run-cli.js';
import type { RunReport } from '../src/job/report/report.js';

/** SIGTERM at the edges of a command: while the program starts, after a run has finished, and to a command that cannot wind down. */

// Processes of their own, each compiling the sources on start: several times tap's default on a busy machine.
t.setTimeout(300_000);

async function fileAppears(path: string): Promise<void> {
  // The hook writes it once the child's start-up reaches the held module: a step of the child, not a time.
  while (!existsSync(path)) await sleep(10);
}

t.test(
  'SIGTERM while the program is still loading: the run stops before its first request, exit 3, with its report',
  async (t) => {
    const env = await sandboxEnv(t);
    await env.upload('ERP/Workflow', 'approval.pdf');
    const before = env.snapshot();
    const hold = mkdtempSync(join(tmpdir(), 'c2e-hold-'));
    const report = join(env.dir, 'report.json');
    const run = startCli(
      ['run', '--config', env.location.configDir, '--report', report],
      { C2E_HOLD_DIR: hold },
      {
        execArgv: [`--import=${join(import.meta.dirname, 'helpers', 'hold-cli.mjs')}`],
      },
    );
    await fileAppears(join(hold, 'held'));
    run.child.kill('SIGTERM');
    writeFileSync(join(hold, 'release'), '');
    const { code, stdout } = await run.exited;

    t.equal(code, 3, 'ended by itself, as interrupted: not killed by the signal');
    const written = JSON.parse(readFileSync(report, 'utf8')) as RunReport;
    t.same(written.interrupted, { reason: 'SIGTERM', graceExpired: false, leftClaimed: [] });
    t.match(written.intake, { state: 'not run', reason: 'SIGTERM' });
    t.match(written.tasks.workflow, { state: 'not run', reason: 'SIGTERM', counts: {} });
    t.match(stdout, /\nintake: not run: the run ended before it \(SIGTERM\)\n/);
    t.match(
      stdout,
      /\ntask workflow: not run: the run ended before it \(SIGTERM\)\n/,
      'no "nothing to do" for a task that never ran',
    );
    t.equal(env.snapshot(), before, 'nothing was labelled or sent');
  },
);

t.test(
  'SIGTERM after the run finished, while its summary is still being written out: exit 0, the summary whole',
  async (t) => {
    const env = await sandboxEnv(t);
    // A dry run over this many documents prints about 150 KB: more than the 64 KiB a pipe holds.
    await Promise.all(Array.from({ length: 120 }, (_, i) => env.upload('ERP/Workflow', `approval-${i}.pdf`)));
    // Its standard output is a pipe that nobody reads until the test says so: the summary cannot be
    // written out, so the process cannot end, however fast the machine. (Opened read-write, a FIFO
    // does not wait for a reader to open.)
    const fifo = join(env.dir, 'stdout');
    execFileSync('mkfifo', [fifo]);
    const held = openSync(fifo, constants.O_RDWR);
    const run = startCli(['run', '--dry-run', '--config', env.location.configDir], {}, { stdout: held });
    await run.logged(/"message":"run finished"/);
    run.child.kill('SIGTERM');
    await run.logged(/"message":"run already finished".*"signal":"SIGTERM"/);
    const reader = createReadStream(fifo);
    closeSync(held); // the process is the only writer left: the reader ends when it exits
    const [stdout, { code }] = await Promise.all([text(reader), run.exited]);
    t.equal(code, 0, 'the run had finished: exit 0, not killed by the signal');
    t.ok(stdout.length > 64 * 1024, `the summary (${stdout.length} characters) did not fit into the pipe at once`);
    t.match(
      stdout,
      /\nERP calls that would be made:\n(.*ARCHIV_PROCESS_RFCINPUT.*\n){120}$/,
      'and it was written out to its end',
    );
  },
);

/** SIGTERM to `run` again and again, from now until it has exited: every instant of what is left. Resolves with how many were sent. */
async function flood(run: Running): Promise<number> {
  let exited = false;
  void run.exited.then(() => (exited = true));
  let sent = 0;
  while (!exited && run.child.kill('SIGTERM')) {
    sent++;
    await turn();
  }
  return sent;
}

t.test(
  'SIGTERM at every instant after the run finished: it keeps its exit code, never killed by the signal',
  async (t) => {
    const env = await sandboxEnv(t);
    await env.upload('ERP/Workflow', 'approval.pdf');
    // Before the fix, 9 of 10 such runs were killed by a signal in their last milliseconds (exit 143).
    for (let i = 0; i < 5; i++) {
      const run = startCli(['run', '--dry-run', '--config', env.location.configDir]);
      await run.logged(/"message":"run finished"/);
      const sent = await flood(run);
      const { code, stderr } = await run.exited;
      t.equal(code, 0, `run ${i}: exit 0 after ${sent} signals`);
      t.ok(logLines(stderr, 'run already finished') <= 1, 'a line for the signals, not one per signal');
    }
  },
);

t.test(
  'SIGTERM from each request of a run onwards, at every instant to its end: exit 3 and a whole report each time',
  async (t) => {
    // A request the sandbox has received is a step of the run, whatever the machine's speed: the
    // signals start there and go on until the process has exited.
    for (let k = 1; ; k += 3) {
      const env = await sandboxEnv(t);
      await env.upload('ERP/Workflow', 'approval.pdf');
      await env.upload('ERP/Invoices', 'invoice.pdf');
      const report = join(env.dir, 'report.json');
      let requests = 0;
      let flooding: Promise<number> | undefined;
      const run = startCli(['run', '--config', env.location.configDir, '--report', report]);
      const onRequest = (): void => {
        if (++requests === k) flooding = flood(run);
      };
      env.sandbox.faults.observe = onRequest;
      env.erp.faults.observe = onRequest;
      const { code, stderr } = await run.exited;
      if (flooding === undefined) {
        t.equal(code, 0, `a run of ${requests} requests, none signalled, ends by itself`);
        break;
      }
      const sent = await flooding;
      t.equal(code, 3, `from request ${k} of ${requests}: exit 3 after ${sent} signals`);
      t.ok(
        logLines(stderr, 'already stopping') <= 1 && logLines(stderr, 'run already finished') <= 1,
        'the signals after the first: a line each while the run winds down and after it, not one per signal',
      );
      t.match(JSON.parse(readFileSync(report, 'utf8')), { exitCode: 3, interrupted: { reason: 'SIGTERM' } });
    }
  },
);

t.test(
  'SIGTERM to a command that cannot wind down (status waiting on the repository) ends it at once, exit 3',
  async (t) => {
    const env = await sandboxEnv(t);
    env.sandbox.faults.hold();
    const status = startCli(['status', '--config', env.location.configDir]);
    await env.sandbox.faults.whenHeld(1);
    status.child.kill('SIGTERM');
    const { code, stdout } = await status.exited;
    env.sandbox.faults.release();
    t.equal(code, 3);
    t.equal(stdout, '', 'nothing half printed');
  },
);

t.test(
  'a run stopped during its intake: the intake says it stopped early, every task that it never ran (in-process)',
  async (t) => {
    const env = await sandboxEnv(t, { storage: { pageSize: '1' } });
    await Promise.all(Array.from({ length: 6 }, (_, i) => env.upload('ERP/Workflow', `approval-${i}.pdf`)));
    const stop = new AbortController();
    // Stopped as the first document is labelled: at most the two pages under way and the one read
    // ahead are labelled, no page after them is read.
    const report = await env.job({ stop: stop.signal, observer: { document: () => stop.abort('SIGTERM') } });
    t.equal(report.exitCode, 3);
    t.match(report.intake, { state: 'stopped', reason: 'SIGTERM' });
    t.ok(
      report.intake.counts.labelled >= 1 && report.intake.counts.labelled <= 3,
      `${report.intake.counts.labelled} of 6 labelled`,
    );
    t.same(
      Object.values(report.tasks).map((task) => [task.state, task.reason]),
      [
        ['not run', 'SIGTERM'],
        ['not run', 'SIGTERM'],
        ['not run', 'SIGTERM'],
      ],
    );
  },
);

t.test('a run stopped by a signal before it began reports every task as not run (in-process)', async (t) => {
  const env = await sandboxEnv(t);
  await env.upload('ERP/Workflow', 'approval.pdf');
  const stop = new AbortController();
  stop.abort('SIGTERM');
  const report = await env.job({ stop: stop.signal });
  t.equal(report.exitCode, 3);
  t.same(
    Object.values(report.tasks).map((task) => task.state),
    ['not run', 'not run', 'not run'],
  );
  t.equal(report.mappingFile, undefined, 'not even the mapping file was read');
});
