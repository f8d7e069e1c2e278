import type { RepositoryDocument } from '../../repository/document.js';
import { attemptsOf, claimedBy, messageOf, statusOf } from '../../status/facet.js';
import { stillDue } from '../../status/query.js';
import { missingValues } from '../../status/readiness.js';
import { pendingInput, runOf, waitingFor } from '../../status/transitions.js';
import type { CallItem } from '../calls/execute.js';
import { base, operatorHint, safeToRepeat, type TaskContext } from './context.js';
import { leftAlone } from './record.js';

/**
 * What a task does with one search hit before any claim: skip it if it is no longer due (the
 * search index may lag; the document it returned is current), wait for missing values, leave an
 * interrupted call that cannot be looked up to an operator, or admit it for sending. A repository
 * error on its write is its own outcome. Answers the admitted document, or undefined with its
 * record made (a hit no longer due makes none).
 */
export async function admit(ctx: TaskContext, doc: RepositoryDocument): Promise<CallItem | undefined> {
  // Labelled ready and claimed for this task in the same write, by this run: it goes as it is.
  const labelClaim = ctx.deps.claims.takeLabelled(ctx.task.name, doc.uid);
  if (labelClaim !== undefined) return { doc, repeat: false, lastLook: false, held: labelClaim };
  const at = ctx.now();
  const { properties } = doc;
  if (!stillDue(properties, at)) return notDue(ctx, doc);
  try {
    const missing = missingValues(ctx.task.useCase, properties);
    const system = String(properties['erpHttpContent:source']);
    if (missing.length === 0 && ctx.deps.erpFor(system, ctx.task.function) === undefined)
      missing.push(`erpHttpContent:source (no ERP system "${system}" with a ${ctx.task.function} connection)`);
    if (missing.length > 0) return await waitForInput(ctx, doc, waitingFor(missing));
    const takenOver = statusOf(properties) === 'IN_PROGRESS';
    if (takenOver && !safeToRepeat(ctx.call)) return await abandon(ctx, doc);
    const attempts = attemptsOf(properties);
    return { doc, repeat: takenOver || attempts > 0, lastLook: attempts >= ctx.task.attempts };
  } catch (error) {
    ctx.records.task(leftAlone(base(ctx, doc), error, 'left as it was'));
    return undefined;
  }
}

/** A hit the search index still had for this task: another run holds it, or it is already done with. */
function notDue(ctx: TaskContext, doc: RepositoryDocument): undefined {
  const status = statusOf(doc.properties);
  if (status === 'IN_PROGRESS') ctx.records.task({ ...base(ctx, doc), result: 'CLAIMED_ELSEWHERE' });
  else ctx.deps.log.debug('search hit no longer due', { uid: doc.uid, status });
  return undefined;
}

async function waitForInput(ctx: TaskContext, doc: RepositoryDocument, message: string): Promise<undefined> {
  if (statusOf(doc.properties) !== 'PENDING_INPUT' || messageOf(doc.properties) !== message) {
    await ctx.deps.writer.update(doc, pendingInput(message));
  }
  ctx.records.task({ ...base(ctx, doc), result: 'PENDING_INPUT', message });
  return undefined;
}

/**
 * An expired claim on a call that can neither be looked up nor safely repeated (a workflow
 * start): the interrupted run may have reached SAP, so an operator decides instead of a retry.
 */
async function abandon(ctx: TaskContext, doc: RepositoryDocument): Promise<undefined> {
  const message = `run ${runOf(claimedBy(doc.properties))} was interrupted while sending this document and SAP may have it already: ${operatorHint(ctx, doc)}`;
  await ctx.deps.claims.fail(doc, message);
  ctx.deps.log.warn('document left for an operator', base(ctx, doc));
  ctx.records.task({ ...base(ctx, doc), result: 'FAILED', message });
  return undefined;
}
