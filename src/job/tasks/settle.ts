import { AuthenticationError, errorMessage, NotSentError, UncertainError } from '../../../common/errors.js';
import type { RepositoryDocument } from '../../repository/document.js';
import type { CallOutcome } from './calls/execute.js';
import { attemptsOf } from '../../status/facet.js';
import { attemptFailed, done, released } from '../../status/transitions.js';
import { base, operatorHint, safeToRepeat, type TaskContext } from './context.js';
import type { TaskRecord } from '../records.js';
import { leftAlone } from './record.js';

/** What a document claimed and not settled is left as, for the record of a write that failed. */
const STILL_CLAIMED = 'it stays IN_PROGRESS until its claim expires, then a later run takes it over';

/**
 * Write a claimed document's outcome; the claim is ours, so no changeToken: a user's edit in
 * between must not lose it. A write that fails is the document's own outcome (GONE, or ERROR
 * with what it was left as).
 */
export async function settle(ctx: TaskContext, doc: RepositoryDocument, outcome: CallOutcome): Promise<TaskRecord> {
  // Refused credentials stop the run here, and the document stays listed as claimed: it is.
  const record = await outcomeRecord(ctx, doc, outcome).catch((error: unknown) =>
    leftAlone(base(ctx, doc), error, STILL_CLAIMED),
  );
  ctx.deps.inFlight.delete(doc.uid);
  return record;
}

async function outcomeRecord(ctx: TaskContext, doc: RepositoryDocument, outcome: CallOutcome): Promise<TaskRecord> {
  const { deps, task } = ctx;
  const record = base(ctx, doc);
  const unclaimed = { ...doc, changeToken: null };
  // Not sent (the run is stopping), or refused with the task's credentials: nothing happened in SAP.
  if (outcome.error instanceof NotSentError || outcome.error instanceof AuthenticationError) {
    await release(ctx, doc);
    return { ...record, result: 'RELEASED', message: outcome.error.message };
  }
  if (outcome.error === undefined) {
    if (outcome.planned)
      return { ...record, result: 'PLANNED', reference: outcome.reference, planned: outcome.planned };
    await deps.writer.update(unclaimed, done(outcome.reference, outcome.message));
    deps.log.info('document processed', { ...record, reference: outcome.reference });
    return { ...record, result: 'DONE', reference: outcome.reference };
  }
  const at = ctx.now();
  const attempts = attemptsOf(doc.properties) + 1;
  const uncertain = outcome.error instanceof UncertainError && !safeToRepeat(ctx.call);
  const message = uncertain
    ? `${errorMessage(outcome.error)}; SAP may have received it, so it is not sent again by itself: ${operatorHint(doc.uid)}`
    : errorMessage(outcome.error);
  const retry = outcome.error.transient && !uncertain && attempts < task.attempts;
  const delay = Math.min(task.backoff.initialMs * task.backoff.factor ** (attempts - 1), task.backoff.maxMs);
  const result = retry ? 'RETRY' : 'FAILED';
  await deps.writer.update(
    unclaimed,
    attemptFailed(message, attempts, retry ? new Date(at.getTime() + delay) : undefined),
  );
  deps.log.warn('document not processed', { ...record, result, attempts, error: message });
  return { ...record, result, message };
}

/** Back to READY, unsent: the claim is given up. */
export async function release(ctx: TaskContext, doc: RepositoryDocument): Promise<void> {
  await ctx.deps.writer.update({ ...doc, changeToken: null }, released());
}
