import type { ConfigProblem } from '../../common/errors.js';
import type { ErpConfig } from './erp-schema.js';
import type { TaskConfig } from './task-schema.js';
import { callFor } from './templates.js';

/** What a claim outlasts beyond its calls: the writes around them and a clock that is not the repository's. */
const CLAIM_MARGIN_MS = 60_000;

/**
 * How long a document claimed ahead of its call may wait for a slot before its claim is written
 * again (lanes/lane.ts): half the margin, so that the claim still covers its calls, the writes
 * around them and a clock that is not the repository's.
 */
export const CLAIM_WAIT_MS = CLAIM_MARGIN_MS / 2;

/**
 * The longest a task's claim must hold on a document: its calls to SAP, each up to the system's
 * connection and answer time-outs. A claim covers, at worst, the document looked up and sent, and
 * once more after a runtime error (job/calls/execute.ts); a list covers one call, and a document
 * that goes again alone after it takes a new claim; a read of SAP's data after a link is one more. A claim that expired during its own call would
 * let another run take the document over while SAP may still be working on it.
 */
function callsPerClaim(task: TaskConfig): number {
  const { call } = callFor(task);
  const lookups = call.lookup === undefined ? 0 : Array.isArray(call.lookup) ? call.lookup.length : 1;
  // A link's read of SAP's data runs after its call, under the same claim (lanes/lane.ts).
  return 2 * (1 + lookups) + (task.read === undefined ? 0 : 1);
}

/** Each enabled task's claimTimeoutMs against the calls it covers, on every system the task may call. */
export function claimProblems(
  erp: ErpConfig,
  tasks: ReadonlyArray<{ file: string; task: TaskConfig }>,
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const { file, task } of tasks.filter((t) => t.task.enabled)) {
    const calls = callsPerClaim(task);
    const systems = erp.systems.filter((s) => task.systems === undefined || task.systems.includes(s.name));
    const slowest = systems
      .filter((s) => (task.function === 'RFC' ? s.rfc : s.rest) !== undefined)
      .map((s) => ({ name: s.name, callMs: s.timeouts.connectMs + s.timeouts.requestMs }))
      .sort((a, b) => b.callMs - a.callMs)[0];
    if (slowest === undefined) continue;
    const needed = calls * slowest.callMs + CLAIM_MARGIN_MS;
    if (task.claimTimeoutMs >= needed) continue;
    problems.push({
      file,
      path: 'claimTimeoutMs',
      message: `${task.claimTimeoutMs} is shorter than a claim must hold: up to ${calls} calls to ERP system "${slowest.name}" of up to ${slowest.callMs} ms each (its timeouts.connectMs + timeouts.requestMs), and ${CLAIM_MARGIN_MS} ms more; set it to ${needed} or more, or shorten the system's time-outs`,
    });
  }
  return problems;
}
