import type { UseCase } from '../config/task-schema.js';

/**
 * The record of what a phase of a run did with one document: what the intake and the tasks emit,
 * what the report counts and lists, what the JSON report file holds. Neither phase is imported
 * here, so the report needs nothing of theirs.
 */

/** What the intake did with one document; `planned` is a labelling a dry run did not write. */
export interface IntakeRecord {
  uid: string;
  path: string;
  mapping: string;
  useCase: UseCase;
  result: 'labelled' | 'planned' | 'skipped' | 'error';
  status?: string;
  facets: string[];
  values: Record<string, unknown>;
  folder?: string;
  missing: string[];
  error?: string;
  transient?: boolean;
  /** Why another run (or a user) was left to label it. */
  skipped?: string;
}

/** The call a dry run would make for one document, with that document's values for it. */
export interface PlannedFor {
  call: string;
  values: Record<string, string>;
}

/**
 * What a task did with one document.
 * - RELEASED: not sent, or not taken by SAP: the run stopped, or its SAP system (or the task's calls to it) was
 *   unavailable or refused the connector; it is READY (or as it was) for the next run, no attempt charged.
 * - SKIPPED: a user or another run changed it while this run worked on it (or took over its expired claim);
 *   left to them, the next run looks again.
 * - GONE: deleted while this run worked on it.
 * - ERROR: the repository refused or lost this document's write; the message says what state it was left in.
 */
type TaskResult =
  | 'DONE'
  | 'RETRY'
  | 'FAILED'
  | 'PENDING_INPUT'
  | 'CLAIMED_ELSEWHERE'
  | 'PLANNED'
  | 'RELEASED'
  | 'SKIPPED'
  | 'GONE'
  | 'ERROR';

export interface TaskRecord {
  uid: string;
  path: string;
  task: string;
  result: TaskResult;
  reference?: string;
  /** DONE: the address that opens its business object in SAP. */
  url?: string;
  message?: string;
  /** Dry run: the ERP call this document would get, and its values for it. */
  planned?: PlannedFor;
}

export type ClaimedDocument = Pick<TaskRecord, 'uid' | 'path' | 'task'>;
