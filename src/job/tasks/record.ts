import { AuthenticationError, ConflictError, errorMessage, NotFoundError } from '../../../common/errors.js';
import type { ClaimedDocument, TaskRecord } from '../records.js';

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
