import { ConflictError, Connect2ErpError, errorMessage } from '../../../common/errors.js';
import type { RepositoryDocument } from '../../repository/document.js';
import { heldBy } from '../../status/facet.js';
import { inProgress } from '../../status/transitions.js';
import { base, type TaskContext } from './context.js';
import { leftAlone } from './record.js';
import { release, STILL_CLAIMED } from './settle.js';

/** A document this attempt holds: its claim's token, and the changeToken its claim left. */
export interface Claimed {
  doc: RepositoryDocument;
  token: string;
  /** An earlier attempt may have reached SAP (CallItem's): given back unsent, it must still be looked up. */
  repeat?: boolean;
}

/**
 * Claim one document just before its call goes out: status IN_PROGRESS, a token new to this
 * attempt and an expiry, written with the document's changeToken. A 409 means another run, another
 * attempt or a user changed it first, or that this claim went through and its answer was lost (the
 * client sent it again with the token the first write used up): the document is read again, and
 * only this attempt's own token makes it ours. Returns the claimed document, or records why there is none.
 */
export async function take(ctx: TaskContext, doc: RepositoryDocument, token: string): Promise<Claimed | undefined> {
  const at = ctx.now();
  const { deps } = ctx;
  try {
    const claimed = await deps.writer.update(doc, inProgress(token, ctx.task.name, at, ctx.task.claimTimeoutMs));
    return held(ctx, { ...doc, changeToken: claimed.changeToken }, token);
  } catch (error) {
    if (!(error instanceof ConflictError)) return notTaken(ctx, doc, error);
    return ownClaim(ctx, doc, token);
  }
}

/**
 * A claim written again as its call goes out, with a new token (it waited long for its slot). Not
 * written, the document was never sent and is still claimed: its claim is given back (READY; when
 * even that write fails, it stays claimed until the claim expires, and its record says so), never
 * recorded as not claimed while it is.
 */
export async function renew(ctx: TaskContext, claimed: Claimed, token: string): Promise<Claimed | undefined> {
  const at = ctx.now();
  let refused: unknown;
  try {
    const renewed = await ctx.deps.writer.update(
      claimed.doc,
      inProgress(token, ctx.task.name, at, ctx.task.claimTimeoutMs),
    );
    return held(ctx, { ...claimed.doc, changeToken: renewed.changeToken }, token);
  } catch (error) {
    if (error instanceof Connect2ErpError && error.scope === 'run') throw error;
    refused = error;
  }
  // A user's edit meanwhile, or a lost answer: the renewal went through and the client sent it again with a used-up changeToken.
  if (refused instanceof ConflictError) {
    try {
      const mine = await readBack(ctx, claimed.doc, token);
      if (mine !== undefined) return mine;
    } catch (unread) {
      const state = `its claim could not be written again nor read back, so it was not sent; ${STILL_CLAIMED}`;
      ctx.onRecord(leftAlone(base(ctx, claimed.doc), unread, state));
      return undefined;
    }
  }
  const why = `not sent: its claim could not be written again before its call (${errorMessage(refused)})`;
  ctx.onRecord(await release(ctx, claimed, why));
  return undefined;
}

async function ownClaim(ctx: TaskContext, doc: RepositoryDocument, token: string): Promise<Claimed | undefined> {
  try {
    const mine = await readBack(ctx, doc, token);
    if (mine === undefined) ctx.onRecord({ ...base(ctx, doc), result: 'CLAIMED_ELSEWHERE' });
    return mine;
  } catch (error) {
    return notTaken(ctx, doc, error);
  }
}

/**
 * After a 409 on a claim: the document read again, claimed when it holds this attempt's `token`
 * (the claim went through and its answer was lost), undefined when it does not; a read that fails throws.
 */
async function readBack(ctx: TaskContext, doc: RepositoryDocument, token: string): Promise<Claimed | undefined> {
  const now = await ctx.deps.client.getById(doc.uid);
  return heldBy(now.properties, token, ctx.task.name)
    ? held(ctx, { ...doc, changeToken: now.changeToken }, token)
    : undefined;
}

/** Claimed: listed as in flight until settled. The call works on the values as they were read. */
function held(ctx: TaskContext, doc: RepositoryDocument, token: string): Claimed {
  ctx.deps.inFlight.set(doc.uid, base(ctx, doc));
  return { doc, token };
}

function notTaken(ctx: TaskContext, doc: RepositoryDocument, error: unknown): undefined {
  ctx.onRecord(leftAlone(base(ctx, doc), error, 'not claimed, not sent: the next run looks at it again'));
  return undefined;
}
