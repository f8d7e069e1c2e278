import { BusinessRefusal, NotSentError, type Connect2ErpError } from '../../../common/errors.js';
import type { StoppableLimit } from '../../stop.js';
import { execute, type CallAdapter, type CallItem, type CallOutcome } from '../calls/execute.js';
import { base, type TaskContext } from './context.js';
import { release, settle } from './settle.js';
import type { Outage, SystemHealth } from './system-health.js';
import { take, type Claimed } from './take.js';

/** One SAP system in a run: its call slots (`maxConcurrentCalls`), shared by every lane that calls it, and its health. */
export interface ErpSystemLine {
  name: string;
  calls: number;
  slots: StoppableLimit;
  health: SystemHealth;
}

/**
 * Runtime errors in a row, each on a document of its own sent alone, before a lane takes them for
 * its function module's rather than the documents': more than the calls that can be under way at
 * once, so that one burst of calls cannot stop a lane on documents that each dump.
 */
const suspectLimit = (calls: number): number => Math.max(3, calls + 1);

const defined = <T>(value: T | undefined): value is T => value !== undefined;

/** Promise.all that lets every promise settle before it throws the first failure: no write is left running behind it. */
export async function whenAll<T>(promises: Array<Promise<T>>): Promise<T[]> {
  const results = await Promise.allSettled(promises);
  const failure = results.find((result) => result.status === 'rejected');
  if (failure) throw failure.reason;
  return results.map((result) => (result as PromiseFulfilledResult<T>).value);
}

/** A claimed document and what its earlier attempts left to settle first. */
type ClaimedItem = Claimed & CallItem;

/**
 * One task's calls to one SAP system: its own failure scope. A unit (a document, or a page's list
 * of bar codes) waits, unclaimed, for a slot of the system; once it has one its documents are
 * claimed, the call goes out, and the outcomes are written once the slot is free again. So a run
 * holds no more claimed-but-unsent documents than it has calls going out, and a crash costs those.
 *
 * A failure is scoped where it was raised (common/errors.ts): the document's is its outcome; the
 * lane's (its function module refused) stops this lane; the system's (unreachable, its logon or
 * service refused) goes to the system's breaker, which every lane of the system consults before
 * it claims: either way the documents go back to READY with no attempt charged. A runtime error
 * on a document sent alone is held, still claimed, until the lane shows whose it is: any answer
 * of SAP's makes it the document's; suspectLimit of them in a row, the lane's; at the lane's end,
 * a probe decides. A failure of the run's scope (the repository refused the credentials) is
 * handed to `failed`, which stops the run.
 */
export class Lane {
  /** Units waiting for a slot of the system. */
  waiting = 0;
  private readonly work = new Set<Promise<void>>();
  private stopped: Outage | undefined;
  private readonly suspects: Array<{ claimed: Claimed; outcome: CallOutcome }> = [];

  constructor(
    private readonly ctx: TaskContext,
    readonly system: ErpSystemLine,
    private readonly adapter: CallAdapter,
    private readonly hooks: {
      /** A new claim token (status/transitions.ts). */
      token: () => string;
      /** A unit left the waiting: a source may read on. */
      roomChanged: () => void;
      /** A failure of the run's scope. */
      failed: (error: unknown) => void;
    },
  ) {}

  /** No call of this lane goes out: it stopped, or its system is down. */
  get down(): boolean {
    return this.stopped !== undefined || this.system.health.down;
  }

  /** Whether a unit would wait behind the system's slots' worth of units and `slack` more. */
  full(slack: number): boolean {
    return this.waiting >= this.system.calls + slack;
  }

  /** Fewer units wait than the system has slots: each slot has its next call ready. */
  get hasRoom(): boolean {
    return this.waiting < this.system.calls;
  }

  /** Why the lane stopped, for the report; undefined when it did not. */
  get outage(): Outage | undefined {
    return this.stopped;
  }

  /** Sends a unit: its documents wait, unclaimed, for a slot of the system. */
  send(unit: CallItem[]): void {
    this.waiting += 1;
    const work: Promise<void> = this.sendUnit(unit)
      .catch((error: unknown) => this.hooks.failed(error))
      .finally(() => this.work.delete(work));
    this.work.add(work);
  }

  /** Documents that never got a call: their record, nothing written. */
  leave(unit: CallItem[], message: string): void {
    for (const { doc } of unit) this.ctx.onRecord({ ...base(this.ctx, doc), result: 'RELEASED', message });
  }

