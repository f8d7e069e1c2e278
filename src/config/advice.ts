import { Cron } from 'croner';
import type { ConfigProblem } from '../../common/errors.js';
import { batches } from './call-schema.js';
import { callFor } from './templates.js';
import type { ErpConfig } from './erp-schema.js';
import type { StorageConfig } from './storage-schema.js';
import type { TaskConfig } from './task-schema.js';

/** One decimal: a factor of latencies, as a reader compares it with theirs. */
const factor = (value: number): string => String(Math.round(value * 10) / 10);

/**
 * Advice is about one task, whose runs alone tell it (`run --task`; validate tells all), or, without
 * a task, about the whole deployment, which every run tells.
 */
export type Advice = ConfigProblem & { task?: string };

/** A week from a fixed Monday: a schedule's runs within it stand for those of every week. */
const WEEK_FROM = new Date(2026, 0, 5);
const WEEK_MS = 7 * 24 * 3600_000;
const MINUTE_MS = 60_000;
/** The most runs a week has (one a minute; a schedule with seconds counts by its minutes). */
const MINUTES_A_WEEK = 7 * 24 * 60;

/** The minutes of a week a schedule starts runs at. */
function startMinutes(schedule: string): Set<number> {
  const runs = new Cron(schedule, { paused: true, stopAt: new Date(WEEK_FROM.getTime() + WEEK_MS) }).nextRuns(
    MINUTES_A_WEEK,
    new Date(WEEK_FROM.getTime() - 1), // the runs after this instant: Monday's midnight included
  );
  return new Set(runs.map((run) => Math.floor(run.getTime() / MINUTE_MS)));
}

/**
 * Enabled tasks whose runs start at the same minutes of a week. Only `validate` asks (loadConfig's
 * `schedules`): working out a week of runs costs more than a run's start-up should.
 */
export function scheduleAdvice(tasks: ReadonlyArray<{ file: string; task: TaskConfig }>): Advice[] {
  const advice: Advice[] = [];
  const earlier: Array<{ name: string; minutes: Set<number> }> = [];
  for (const { file, task } of tasks.filter((t) => t.task.enabled)) {
    const minutes = startMinutes(task.schedule);
    for (const other of earlier) {
      const shared = [...minutes].filter((minute) => other.minutes.has(minute)).length;
      if (shared === 0) continue;
      advice.push({
        file,
        path: 'schedule',
        task: task.name,
        message: `starts at the same minutes as task ${other.name} (${shared} times a week): each run labels new documents before its task, so both would label the same ones at once; shift one by a minute or two (e.g. '2-59/5 * * * *' beside '*/5 * * * *')`,
      });
    }
    earlier.push({ name: task.name, minutes });
  }
  return advice;
}

/**
 * Settings that load but cannot reach the throughput `maxConcurrentCalls` allows (README,
 * "Sizing"), and keys no longer used. Each is told as a warning, with its file and key, by
 * `validate` and at the start of `run`; none stops a run. Where a rule depends on latencies the
 * configuration does not know, it says how much faster than SAP the repository would have to be,
 * taking a search or a write to cost the repository about what a claim does.
 */
export function configAdvice(
  storage: { file: string; config: StorageConfig },
  erp: ErpConfig,
  tasks: ReadonlyArray<{ file: string; task: TaskConfig }>,
): Advice[] {
  const advice: Advice[] = [];
  const calls = new Map(erp.systems.map((system) => [system.name, system.maxConcurrentCalls]));
  // Tasks run one after another: the one with the most call slots needs the most requests.
  let busiest: { task: string; calls: number } | undefined;
  for (const { file, task } of tasks) {
    if (task.concurrency !== undefined)
      advice.push({
        file,
        path: 'concurrency',
        task: task.name,
        message:
          'no longer used: a task reads ahead as far as the maxConcurrentCalls of its ERP systems need (erpHttp.yaml); remove the key',
      });
    if (!task.enabled) continue;
    const systems = task.systems ?? [...calls.keys()];
    // The task reads ahead for the slots of all its systems (CallSlots).
    const inFlight = systems.reduce((sum, name) => sum + (calls.get(name) as number), 0);
    const those = `the ${inFlight} calls of ERP system${systems.length > 1 ? 's' : ''} ${systems.map((name) => `"${name}"`).join(', ')}`;
    if (busiest === undefined || inFlight > busiest.calls) busiest = { task: task.name, calls: inFlight };
    // A page is read while the ones before wait for slots, one search at a time.
    if (!batches(callFor(task).call.parameters) && task.batchSize < inFlight / 2)
      advice.push({
        file,
        path: 'batchSize',
        task: task.name,
        message: `pages of ${task.batchSize} documents keep ${those} busy only while the repository answers a search ${factor(inFlight / task.batchSize - 1)} times as fast as SAP a call: raise it to ${inFlight} or more`,
      });
  }
  const requests = storage.config.maxConcurrentRequests;
  // Each call's document is claimed before the call and settled after it: two writes.
  if (busiest !== undefined && requests < busiest.calls)
    advice.push({
      file: storage.file,
      path: 'maxConcurrentRequests',
      task: busiest.task,
      message: `${requests} requests in flight keep the ${busiest.calls} calls of task ${busiest.task} busy only while the repository answers ${factor((2 * busiest.calls) / requests - 1)} times as fast as SAP (each call needs its document's claim and outcome written): raise it to ${busiest.calls}`,
    });
  return advice;
}

/**
 * Systems that `pods` runs at once would call more often at once than their SAP team agreed
 * (`agreedCalls`, else `maxConcurrentCalls` itself: the README has it agreed for the connector).
 */
export function callsAdvice(
  erp: { file: string; config: ErpConfig },
  tasks: ReadonlyArray<{ task: TaskConfig }>,
  pods: number,
): Advice[] {
  const enabled = tasks.filter(({ task }) => task.enabled);
  return erp.config.systems.flatMap((system, index) => {
    // A system no enabled task calls gets no calls, whatever its setting.
    if (!enabled.some(({ task }) => (task.systems ?? [system.name]).includes(system.name))) return [];
    const calls = system.maxConcurrentCalls;
    const agreed = system.agreedCalls ?? calls;
    if (pods * calls <= agreed) return [];
    const path = `systems.${index}.maxConcurrentCalls`;
    if (pods === 1)
      return [
        {
          file: erp.file,
          path,
          message: `${calls} calls in flight to ERP system "${system.name}" are more than the ${agreed} its SAP team agreed to (agreedCalls): lower it to ${agreed}`,
        },
      ];
    const perPod = Math.floor(agreed / pods);
    const lower = perPod >= 1 ? `lower it to ${perPod}` : `lower it to 1 and run at most ${agreed} pods at once`;
    const fix =
      system.agreedCalls === undefined
        ? ' (maxConcurrentCalls, as the README has it agreed for the connector); if the SAP team agreed to more for all pods together, set agreedCalls to that'
        : ' (agreedCalls)';
    return [
      {
        file: erp.file,
        path,
        message: `${pods} pods at once × ${calls} calls make ${pods * calls} calls in flight to ERP system "${system.name}", more than the ${agreed} its SAP team agreed to${fix}: ${lower}`,
      },
    ];
  });
}
