import type { TaskConfig } from '../config/task-schema.js';
import { nxqlList, nxqlString } from '../nxql/literal.js';
import { claimExpires, nextAttempt, STATUS as S, STATUS_FACET, statusOf, type Status } from './facet.js';
import { USE_CASE_FACETS } from './readiness.js';

/** `TIMESTAMP 'yyyy-MM-dd HH:mm:ss.SSS'` without a zone: read as UTC by the server. */
function timestamp(at: Date): string {
  return `TIMESTAMP ${nxqlString(at.toISOString().replace('T', ' ').replace('Z', ''))}`;
}

/**
 * The documents a task has work for: waiting for input (readiness is re-checked on every run),
 * ready, due for a retry, or claimed by a run whose claim has expired. Nobody writes these
 * exclusions by hand; a task's `filter` only narrows them. The pager adds the order.
 */
export function taskQuery(task: TaskConfig, now: Date): string {
  const at = timestamp(now);
  return scoped(
    task,
    `(${S.status} IN ('READY', 'PENDING_INPUT') OR (${S.status} = 'RETRY' AND ${S.nextAttempt} <= ${at}) OR (${S.status} = 'IN_PROGRESS' AND ${S.claimExpires} <= ${at}))`,
  );
}

const due = (at: unknown, now: Date): boolean => typeof at === 'string' && Date.parse(at) <= now.getTime();

/**
 * The status condition of `taskQuery`, asked of a document as it is now. A search answered from
 * an index that lags writes may return a document that matched a moment ago: it is only worked
 * on when it still matches.
 */
export function stillDue(properties: Record<string, unknown>, now: Date): boolean {
  switch (statusOf(properties)) {
    case 'READY':
    case 'PENDING_INPUT':
      return true;
    case 'RETRY':
      return due(nextAttempt(properties), now);
    case 'IN_PROGRESS':
      return due(claimExpires(properties), now);
    default:
      return false;
  }
}

/** A task's documents in one status, for the operator commands. */
export function statusQuery(task: TaskConfig, status: Status): string {
  return scoped(task, `${S.status} = ${nxqlString(status)}`);
}

/** A task's DONE documents, those that also meet `condition` when given (`sap-data`). */
export function doneQuery(task: TaskConfig, condition?: string): string {
  return scoped(task, `${S.status} = 'DONE'${condition === undefined ? '' : ` AND (${condition})`}`);
}

/** A task's DONE documents whose last attempt falls on a day from `from` to `until` (UTC, both included), for `reconcile`. */
export function doneBetween(task: TaskConfig, from: Date, until: Date): string {
  const end = new Date(until.getTime() + 24 * 3600 * 1000);
  return scoped(
    task,
    `${S.status} = 'DONE' AND ${S.lastAttempt} >= ${timestamp(from)} AND ${S.lastAttempt} < ${timestamp(end)}`,
  );
}

/** The documents that belong to a task (its use case, systems and filter) and meet `condition`. */
function scoped(task: TaskConfig, condition: string): string {
  const conditions = [
    `ecm:mixinType = ${nxqlString(STATUS_FACET)}`,
    `ecm:mixinType = ${nxqlString(USE_CASE_FACETS[task.useCase])}`,
    'ecm:isVersion = 0 AND ecm:isProxy = 0 AND ecm:isTrashed = 0',
    condition,
  ];
  if (task.systems) conditions.push(`erpHttpContent:source IN ${nxqlList(task.systems)}`);
  if (task.filter) conditions.push(`(${task.filter})`);
  return `SELECT * FROM File WHERE ${conditions.join(' AND ')}`;
}
