import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Cron } from 'croner';
import type { CrontabEntry } from '../../config/crontab.js';
import type { Logger } from '../../log.js';

interface ScheduleOptions {
  entries: CrontabEntry[];
  /** Every enabled task, for lines that run them all. */
  taskNames: string[];
  /** Appended to each line's arguments: the scheduler's own configuration and jobs folders. */
  location: { configDir: string; jobsDir: string };
  log: Logger;
}

interface Scheduler {
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
  /** The runs under way and the tasks each one runs. */
  const running = new Map<ChildProcess, string[]>();
  const { log } = options;
  const busy = (tasks: string[]): boolean =>
    [...running.values()].some((names) => names.some((name) => tasks.includes(name)));

  const tick = async (entry: CrontabEntry): Promise<void> => {
    const tasks = entry.task === undefined ? options.taskNames : [entry.task];
    const fields = { line: entry.line, tasks };
    if (busy(tasks)) {
      log.warn('scheduled run skipped: the task is still running', fields);
      return;
    }
    const started = Date.now();
    const child = spawnRun([...entry.args, '--config', options.location.configDir, '--jobs', options.location.jobsDir]);
    running.set(child, tasks);
    log.info('scheduled run started', { ...fields, pid: child.pid });
    const [exitCode, signal] = (await once(child, 'exit')) as [number | null, string | null];
    running.delete(child);
    log.info('scheduled run finished', {
      ...fields,
      pid: child.pid,
      exitCode,
      signal,
      durationMs: Date.now() - started,
    });
  };

  const crons = options.entries.map((entry) => {
    const cron = new Cron(entry.schedule, { name: `line ${entry.line}` }, () => tick(entry));
    log.info('schedule loaded', {
      line: entry.line,
      schedule: entry.schedule,
      args: entry.args,
      nextRun: cron.nextRun()?.toISOString(),
    });
    return cron;
  });
  return {
    async stop() {
      for (const cron of crons) cron.stop();
      const ending = [...running.keys()].map((child) => once(child, 'exit'));
      for (const child of running.keys()) child.kill('SIGTERM');
      await Promise.all(ending);
    },
  };
}
