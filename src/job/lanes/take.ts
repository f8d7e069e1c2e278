import { errorMessage } from '../../../common/errors.js';
import type { CallItem } from '../calls/execute.js';
import type { Claim } from '../claims/claim.js';
import { base, type TaskContext } from './context.js';
import { leftAlone } from './record.js';
import { release, STILL_CLAIMED } from './settle.js';

/** A document a lane's attempt holds: what it is sent with, and its claim. */
export type ClaimedItem = Omit<CallItem, 'held'> & Claim;

/**
 * One document claimed just before its call goes out (claims/claims.ts `acquire`). Answers the
 * claimed item, or makes the record of why there is none: another run, attempt or user has it, or
 * the repository's error on the write.
 */
export async function take(ctx: TaskContext, item: CallItem): Promise<ClaimedItem | undefined> {
  const { held, ...sent } = item;
  if (held !== undefined) return { ...sent, ...held };
  try {
    const claim = await ctx.deps.claims.acquire(item.doc, ctx.task);
    if (claim === undefined) ctx.records.task({ ...base(ctx, item.doc), result: 'CLAIMED_ELSEWHERE' });
    return claim && { ...sent, ...claim };
  } catch (error) {
    ctx.records.task(leftAlone(base(ctx, item.doc), error, 'not claimed, not sent: the next run looks at it again'));
    return undefined;
  }
}

/**
 * A claim written again before its call (claims/claims.ts `renew`). Not written, the document was
 * never sent and is still claimed: its claim is given back (READY; when even that write fails, it
 * stays claimed until the claim expires, and its record says so), never recorded as not claimed
 * while it is.
 */
export async function renew(ctx: TaskContext, item: ClaimedItem): Promise<ClaimedItem | undefined> {
  const renewal = await ctx.deps.claims.renew(item);
  if ('claim' in renewal) return { ...item, ...renewal.claim };
  if ('unread' in renewal) {
    const state = `its claim could not be written again nor read back, so it was not sent; ${STILL_CLAIMED}`;
    ctx.records.task(leftAlone(base(ctx, item.doc), renewal.unread, state));
    return undefined;
  }
  const why = `not sent: its claim could not be written again before its call (${errorMessage(renewal.refused)})`;
  ctx.records.task(await release(ctx, item, why));
  return undefined;
}
