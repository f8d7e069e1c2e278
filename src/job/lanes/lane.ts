import { BusinessRefusal, NotSentError, UncertainError, type Connect2ErpError } from '../../../common/errors.js';
import { notSent, type StoppableLimit } from '../../stop.js';
import type { AfterLink } from '../calls/after-link.js';
import { execute, type CallAdapter, type CallItem, type CallOutcome, type SettledOutcome } from '../calls/execute.js';
import { CLAIM_WAIT_MS } from '../../config/claim-budget.js';
import { base, safeToRepeat, type TaskContext } from './context.js';
import { release, settle } from './settle.js';
import type { Outage, SystemHealth } from './system-health.js';
import { renew, take, type ClaimedItem } from './take.js';
import { whenAll } from '../when-all.js';

/**
 * One SAP system in a run: its call slots (`maxConcurrentCalls`) and as many places for units
 * claimed ahead of a slot, both shared by every lane that calls it, and its health.
 */
export interface ErpSystemLine {
  name: string;
  calls: number;
  slots: StoppableLimit;
  ahead: StoppableLimit;
  health: SystemHealth;
}

/**
 * Runtime errors in a row, each on a document of its own sent alone, before a lane takes them for
 * its function module's rather than the documents': more than the calls that can be under way at
 * once, so that one burst of calls cannot stop a lane on documents that each dump.
 */
const suspectLimit = (calls: number): number => Math.max(3, calls + 1);

/** A unit claimed ahead of its slot: its claimed documents and its place to give back. */
interface Ahead {
  claimed: ClaimedItem[];
  place: () => void;
}

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
 * on a document sent alone is held, still claimed, until the lane shows whose it is: any answer
 * of SAP's makes it the document's; suspectLimit of them in a row, the lane's; at the lane's end,
 * a probe decides. A failure of the run's scope (the repository refused the credentials) is
 * handed to `failed`, which stops the run.
 */
