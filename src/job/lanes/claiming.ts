import { CLAIM_WAIT_MS } from '../../config/claim-budget.js';
import type { CallItem } from '../calls/execute.js';
import { whenAll } from '../when-all.js';
import type { TaskContext } from './context.js';
import { renew, take, type ClaimedItem } from './take.js';

/** A unit claimed ahead of its slot: its claimed documents and its place to give back. */
export interface Ahead {
  claimed: ClaimedItem[];
  place: () => void;
}

/** A system's places for units claimed ahead of a slot (as many as its slots). */
interface Places {
  enter: (what: string) => Promise<() => void>;
}

/**
 * A unit of a call safe to repeat, for a system that is up (`ahead`): a place among those claimed
 * ahead, then its documents' claims; undefined when they wait to be claimed in their slot. A unit
 * claimed already (with its labels, or for the list it was in) needs no place: the intake's round
 * or the list bounds those; given up, its claim is given back as any other.
 */
export async function claimAhead(
  ctx: TaskContext,
  unit: CallItem[],
  places: Places,
  what: string,
  ahead: boolean,
): Promise<Ahead | undefined> {
  if (unit.some((item) => item.held !== undefined)) return { claimed: await claimUnit(ctx, unit), place: () => {} };
  // A document an earlier attempt may have sent waits unclaimed, so a crash leaves it as it found it
  // (given up claimed, claims.release would keep it taken over too).
  if (!ahead || unit.some((item) => item.repeat)) return undefined;
  const place = await places.enter(what);
  const claimed = await claimUnit(ctx, unit).catch((error: unknown) => {
    place();
    throw error;
  });
  let held = true;
  const giveBack = (): void => {
    if (held) place();
    held = false;
  };
  return { claimed, place: giveBack };
}

/** The unit's documents claimed: those claimed already as they are, the others each anew; those not claimed have their records. */
export async function claimUnit(ctx: TaskContext, unit: CallItem[]): Promise<ClaimedItem[]> {
  return claimedOf(unit.map(async (item) => take(ctx, item)));
}

/**
 * Claims that waited CLAIM_WAIT_MS or more for their slot, written again so that they hold for the
 * whole call (claims/claims.ts `renew`). A document whose renewal is not written goes back
 * unsent (take.ts, `renew`).
 */
export async function renewed(ctx: TaskContext, claimed: ClaimedItem[]): Promise<ClaimedItem[]> {
  const now = ctx.now().getTime();
  return claimedOf(claimed.map(async (item) => (now - item.at.getTime() < CLAIM_WAIT_MS ? item : renew(ctx, item))));
}

/** The documents claimed of those tried. */
async function claimedOf(tried: Array<Promise<ClaimedItem | undefined>>): Promise<ClaimedItem[]> {
  return (await whenAll(tried)).filter((item) => item !== undefined);
}
