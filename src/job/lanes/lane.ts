import { BusinessRefusal, NotSentError } from '../../../common/errors.js';
import { notSent } from '../../stop.js';
import { afterLinked, type AfterLink } from '../calls/after-link.js';
import { execute, type CallAdapter, type CallItem, type CallOutcome } from '../calls/execute.js';
import { base, safeToRepeat, type TaskContext } from './context.js';
import { release, settle } from './settle.js';
import type { ErpSystemLine, Outage } from './system-health.js';
import { Suspects } from './suspects.js';
import type { ClaimedItem } from './take.js';
import { claimAhead, claimUnit, renewed, type Ahead } from './claiming.js';
import { whenAll } from '../when-all.js';

/**
 * One task's calls to one SAP system: its own failure scope. A unit (a document, or a page's list
 * of bar codes) waits for a slot of the system; the call goes out, and the outcomes are written
 * once the slot is free again. When the call is safe to repeat (a lookup finds what an interrupted
 * attempt did) and the system is up, its documents are claimed ahead, while it waits: the system
 * has as many places for units claimed ahead as slots, so a slot that frees has its next call's
 * claims written already and a slot is never held for a repository round trip. Otherwise (a workflow
 * start SAP cannot be asked about) they are claimed once it has its slot, so that a crash leaves no
 * more such documents claimed-but-unsent, for an operator, than calls going out. A claim that waited
 * longer than CLAIM_WAIT_MS for its slot is written again before its call, so it still holds as
 * long as the claim budget says; claims given up unsent (the run stopping, the system down) go back
 * to READY with no attempt charged, but those SAP may have already (taken over from an interrupted
 * run, or sent again after a list SAP refused or a runtime error, for a call it can be asked about)
 * stay taken over, their claims expired at once, to be looked up first (settle.ts).
 *
 * A failure is scoped where it was raised (common/errors.ts): the document's is its outcome; the
 * lane's (its function module refused) stops this lane; the system's (unreachable, its logon or
 * service refused) goes to the system's breaker, which every lane of the system consults before
 * it claims: either way the documents go back to READY with no attempt charged. A runtime error
 * on a document sent alone is held, still claimed, until the lane shows whose it is (suspects.ts).
 * A failure of the run's scope (the repository refused the credentials) is
 * handed to `failed`, which stops the run.
 */
export class Lane {
  /** Units waiting for a slot of the system. */
  waiting = 0;
  /** Units sent and not yet settled, waiting or under way. */
  private active = 0;
  private readonly work = new Set<Promise<void>>();
  private stopped: Outage | undefined;
  private readonly suspects: Suspects;
  /** Whether documents are claimed while they wait for a slot: the call is safe to repeat. */
  private readonly claimsAhead: boolean;