export class Lane {
  /** Units waiting for a slot of the system. */
  waiting = 0;
  /** Units sent and not yet settled, waiting or under way. */
  private active = 0;
  private readonly work = new Set<Promise<void>>();
  private stopped: Outage | undefined;
  private readonly suspects: Array<{ claimed: ClaimedItem; outcome: SettledOutcome }> = [];
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
    for (const { doc } of unit) this.ctx.onRecord({ ...base(this.ctx, doc), result: 'RELEASED', message });
  }

  /** Resolves once every unit sent is settled, held runtime errors included. */
  async drained(): Promise<void> {
    while (this.work.size > 0) await Promise.all(this.work);
  }

  private async sendUnit(unit: CallItem[]): Promise<void> {
    try {
      const sent = await this.call(unit);
      if (sent === undefined) return;
      this.judge(sent.map(([, outcome]) => outcome));
      await whenAll(sent.map(([claimed, outcome]) => this.outcome(claimed, outcome)));
    } finally {
      // Idle with runtime errors held (nothing in the lane may answer after them): a probe tells whose they are.
      this.active -= 1;
      if (this.active === 0 && this.suspects.length > 0) await this.decideSuspects();
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
      ahead = await this.claimAhead(unit);
      if (ahead?.claimed.length === 0) return [];
      sent = await this.system.slots.run(this.what(unit), async () => {
        leave();
        ahead?.place();
        if (!(await this.admits())) return undefined;
        // A probe may have taken its time: the run may be stopping by now.
        if (this.ctx.deps.stop.aborted) throw notSent(this.ctx.deps.stop, this.what(unit));
        const claimed = ahead === undefined ? await this.claim(unit) : await this.renewed(ahead.claimed);
        const outcomes = await this.linked(claimed, await execute(this.adapter, claimed));
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

  /**
   * A unit of a call safe to repeat, for a system that is up: a place among those claimed ahead,
   * then its documents' claims; undefined when they wait to be claimed in their slot. A unit
   * claimed already (with its labels, or for the list it was in) needs no place: the intake's round
   * or the list bounds those; given up, its claim is given back as any other.
   */
  private async claimAhead(unit: CallItem[]): Promise<Ahead | undefined> {
    if (unit.some((item) => item.held !== undefined)) return { claimed: await this.claim(unit), place: () => {} };
    // A document an earlier attempt may have sent waits unclaimed, so a crash leaves it as it found it
    // (given up claimed, settle.ts's givenBack would keep it taken over too).
    if (!this.claimsAhead || this.down || unit.some((item) => item.repeat)) return undefined;
    const place = await this.system.ahead.enter(this.what(unit));
    const claimed = await this.claim(unit).catch((error: unknown) => {
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
  private async claim(unit: CallItem[]): Promise<ClaimedItem[]> {
    return claimedOf(unit.map(async (item) => take(this.ctx, item)));
  }

  /**
   * Claims that waited CLAIM_WAIT_MS or more for their slot, written again so that they hold for the
   * whole call (claims/claims.ts `renew`). A document whose renewal is not written goes back
   * unsent (take.ts, `renew`).
   */
  private async renewed(claimed: ClaimedItem[]): Promise<ClaimedItem[]> {
    const now = this.ctx.now().getTime();
    return claimedOf(
      claimed.map(async (item) => (now - item.at.getTime() < CLAIM_WAIT_MS ? item : renew(this.ctx, item))),
    );
  }

  /** A unit that never went out: claims given back (READY, no attempt charged), or records of documents never claimed. */
  private async giveUp(unit: CallItem[], ahead: Ahead | undefined, message: string): Promise<void> {
    if (ahead === undefined) return this.leave(unit, message);
    await whenAll(ahead.claimed.map(async (claimed) => this.ctx.onRecord(await release(this.ctx, claimed, message))));
  }

  /**
   * Linked documents get "Open in SAP" and SAP's data, read one after another while the slot is
   * held (a read is a call to the system too), and written with their DONE; what could not be had
   * joins the message.
   */
  private async linked(claimed: ClaimedItem[], outcomes: CallOutcome[]): Promise<CallOutcome[]> {
    const after = this.afterLink;
    if (after === undefined) return outcomes;
    const linked: CallOutcome[] = [];
    for (const [i, outcome] of outcomes.entries()) {
      if (!('reference' in outcome) || outcome.planned !== undefined) {
        linked.push(outcome);
        continue;
      }
      const { properties, problems } = await after(claimed[i].doc);
      const message = [outcome.message, ...problems].filter((m) => m !== undefined && m !== '').join('; ');
      linked.push({ ...outcome, written: properties, message: message === '' ? undefined : message });
    }
    return linked;
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
    if (error === undefined || error instanceof BusinessRefusal) await this.clearSuspects();
    // The repository refused the credentials while the call read the document's file (a Rest upload).
    if (error?.scope === 'run') throw error;
    if (error?.scope === 'suspect') return this.suspect(claimed, outcome);
    if (error?.scope === 'lane') this.stop('refused', error.message);
    this.ctx.onRecord(await settle(this.ctx, claimed, outcome));
  }

  /** A runtime error on a document sent alone twice: held until the lane shows whose it is. */
  private async suspect(claimed: ClaimedItem, outcome: SettledOutcome): Promise<void> {
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

  /**
   * Runtime errors held while nothing in the lane answered after them: SAP answering a probe at all
   * makes them the documents'; a system that does not, the system's; a run stopping leaves them.
   */
  private async decideSuspects(): Promise<void> {
    try {
      await this.adapter.probe();
    } catch (error) {
      const failure = error as Connect2ErpError;
      // The run is stopping: nothing is learnt, the documents wait.
      if (this.ctx.deps.stop.aborted) return this.releaseSuspects(failure.message);
      if (failure.scope === 'system' || failure instanceof UncertainError) {
        this.system.health.failed(failure);
        return this.releaseSuspects(failure.message);
      }
      // Any other answer (RFC_PING refused the user, say) is SAP answering.
    }
    await this.clearSuspects();
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

/** The documents claimed of those tried. */
async function claimedOf(tried: Array<Promise<ClaimedItem | undefined>>): Promise<ClaimedItem[]> {
  return (await whenAll(tried)).filter((item) => item !== undefined);
}
