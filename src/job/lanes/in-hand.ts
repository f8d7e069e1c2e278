import { Waiters } from './waiters.js';

/** How many settled documents a run remembers, so that a search index lagging behind its writes does not hand them over again. */
const RECENT_HELD = 10_000;

/**
 * The documents of a run that a lane holds, from the moment a source hands one over until its
 * record is made: a document is in at most one lane at a time, whichever source or task finds it
 * (the structure that keeps the intake's hand-over, the tasks' searches and two tasks of one use
 * case from sending it twice; another process's claims are told apart by their tokens). The last
 * RECENT_HELD documents it let go are not taken again in the same run. The intake's documents are
 * counted: after each page it waits while `intakeAhead` of them are unsettled, so it labels no
 * further ahead of the sending than that and the pages it has under way.
 */
export class InHand {
  private readonly held = new Map<string, 'intake' | 'search'>();
  private readonly recent = new Set<string>();
  private intake = 0;
  private readonly waiters = new Waiters();

  constructor(
    private readonly intakeAhead: number,
    private readonly recentHeld = RECENT_HELD,
  ) {}

  /** True when the caller now holds the document; false when a lane has it, or had it in this run. */
  take(uid: string, from: 'intake' | 'search'): boolean {
    if (this.held.has(uid) || this.recent.has(uid)) return false;
    this.held.set(uid, from);
    if (from === 'intake') this.intake += 1;
    return true;
  }

  /** The document's record is made (or it was no longer due): let go. */
  done(uid: string): void {
    const from = this.held.get(uid);
    if (from === undefined) return;
    this.held.delete(uid);
    this.recent.add(uid);
    if (this.recent.size > this.recentHeld) this.recent.delete(this.recent.values().next().value as string);
    if (from !== 'intake') return;
    this.intake -= 1;
    if (this.intake < this.intakeAhead) this.waiters.wake();
  }

  /** Resolves once fewer than `intakeAhead` of the intake's documents are held, or `stop` fires. */
  intakeRoom(stop: AbortSignal): Promise<void> {
    return this.waiters.until(() => this.intake < this.intakeAhead, stop);
  }
}
