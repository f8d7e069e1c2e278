import { Cron } from 'croner';
import type { ConfigProblem } from '../../common/errors.js';
import { batches } from './call-schema.js';
import type { ErpConfig } from './erp-schema.js';
import type { StorageConfig } from './storage-schema.js';
import type { TaskConfig } from './task-schema.js';

/** One decimal: a factor of latencies, as a reader compares it with theirs. */
const factor = (value: number): string => String(Math.round(value * 10) / 10);

/** Whether the task's call sends a page's documents together: of the built-in templates, only the bar codes' (job/tasks/templates.ts). */
function takesTable(task: TaskConfig): boolean {
  const call = task.function === 'RFC' ? task.rfc : task.rest;
  return call === undefined ? task.useCase === 'barcode' : batches(call.parameters);
}

/** A day from a fixed Monday: a schedule's runs within it stand for those of every day. */
const DAY_FROM = new Date(2026, 0, 5);
const DAY_MS = 24 * 3600_000;
/** The most runs a day has: one a minute. */
const MINUTES_A_DAY = 24 * 60;

/**
 * Enabled tasks whose runs start at the same minutes of a day. Only `validate` asks (loadConfig's
 * `schedules`): working out a day of runs costs more than a run's start-up should.
 */
export function scheduleAdvice(tasks: ReadonlyArray<{ file: string; task: TaskConfig }>): ConfigProblem[] {
  const advice: ConfigProblem[] = [];
  const earlier: Array<{ name: string; minutes: Set<number> }> = [];
  for (const { file, task } of tasks.filter((t) => t.task.enabled)) {
    const runs = new Cron(task.schedule, { paused: true, stopAt: new Date(DAY_FROM.getTime() + DAY_MS) }).nextRuns(
      MINUTES_A_DAY,
      new Date(DAY_FROM.getTime() - 1), // the runs after this instant: midnight included
    );
    const minutes = new Set(runs.map((run) => run.getTime()));
    for (const other of earlier) {
      const shared = [...minutes].filter((minute) => other.minutes.has(minute));
      if (shared.length === 0) continue;
      advice.push({
        file,
        path: 'schedule',
        message: `starts at the same minutes as task ${other.name} (${shared.length} times a day): each run labels new documents before its task, so both would label the same ones at once; shift one by a minute or two (e.g. '2-59/5 * * * *' beside '*/5 * * * *')`,
      });
    }
    earlier.push({ name: task.name, minutes });
  }
  return advice;
}

/**
 * Settings that load but cannot reach the throughput `maxConcurrentCalls` allows (README,
 * "Sizing"), and keys no longer used. Each is told as a warning, with its file and key, by `validate` and at the start of `run`;
 * none stops a run. Where a rule depends on latencies the configuration does not know, it says how
 * much faster than SAP the repository would have to be.
 */
export function configAdvice(
  storage: { file: string; config: StorageConfig },
  erp: ErpConfig,
  tasks: ReadonlyArray<{ file: string; task: TaskConfig }>,
): ConfigProblem[] {
  const advice: ConfigProblem[] = [];
  const calls = new Map(erp.systems.map((system) => [system.name, system.maxConcurrentCalls]));
  const used = new Set<string>();
  for (const { file, task } of tasks) {
    if (task.concurrency !== undefined)
      advice.push({
        file,
        path: 'concurrency',
        message:
          'no longer used: a task reads ahead as far as the maxConcurrentCalls of its ERP systems need (erpHttp.yaml); remove the key',
      });
    if (!task.enabled) continue;
    for (const name of task.systems ?? [...calls.keys()]) {
      used.add(name);
      const inFlight = calls.get(name) as number;
      // A page is read while the one before is worked on, one search at a time: a page a call's time.
      if (!takesTable(task) && task.batchSize < inFlight / 2)
        advice.push({
          file,
          path: 'batchSize',
          message: `pages of ${task.batchSize} documents keep the ${inFlight} calls of ERP system "${name}" busy only while the repository answers a search ${factor(inFlight / task.batchSize - 1)} times as fast as SAP a call: raise it to ${inFlight} or more`,
        });
    }
  }
  const requests = storage.config.maxConcurrentRequests;
  for (const name of used) {
    const inFlight = calls.get(name) as number;
    // Each call's document is claimed before the call and settled after it: two writes.
    if (requests < inFlight)
      advice.push({
        file: storage.file,
        path: 'maxConcurrentRequests',
        message: `${requests} requests in flight keep the ${inFlight} calls of ERP system "${name}" busy only while the repository answers ${factor((2 * inFlight) / requests - 1)} times as fast as SAP (each call needs its document's claim and outcome written): raise it to ${inFlight}`,
      });
  }
  return advice;
}
