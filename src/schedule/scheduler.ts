import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Cron } from 'croner';
import type { CrontabEntry } from '../config/crontab.js';
import type { Logger } from '../log.js';

export interface ScheduleOptions {
  entries: CrontabEntry[];
  /** Every enabled task, for lines that run them all. */
  taskNames: string[];
  /** Appended to each line's arguments: the scheduler's own configuration and jobs folders. */
  location: { configDir: string; jobsDir: string };
  log: Logger;
}

export interface Scheduler {
  /** Stop ticking, pass SIGTERM on to the runs under way and wait for them to end. */
  stop(): Promise<void>;
}

/** `connect2erp ARGS` as a child of this process, started the way this process was. */
function spawnRun(args: string[]): ChildProcess {
  return spawn(process.execPath, [...process.execArgv, process.argv[1], ...args], { stdio: 'inherit' });
}

/**
 * The scheduled container: each crontab line ticks on its own, and each tick runs
 * `connect2erp run …` as a child process, so a run's memory and crashes end with it. A tick
 * is skipped while any task it would run is still running from an earlier tick (of any
 * line): a task never overlaps itself.
 */
export function startScheduler(options: ScheduleOptions): Scheduler {
  const busy = new Set<string>();
  const running = new Set<ChildProcess>();
  const { log } = options;

  const tick = async (entry: CrontabEntry): Promise<void> => {
    const tasks = entry.task === undefined ? options.taskNames : [entry.task];
    const fields = { line: entry.line, tasks };
    if (tasks.some((name) => busy.has(name))) {
      log.warn('scheduled run skipped: the task is still running', fields);
      return;
    }
    for (const name of tasks) busy.add(name);
    const started = Date.now();
    const child = spawnRun([...entry.args, '--config', options.location.configDir, '--jobs', options.location.jobsDir]);
    running.add(child);
    log.info('scheduled run started', { ...fields, pid: child.pid });
    const [exitCode, signal] = (await once(child, 'exit')) as [number | null, string | null];
    running.delete(child);
    for (const name of tasks) busy.delete(name);
    log.info('scheduled run finished', { ...fields, pid: child.pid, exitCode, signal, durationMs: Date.now() - started });
  };

  const crons = options.entries.map((entry) => new Cron(entry.schedule, { name: `line ${entry.line}` }, () => tick(entry)));
  for (const [i, cron] of crons.entries()) {
    log.info('schedule loaded', { line: options.entries[i].line, schedule: options.entries[i].schedule, args: options.entries[i].args, nextRun: cron.nextRun()?.toISOString() });
  }
  return {
    async stop() {
      for (const cron of crons) cron.stop();
      const ending = [...running].map((child) => once(child, 'exit'));
      for (const child of running) child.kill('SIGTERM');
      await Promise.all(ending);
    },
  };
}
