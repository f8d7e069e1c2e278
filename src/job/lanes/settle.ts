import { errorMessage, NotSentError, UncertainError, type Connect2ErpError } from '../../../common/errors.js';
import { PropertiesDroppedError } from '../../repository/client.js';
import { AttemptsUsedUp, LookupFailedError, type SettledOutcome } from '../calls/execute.js';
import { attemptsOf, STATUS } from '../../status/facet.js';
import type { Claim, Ending } from '../claims/claim.js';
import { base, operatorHint, type TaskContext } from './context.js';
import type { ClaimedDocument, TaskRecord } from '../records.js';
import { leftAlone } from './record.js';

/** A claim being settled; `repeat`: an earlier attempt may have reached SAP (CallItem's). */
type Settling = Claim & { repeat?: boolean };

/** What a document claimed and not settled is left as, for the record of a write that failed. */
export const STILL_CLAIMED = 'it stays IN_PROGRESS until its claim expires, then a later run takes it over';

/**
 * Write a claimed document's outcome. A write that fails is the document's own outcome (GONE, or
 * ERROR with what it was left as); one that meets another run's takeover leaves the document to it.
 */
export async function settle(ctx: TaskContext, claimed: Settling, outcome: SettledOutcome): Promise<TaskRecord> {
  // An error of the run's own scope stops the run here, and the document stays listed as claimed: it is.
  const record = await outcomeRecord(ctx, claimed, outcome).catch((error: unknown) =>
    leftAlone(base(ctx, claimed.doc), error, STILL_CLAIMED),
  );
  ctx.deps.claims.letGo(claimed);
  return record;
}

/** The outcome for a document whose call never went out, or went to a system that could not take it: back to READY, no attempt charged. */
export async function release(ctx: TaskContext, claimed: Settling, message: string): Promise<TaskRecord> {
  return settle(ctx, claimed, { error: new NotSentError(message) });
}

async function outcomeRecord(ctx: TaskContext, claimed: Settling, outcome: SettledOutcome): Promise<TaskRecord> {
  const { deps } = ctx;
  const record = base(ctx, claimed.doc);
  const { error } = outcome;
  // Not sent (the run is stopping), or refused by a system or for a lane: nothing happened in SAP.
  if (error instanceof NotSentError || error?.scope === 'system' || error?.scope === 'lane') {
    const message =
      error instanceof NotSentError ? error.message : `${error.message}; left for the next run, no attempt charged`;
    // Sent again after a list SAP refused or a runtime error: SAP may have it, and can be asked.
    const repeated = claimed.repeat === true && ctx.call.lookup !== undefined;
    return (await deps.claims.release(claimed, repeated))
      ? { ...record, result: 'RELEASED', message }
      : takenOver(ctx, record);
  }
  if (error === undefined) {
    if (outcome.planned)
      return { ...record, result: 'PLANNED', reference: outcome.reference, planned: outcome.planned };
    const wrote = await writeDone(ctx, claimed, outcome);
    if (wrote === false) return takenOver(ctx, record);
    deps.log.debug('document processed', { ...record, reference: outcome.reference });
    const url = wrote.properties[STATUS.sapUrl] as string | undefined;
    return {
      ...record,
      result: 'DONE',
      reference: outcome.reference,
      ...(wrote.message === undefined ? {} : { message: wrote.message }),
      ...(url === undefined ? {} : { url }),
    };
  }
  const failure = attemptOutcome(ctx, claimed, error);
  if (!(await deps.claims.settle(claimed, failure))) return takenOver(ctx, record);
  deps.log.warn('document not processed', {
    ...record,
    result: failure.status,
    attempts: failure.attempts,
    error: failure.message,
  });
  return { ...record, result: failure.status, message: failure.message };
}

/**
 * DONE, with what the link brought ("Open in SAP", SAP's data). Values the repository will not keep
 * never cost the link: accepted but not stored (a property of a schema the document lacks), the
 * DONE stands and the record says which; a write refused or failed for any other reason is made
 * again without them, saying why, so that no run finds the same link and fails on the same values
 * again. Answers the message and the properties written, or false when taken over.
 */
async function writeDone(
  ctx: TaskContext,
  claimed: Claim,
  outcome: { reference: string; message?: string; written?: Record<string, unknown> },
): Promise<{ message?: string; properties: Record<string, unknown> } | false> {
  const { reference, message, written = {} } = outcome;
  const told = (why: string): string => [message, why].filter(Boolean).join('; ');
  try {
    const wrote = await ctx.deps.claims.settle(claimed, { status: 'DONE', reference, message, written });
    return wrote && { message, properties: written };
  } catch (error) {
    if (Object.keys(written).length === 0) throw error;
    if (error instanceof PropertiesDroppedError) {
      const why = `SAP's data may not have been stored: ${error.dropped.join(', ')} (is its schema on the document, and the value of its type?)`;
      const kept = Object.entries(written).filter(([key]) => !error.dropped.includes(key));
      return { message: told(why), properties: Object.fromEntries(kept) };
    }
    const why = told(`SAP's data was not written: ${errorMessage(error)}`);
    const wrote = await ctx.deps.claims.settle(claimed, { status: 'DONE', reference, message: why });
    return wrote && { message: why, properties: {} };
  }
}

/**
 * A failed attempt: RETRY after its back-off, or FAILED. An answer lost on the way back is asked of
 * SAP at the next attempt when the call has a lookup, whatever the attempts (it is never sent again
 * before); without one, and not safe to repeat, it goes to an operator with where to look.
 */
function attemptOutcome(
  ctx: TaskContext,
  claimed: Claim,
  error: Connect2ErpError,
): Ending & { status: 'RETRY' | 'FAILED' } {
  const { task, call } = ctx;
  const attempts = attemptsOf(claimed.doc.properties) + 1;
  const lost = error instanceof UncertainError;
  // A lookup that could not say, for good or on the last attempt, leaves it to an operator: never sent blind.
  const unknowable =
    (lost && !call.repeatable && call.lookup === undefined) ||
    (error instanceof LookupFailedError && (!error.transient || attempts >= task.attempts));
  let message = errorMessage(error);
  if (lost && call.lookup !== undefined) message += '; SAP is asked at the next attempt, before anything is sent again';
  if (unknowable) message += `; SAP may have it, so it is not sent again by itself: ${operatorHint(ctx, claimed.doc)}`;
  const retry =
    !unknowable &&
    !(error instanceof AttemptsUsedUp) &&
    error.transient &&
    (attempts < task.attempts || (lost && call.lookup !== undefined));
  const delay = Math.min(task.backoff.initialMs * task.backoff.factor ** (attempts - 1), task.backoff.maxMs);
  const at = ctx.now();
  return {
    status: retry ? 'RETRY' : 'FAILED',
    message,
    attempts,
    ...(retry ? { retryAt: new Date(at.getTime() + delay) } : {}),
  };
}

function takenOver(ctx: TaskContext, record: ClaimedDocument): TaskRecord {
  ctx.deps.log.warn('document taken over by another run', record);
  return {
    ...record,
    result: 'SKIPPED',
    message: 'its claim expired while this run sent it, and another run took it over: left to that run',
  };
}
