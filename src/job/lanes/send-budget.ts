import type { RunSignals } from '../run-signals.js';

/**
 * How many documents a run may still hand to SAP: `run --limit N`, a pilot. Each unit a lane sends
 * takes its documents from it; once it is spent, the sources read no further page (RunSignals), so
 * a pilot on a large backlog ends after N documents and a page of what it found beside them.
 */
export class SendBudget {
  private left: number;

  constructor(
    readonly limit: number | undefined,
    private readonly signals: RunSignals,
  ) {
    this.left = limit ?? Number.POSITIVE_INFINITY;
  }

  /** The last document the limit allows has been handed to a lane. */
  get spent(): boolean {
    return this.left === 0;
  }

  /** How many of `wanted` documents may go (all of them without a limit). */
  take(wanted: number): number {
    const granted = Math.min(wanted, this.left);
    this.left -= granted;
    if (this.spent) this.signals.endReading(this.reason);
    return granted;
  }

  /** Why documents were not sent, and why the sources stopped reading. */
  get reason(): string {
    return `the run's --limit of ${String(this.limit)} documents was reached`;
  }
}