  /** Resolves once every unit sent is settled, held runtime errors included. */
  async drained(): Promise<void> {
    while (this.work.size > 0) await Promise.all(this.work);
    if (this.suspects.length === 0) return;
    // Nothing in the lane answered after them: whether SAP answers at all tells whose they are.
    try {
      await this.adapter.probe();
      await this.clearSuspects();
    } catch (error) {
      const failure = error as Connect2ErpError;
      this.system.health.failed(failure);
      await this.releaseSuspects(failure.message);
    }
  }

  private async sendUnit(unit: CallItem[]): Promise<void> {
    let waits = true;
    const leave = (): void => {
      if (!waits) return;
      waits = false;
      this.waiting -= 1;
      this.hooks.roomChanged();
    };
    let sent: Array<[ClaimedItem, CallOutcome]> | undefined;
    try {
      sent = await this.system.slots.run(this.what(unit), async () => {
        leave();
        if (!(await this.admits())) return undefined;
        const claimed = (
          await whenAll(
            unit.map(async (item) => {
              const taken = await take(this.ctx, item.doc, this.hooks.token());
              return taken && { ...item, ...taken };
            }),
          )
        ).filter(defined);
        const outcomes = await execute(this.adapter, claimed);
        return claimed.map((item, i): [ClaimedItem, CallOutcome] => [item, outcomes[i]]);
      });
    } catch (error) {
      if (!(error instanceof NotSentError)) throw error;
      return this.leave(unit, error.message);
    } finally {
      leave();
    }
    if (sent === undefined) return this.leave(unit, `left for the next run: ${this.downReason()}`);
    await whenAll(sent.map(([claimed, outcome]) => this.outcome(claimed, outcome)));
  }

  private async admits(): Promise<boolean> {
    if (this.stopped !== undefined) return false;
    return this.system.health.admits(() => this.adapter.probe());
  }

  private downReason(): string {
    return this.stopped?.reason ?? this.system.health.reason;
  }

  private async outcome(claimed: Claimed, outcome: CallOutcome): Promise<void> {
    const { error } = outcome;
    if (error === undefined || error instanceof BusinessRefusal) {
      this.system.health.answered();
      await this.clearSuspects();
    }
    if (error?.scope === 'suspect') return this.suspect(claimed, outcome);
    if (error?.scope === 'system') this.system.health.failed(error);
    if (error?.scope === 'lane') this.stop('refused', error.message);
    this.ctx.onRecord(await settle(this.ctx, claimed, outcome));
  }

  /** A runtime error on a document sent alone twice: held until the lane shows whose it is. */
  private async suspect(claimed: Claimed, outcome: CallOutcome): Promise<void> {
    // The lane has stopped on runtime errors already: one more is the same.
    if (this.stopped !== undefined)
      return this.ctx.onRecord(
        await release(this.ctx, claimed, `${this.downReason()}; left for the next run, no attempt charged`),
      );
    this.suspects.push({ claimed, outcome });
    const limit = suspectLimit(this.system.calls);
    if (this.suspects.length < limit) return;
    this.stop(
      'unavailable',
      `${this.adapter.name} ended in a runtime error for ${limit} documents in a row, each sent alone: ${String(outcome.error?.message)}`,
    );
    await this.releaseSuspects(this.downReason());
  }

  /** SAP answered in this lane: the runtime errors held were the documents' own. */
  private async clearSuspects(): Promise<void> {
    const held = this.suspects.splice(0);
    await whenAll(
      held.map(async ({ claimed, outcome }) => this.ctx.onRecord(await settle(this.ctx, claimed, outcome))),
    );
  }

  private async releaseSuspects(reason: string): Promise<void> {
    const held = this.suspects.splice(0);
    const message = `${reason}; left for the next run, no attempt charged`;
    await whenAll(held.map(async ({ claimed }) => this.ctx.onRecord(await release(this.ctx, claimed, message))));
  }

  private stop(kind: Outage['kind'], reason: string): void {
    if (this.stopped !== undefined) return;
    this.stopped = { system: this.system.name, task: this.ctx.task.name, kind, reason };
    this.ctx.deps.log.error('lane stopped', { system: this.system.name, reason });
  }

  private what(unit: CallItem[]): string {
    return unit.length === 1
      ? `${this.adapter.name} for ${unit[0].doc.path}`
      : `${this.adapter.name} for ${unit.length} documents`;
  }
}
