import t, { type Test } from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sandboxEnv } from './helpers/env.js';
import { cli, PROJECT, startCli } from './helpers/run-cli.js';
import { loadCrontab } from '../src/config/crontab.js';
import { configLocation } from '../src/config/location.js';
import { loadConfig } from '../src/config/load.js';
import { ConfigError } from '../common/errors.js';

// The scheduler starts real runs as child processes on its ticks: more than tap's default 30 s per file on a loaded 2-core machine.
t.setTimeout(300_000);

/** The crontab, its checks against the jobs, and the scheduled container. */

const shipped = loadConfig(configLocation({ config: join(PROJECT, 'config') }));

function problems(t: Test, text: string): string[] {
  const file = join(t.testdir(), 'crontab');
  writeFileSync(file, text);
  try {
    loadCrontab(file, shipped.tasks, 'jobs');
    return [];
  } catch (error) {
    return (error as ConfigError).problems.map((p) => `${p.path}: ${p.message}`);
  }
}

t.test('the shipped crontab runs every task at its job file schedule', async (t) => {
  const entries = loadCrontab(join(PROJECT, 'crontab'), shipped.tasks, 'jobs');
  t.same(
    entries.map((e) => [e.task, e.schedule]).sort(),
    shipped.tasks.map((task) => [task.name, task.schedule]).sort(),
  );
  const { code, stdout } = await cli(['validate']);
  t.equal(code, 0);
  t.match(stdout, 'configuration is valid: 3 task(s), 1 ERP system(s), 3 schedule(s)');
});

t.test('every problem of a crontab, with its line', async (t) => {
  t.same(
    problems(
      t,
      [
        '# comment',
        '*/5 * * * * connect2erp run --task link',
        '*/10 * * * * connect2erp run --task barcode --max-duration 1500',
        '61 * * * * connect2erp run --task workflow',
        '* * * * * run --task link',
        '* * * * * connect2erp retry',
        '* * * * * connect2erp run --task link --config /etc/other',
        '*/7 * * * * connect2erp run --task workflow --grace 20s',
        '* * * * * connect2erp run --task invoices',
      ].join('\n'),
    ),
    [
      'line 3: --max-duration "1500" is not a duration such as 90s, 25m or 1h',
      'line 4: "61 * * * *" is not a cron expression: CronPattern: Invalid value for minute: 61',
      'line 5: expected "<cron expression> connect2erp run [options]"',
      'line 6: only "connect2erp run" can be scheduled, not "connect2erp retry"',
      "line 7: Unknown option '--config'; a line may give --task, --dry-run, --max-duration, --grace, --report, --report-html",
      'line 8: runs task workflow at "*/7 * * * *" but its job file says schedule "2-59/5 * * * *"; make them the same',
      'line 9: no task named "invoices" in jobs',
      ': task barcode is enabled but no line runs it',
    ],
  );
  t.same(problems(t, '# nothing\n\n'), [': no schedule lines']);
  t.same(problems(t, '*/5 * * * * connect2erp run\n'), [], 'a line without --task runs every task');
  const { code, stderr } = await cli(['validate', '--crontab', join(t.testdir(), 'absent')]);
  t.equal(code, 2, 'a crontab that is named must exist');
  t.match(stderr, /absent: cannot read the crontab/);
  const env = await sandboxEnv(t);
  const without = await cli(['validate', '--config', env.location.configDir]);
  t.equal(without.code, 0, 'a deployment without the scheduled container needs no crontab');
  t.match(without.stdout, '3 task(s), 1 ERP system(s), no crontab');
});

t.test(
  'the scheduled container: runs on schedule, never a task twice at once, SIGTERM winds the run down',
  async (t) => {
    const env = await sandboxEnv(t);
    const { configDir, jobsDir } = env.location;
    for (const task of ['link', 'barcode']) {
      const file = join(jobsDir, `${task}.yaml`);
      writeFileSync(file, readFileSync(file, 'utf8').replace('enabled: true', 'enabled: false'));
    }
    const workflow = join(jobsDir, 'workflow.yaml');
    writeFileSync(workflow, readFileSync(workflow, 'utf8').replace(/^schedule: .*$/m, 'schedule: "* * * * * *"'));
    const crontab = join(env.dir, 'crontab');
    // Every second, and every other second for all tasks (that is, workflow again): the two lines must not overlap either.
    writeFileSync(crontab, '* * * * * * connect2erp run --task workflow\n*/2 * * * * * connect2erp run\n');
    const uids = await Promise.all(
      Array.from({ length: 4 }, (_, i) => env.upload('ERP/Workflow', `approval-${i}.pdf`)),
    );
    env.sandbox.faults.latencyMs = 250; // each run makes several repository requests: it lasts well over a second

    const scheduler = startCli(['schedule', '--config', configDir, '--crontab', crontab]);
    const events = () =>
      scheduler
        .output()
        .stderr.split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    const scheduled = (message: string) => events().filter((e) => e.message === message);
    const deadline = Date.now() + 60_000;
    while (
      scheduled('scheduled run finished').length < 2 ||
      scheduled('scheduled run skipped: the task is still running').length < 2
    ) {
      if (Date.now() > deadline) throw new Error(`no runs: ${scheduler.output().stderr}`);
      await sleep(20);
    }
    // A run under way: started by the scheduler and past its own start (its signal handlers are in place).
    while (
      scheduled('scheduled run started').length === scheduled('scheduled run finished').length ||
      scheduled('run started').length < scheduled('scheduled run started').length
    )
      await sleep(5);
    scheduler.child.kill('SIGTERM');
    const { code } = await scheduler.exited;

    t.equal(code, 3, 'the scheduler exits 3 once its run has wound down');
    const all = events();
    t.equal(all.filter((e) => e.message === 'schedule loaded').length, 2, 'both lines loaded');
    let running = 0;
    let most = 0;
    for (const e of all) {
      if (e.message === 'scheduled run started') running++;
      if (e.message === 'scheduled run finished') running--;
      most = Math.max(most, running);
    }
    t.equal(most, 1, 'never two runs of the task at once');
    t.equal(running, 0, 'every run started has finished');
    const last = all.filter((e) => e.message === 'scheduled run finished').at(-1);
    t.equal(last?.exitCode, 3, 'the run under way got the SIGTERM and ended as interrupted');
    t.ok(
      all.some((e) => e.message === 'run stopping' && e.reason === 'SIGTERM'),
      "the run's own log says why it stopped",
    );
    t.ok(all.some((e) => e.message === 'schedule stopping' && e.signal === 'SIGTERM'));
    t.same(
      uids.map((uid) => env.sandbox.store.get(uid)?.properties['erpTaskStatus:status']),
      ['DONE', 'DONE', 'DONE', 'DONE'],
      'the scheduled runs did the work',
    );
    t.equal(env.erp.tables.inbox.length, 4, 'once each');
  },
);
