/**
 * The status facet (`fct_erp_task_status`, schema `erp_task_status`, nuxeo-package/): the contract
 * between the intake that sets it, the tasks that move it on and the operator commands that read
 * and reset it. Its property names are written here and nowhere else.
 */
export const STATUS_FACET = 'fct_erp_task_status';

/** A document's state, in the order a document passes through them. */
export const STATUSES = ['PENDING_INPUT', 'READY', 'IN_PROGRESS', 'RETRY', 'DONE', 'FAILED'] as const;
export type Status = (typeof STATUSES)[number];

/** The facet's properties, by field. */
export const STATUS = {
  status: 'erpTaskStatus:status',
  message: 'erpTaskStatus:message',
  attempts: 'erpTaskStatus:attempts',
  lastAttempt: 'erpTaskStatus:lastAttempt',
  nextAttempt: 'erpTaskStatus:nextAttempt',
  task: 'erpTaskStatus:task',
  erpReference: 'erpTaskStatus:erpReference',
  claimedBy: 'erpTaskStatus:claimedBy',
  claimExpires: 'erpTaskStatus:claimExpires',
  /** The use-case values end users may change on the ERP tab (user-input.ts). */
  userInput: 'erpTaskStatus:userInput',
  /** The address that opens the linked business object in SAP (the system's `openInSap`). */
  sapUrl: 'erpTaskStatus:sapUrl',
} as const;

type Properties = Readonly<Record<string, unknown>>;

/** The status a document's properties carry, or undefined when it has none (not labelled yet). */
export const statusOf = (properties: Properties): unknown => properties[STATUS.status];
export const messageOf = (properties: Properties): string => String(properties[STATUS.message] ?? '');
export const attemptsOf = (properties: Properties): number => Number(properties[STATUS.attempts] ?? 0);
export const claimedBy = (properties: Properties): unknown => properties[STATUS.claimedBy];
export const claimExpires = (properties: Properties): unknown => properties[STATUS.claimExpires];
export const nextAttempt = (properties: Properties): unknown => properties[STATUS.nextAttempt];

/** Claimed with `token` (one attempt of one run) for task `task`, and still in progress. */
export const heldBy = (properties: Properties, token: string, task: string): boolean =>
  properties[STATUS.claimedBy] === token &&
  properties[STATUS.task] === task &&
  properties[STATUS.status] === 'IN_PROGRESS';
