import type { RestCallConfig, RfcCallConfig } from '../config/call-schema.js';
import type { TaskConfig } from '../config/task-schema.js';
import { nxqlList, nxqlString } from '../nxql/literal.js';
import { CLAIM_EXPIRES, CLAIMED_BY } from './claim.js';
import { READINESS_KEYS, USE_CASE_FACETS } from './readiness.js';

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
  return scoped(task, `(erpTaskStatus:status IN ('READY', 'PENDING_INPUT') OR (erpTaskStatus:status = 'RETRY' AND erpTaskStatus:nextAttempt <= ${at}) OR (erpTaskStatus:status = 'IN_PROGRESS' AND erpTaskStatus:claimExpires <= ${at}))`);
}

const due = (at: unknown, now: Date): boolean => typeof at === 'string' && Date.parse(at) <= now.getTime();

/**
 * The status condition of `taskQuery`, asked of a document as it is now. A search answered from
 * an index that lags writes may return a document that matched a moment ago: it is only worked
 * on when it still matches.
 */
export function stillDue(properties: Record<string, unknown>, now: Date): boolean {
  switch (properties['erpTaskStatus:status']) {
    case 'READY':
    case 'PENDING_INPUT':
      return true;
    case 'RETRY':
      return due(properties['erpTaskStatus:nextAttempt'], now);
    case 'IN_PROGRESS':
      return due(properties[CLAIM_EXPIRES], now);
    default:
      return false;
  }
}

/**
 * The properties a task reads from the documents its search finds: readiness, the values of its
 * call, the source system and the status; its search asks back only their schemas.
 */
export function taskReads(task: TaskConfig, call: RfcCallConfig | RestCallConfig): string[] {
  // A call's values come from its parameters only (mapValues); lookups and paths are filled from those.
  const values = Object.values(call.parameters).flatMap((spec) => (spec.property === undefined ? [] : [spec.property]));
  return [...READINESS_KEYS[task.useCase], ...values, 'erpHttpContent:source', CLAIMED_BY];
}

/** A task's documents in one status, for the operator commands. */
export function statusQuery(task: TaskConfig, status: string): string {
  return scoped(task, `erpTaskStatus:status = ${nxqlString(status)}`);
}

/** The documents that belong to a task (its use case, systems and filter) and meet `condition`. */
function scoped(task: TaskConfig, condition: string): string {
  const conditions = [
    `ecm:mixinType = ${nxqlString('fct_erp_task_status')}`,
    `ecm:mixinType = ${nxqlString(USE_CASE_FACETS[task.useCase])}`,
    'ecm:isVersion = 0 AND ecm:isProxy = 0 AND ecm:isTrashed = 0',
    condition,
  ];
  if (task.systems) conditions.push(`erpHttpContent:source IN ${nxqlList(task.systems)}`);
  if (task.filter) conditions.push(`(${task.filter})`);
  return `SELECT * FROM File WHERE ${conditions.join(' AND ')}`;
}
