import { UncertainError, type Connect2ErpError } from '../../../common/errors.js';
import type { CallAdapter, SettledOutcome } from '../calls/execute.js';
import { whenAll } from '../when-all.js';
import type { TaskContext } from './context.js';
import { release, settle } from './settle.js';
import type { SystemHealth } from './system-health.js';
import type { ClaimedItem } from './take.js';

/**
 * Runtime errors in a row, each on a document of its own sent alone, before a lane takes them for
 * its function module's rather than the documents': more than the calls that can be under way at
 * once, so that one burst of calls cannot stop a lane on documents that each dump.
 */
const suspectLimit = (calls: number): number => Math.max(3, calls + 1);

/** What the suspects see of their lane. */
interface SuspectsLane {
  stopped: () => boolean;
  /** Why no call of the lane goes out. */
  downReason: () => string;
  /** The lane stops: its function module dumps on every document. */
  stop: (reason: string) => void;
}

/**
 * A lane's runtime errors on documents sent alone, held, still claimed, until the lane shows whose
 * they are: any answer of SAP's in the lane makes them the documents' (settled as they ended);
 * suspectLimit of them in a row, the lane's (given back, no attempt charged, and the lane stops);
 * once the lane is idle with some held, a probe decides.
 */
export class Suspects {
  private readonly held: Array<{ claimed: ClaimedItem; outcome: SettledOutcome }> = [];
  private readonly limit: number;

  constructor(
    private readonly ctx: TaskContext,
    private readonly adapter: CallAdapter,
    private readonly system: { calls: number; health: SystemHealth },
    private readonly lane: SuspectsLane,
  ) {
    this.limit = suspectLimit(system.calls);
  }

  get size(): number {
    return this.held.length;
  }

  /** A runtime error on a document sent alone twice: held until the lane shows whose it is. */
  async add(claimed: ClaimedItem, outcome: SettledOutcome): Promise<void> {
    // The lane has stopped on runtime errors already: one more is the same.
    if (this.lane.stopped())
      return this.ctx.records.task(
        await release(this.ctx, claimed, `${this.lane.downReason()}; left for the next run, no attempt charged`),
      );
    this.held.push({ claimed, outcome });
    if (this.held.length < this.limit) return;
    this.lane.stop(
      `${this.adapter.name} ended in a runtime error for ${this.limit} documents in a row, each sent alone: ${String(outcome.error?.message)}`,
    );
    await this.releaseAll(this.lane.downReason());
  }

  /**
   * Runtime errors held while nothing in the lane answered after them: SAP answering a probe at all
   * makes them the documents'; a system that does not, the system's; a run stopping leaves them.
   */
  async decide(): Promise<void> {
    try {
      await this.adapter.probe();
    } catch (error) {
      const failure = error as Connect2ErpError;
      // The run is stopping: nothing is learnt, the documents wait.
      if (this.ctx.deps.stop.aborted) return this.releaseAll(failure.message);
      if (failure.scope === 'system' || failure instanceof UncertainError) {
        this.system.health.failed(failure);
        return this.releaseAll(failure.message);
      }
      // Any other answer (RFC_PING refused the user, say) is SAP answering.
    }
    await this.clear();
  }

  /** SAP answered in this lane: the runtime errors held were the documents' own. */
  async clear(): Promise<void> {
    const held = this.held.splice(0);
    await whenAll(
      held.map(async ({ claimed, outcome }) => this.ctx.records.task(await settle(this.ctx, claimed, outcome))),
    );
  }

  private async releaseAll(reason: string): Promise<void> {
    const held = this.held.splice(0);
    const message = `${reason}; left for the next run, no attempt charged`;
    await whenAll(held.map(async ({ claimed }) => this.ctx.records.task(await release(this.ctx, claimed, message))));
  }
}
