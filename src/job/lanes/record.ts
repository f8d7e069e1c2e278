import { Connect2ErpError, ConflictError, errorMessage, NotFoundError } from '../../../common/errors.js';
import type { ClaimedDocument, TaskRecord } from '../records.js';

/**
 * A repository error on one document's write, as that document's outcome: its page and the rest
 * of the run go on. An error of the run's own scope (refused credentials, an untrusted
 * certificate) is not the document's, and stops the run. `state` says what the document was left as.
 */
export function leftAlone(base: ClaimedDocument, error: unknown, state: string): TaskRecord {
  if (error instanceof Connect2ErpError && error.scope === 'run') throw error;
  if (error instanceof NotFoundError) return { ...base, result: 'GONE', message: 'deleted meanwhile' };
  if (error instanceof ConflictError)
    return {
      ...base,
      result: 'SKIPPED',
      message: 'changed by a user or another run meanwhile; the next run looks at it again',
    };
  return { ...base, result: 'ERROR', message: `${errorMessage(error)}; ${state}` };
}
