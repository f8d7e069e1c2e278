import { ConflictError } from '../../../common/errors.js';
import type { RepositoryDocument } from '../../repository/document.js';
import { heldBy } from '../../status/facet.js';
import { inProgress } from '../../status/transitions.js';
import { base, type TaskContext } from './context.js';
import { leftAlone } from './record.js';

/**
 * Claim one document just before its call goes out: status IN_PROGRESS, this run's id and an
 * expiry, written with the document's changeToken. A 409 means another run or a user changed it
 * first, or that this run's own claim went through and its answer was lost (the client sent it
 * again with the token the first write used up): the document is read again to tell which.
 * Returns the claimed document, or records why there is none.
 */
export async function take(ctx: TaskContext, doc: RepositoryDocument): Promise<RepositoryDocument | undefined> {
  const at = ctx.now();
  const { deps } = ctx;
  try {
    const claimed = await deps.writer.update(doc, inProgress(deps.runId, ctx.task.name, at, ctx.task.claimTimeoutMs));
    return held(ctx, { ...doc, changeToken: claimed.changeToken });
  } catch (error) {
    if (!(error instanceof ConflictError)) return notTaken(ctx, doc, error);
    return ownClaim(ctx, doc);
  }
}

async function ownClaim(ctx: TaskContext, doc: RepositoryDocument): Promise<RepositoryDocument | undefined> {
  try {
    const now = await ctx.deps.client.getById(doc.uid);
    if (heldBy(now.properties, ctx.deps.runId, ctx.task.name))
      return held(ctx, { ...doc, changeToken: now.changeToken });
    ctx.onRecord({ ...base(ctx, doc), result: 'CLAIMED_ELSEWHERE' });
    return undefined;
  } catch (error) {
    return notTaken(ctx, doc, error);
  }
}

/** Claimed: listed as in flight until settled. The call works on the values as they were read. */
function held(ctx: TaskContext, doc: RepositoryDocument): RepositoryDocument {
  ctx.deps.inFlight.set(doc.uid, base(ctx, doc));
  return doc;
}

function notTaken(ctx: TaskContext, doc: RepositoryDocument, error: unknown): undefined {
  ctx.onRecord(leftAlone(base(ctx, doc), error, 'not claimed, not sent: the next run looks at it again'));
  return undefined;
}