  constructor(
    private readonly ctx: TaskContext,
    readonly system: ErpSystemLine,
    private readonly adapter: CallAdapter,
    /** What a linked document also gets (after-link.ts), when the task or the system asks for anything. */
    private readonly afterLink: AfterLink | undefined,
    private readonly hooks: {
      /** A unit left the waiting: a source may read on. */
      roomChanged: () => void;
      /** A failure of the run's scope. */
      failed: (error: unknown) => void;
    },
  ) {
    this.claimsAhead = safeToRepeat(ctx.call);
    this.suspects = new Suspects(ctx, adapter, system, {
      stopped: () => this.stopped !== undefined,
      downReason: () => this.downReason(),
      stop: (reason) => this.stop('unavailable', reason),
    });
  }

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
    this.active += 1;
    const work: Promise<void> = this.sendUnit(unit)
      .catch((error: unknown) => this.hooks.failed(error))
      .finally(() => this.work.delete(work));
    this.work.add(work);
  }

  /** Documents that never got a call: their record, nothing written. */
  leave(unit: CallItem[], message: string): void {
    for (const { doc } of unit) this.ctx.records.task({ ...base(this.ctx, doc), result: 'RELEASED', message });
  }

  /** Resolves once every unit sent is settled, held runtime errors included. */
  async drained(): Promise<void> {
    while (this.work.size > 0) await Promise.all(this.work);
  }

  private async sendUnit(unit: CallItem[]): Promise<void> {
    try {
      const sent = await this.call(unit);
      if (sent === undefined) return;
      await whenAll(sent.map(([claimed, outcome]) => this.outcome(claimed, outcome)));
    } finally {
      // Idle with runtime errors held (nothing in the lane may answer after them): a probe tells whose they are.
      this.active -= 1;
      if (this.active === 0 && this.suspects.size > 0) await this.suspects.decide();
    }
  }

  /** The claims, a slot and the call; undefined (the documents' records made) when it never went out. */
  private async call(unit: CallItem[]): Promise<Array<[ClaimedItem, CallOutcome]> | undefined> {
    let waits = true;
    const leave = (): void => {
      if (!waits) return;
      waits = false;
      this.waiting -= 1;
      this.hooks.roomChanged();
    };
    let ahead: Ahead | undefined;
    let sent: Array<[ClaimedItem, CallOutcome]> | undefined;
    let notSentWhy: string | undefined;
    try {
      ahead = await claimAhead(this.ctx, unit, this.system.ahead, this.what(unit), this.claimsAhead && !this.down);
      if (ahead?.claimed.length === 0) return [];
      sent = await this.system.slots.run(this.what(unit), async () => {
        leave();
        ahead?.place();
        if (!(await this.admits())) return undefined;
        // A probe may have taken its time: the run may be stopping by now.
        if (this.ctx.deps.stop.aborted) throw notSent(this.ctx.deps.stop, this.what(unit));
        const claimed = ahead === undefined ? await claimUnit(this.ctx, unit) : await renewed(this.ctx, ahead.claimed);
        const docs = claimed.map((item) => item.doc);
        const outcomes = await afterLinked(this.afterLink, docs, await execute(this.adapter, claimed));
        // Judged before the slot frees: the next call of the system waiting for it sees the breaker as this call left it.
        this.judge(outcomes);
        return claimed.map((item, i): [ClaimedItem, CallOutcome] => [item, outcomes[i]]);
      });
    } catch (error) {
      if (!(error instanceof NotSentError)) throw error;
      notSentWhy = error.message;
    } finally {
      leave();
      ahead?.place();
    }
    if (sent === undefined) await this.giveUp(unit, ahead, notSentWhy ?? `left for the next run: ${this.downReason()}`);
    return sent;
  }

  /** A unit that never went out: claims given back (READY, no attempt charged), or records of documents never claimed. */
  private async giveUp(unit: CallItem[], ahead: Ahead | undefined, message: string): Promise<void> {
    if (ahead === undefined) return this.leave(unit, message);
    await whenAll(
      ahead.claimed.map(async (claimed) => this.ctx.records.task(await release(this.ctx, claimed, message))),
    );
  }

  /**
   * What a call's outcomes say of its system, once per call (a list is one call): SAP answered
   * (done, or a business refusal), or the system did not take it.
   */
  private judge(outcomes: CallOutcome[]): void {
    const failure = outcomes.find((o) => o.error?.scope === 'system')?.error;
    if (failure !== undefined) return this.system.health.failed(failure);
    if (outcomes.some((o) => (o.error === undefined && o.alone === undefined) || o.error instanceof BusinessRefusal))
      this.system.health.answered();
  }

  private async admits(): Promise<boolean> {
    if (this.stopped !== undefined) return false;
    return this.system.health.admits(() => this.adapter.probe());
  }

  private downReason(): string {
    return this.stopped?.reason ?? this.system.health.reason;
  }

  private async outcome(sent: ClaimedItem, outcome: CallOutcome): Promise<void> {
    // A list SAP refused or that dumped: the document goes again alone, under the claim it has (renewed if it waits long).
    if (outcome.alone) {
      const { doc, task, token, at, expires, lastLook } = sent;
      return this.send([{ doc, repeat: true, lastLook, held: { doc, task, token, at, expires } }]);
    }
    // Sent again after a runtime error: given back unsent, it must be looked up like any repeat.
    const claimed = 'repeated' in outcome ? { ...sent, repeat: true } : sent;
    const { error } = outcome;
    if (error === undefined || error instanceof BusinessRefusal) await this.suspects.clear();
    // The repository refused the credentials while the call read the document's file (a Rest upload).
    if (error?.scope === 'run') throw error;
    if (error?.scope === 'suspect') return this.suspects.add(claimed, outcome);
    if (error?.scope === 'lane') this.stop('refused', error.message);
    this.ctx.records.task(await settle(this.ctx, claimed, outcome));
  }

  private stop(kind: Outage['kind'], reason: string): void {
    if (this.stopped !== undefined) return;
    this.stopped = {
      system: this.system.name,
      transport: this.ctx.task.function,
      task: this.ctx.task.name,
      kind,
      reason,
    };
    this.ctx.deps.log.error('lane stopped', { system: this.system.name, reason });
  }

  private what(unit: CallItem[]): string {
    return unit.length === 1
      ? `${this.adapter.name} for ${unit[0].doc.path}`
      : `${this.adapter.name} for ${unit.length} documents`;
  }
}
