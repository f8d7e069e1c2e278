import { AuthenticationError, ConflictError, errorMessage, NotFoundError } from '../../../common/errors.js';
import type { PlannedFor } from './calls/execute.js';

/**
 * What a task did with one document.
 * - RELEASED: not sent, because the run stopped or SAP refused the credentials; it is READY for the next run.
 * - SKIPPED: a user or another run changed it while this run worked on it; left to them, the next run looks again.
 * - GONE: deleted while this run worked on it.
 * - ERROR: the repository refused or lost this document's write; the message says what state it was left in.
 */
export type TaskResult =
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
  message?: string;
  /** Dry run: the ERP call this document would get, and its values for it. */
  planned?: PlannedFor;
}

export type ClaimedDocument = Pick<TaskRecord, 'uid' | 'path' | 'task'>;

/**
 * A repository error on one document's write, as that document's outcome: its page and the rest
 * of the run go on. Refused credentials (or an untrusted certificate) are the run's problem, not
 * the document's, and stop it. `state` says what the document was left as.
 */
export function leftAlone(base: ClaimedDocument, error: unknown, state: string): TaskRecord {
  if (error instanceof AuthenticationError) throw error;
  if (error instanceof NotFoundError) return { ...base, result: 'GONE', message: 'deleted meanwhile' };
  if (error instanceof ConflictError)
    return {
      ...base,
      result: 'SKIPPED',
      message: 'changed by a user or another run meanwhile; the next run looks at it again',
    };
  return { ...base, result: 'ERROR', message: `${errorMessage(error)}; ${state}` };
}
