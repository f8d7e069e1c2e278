/**
 * How many documents a run may still hand to SAP: `run --limit N`, a pilot. Each unit a lane sends
 * takes its documents from it; once it is spent, `spent` fires and the sources read no further
 * page, so a pilot on a large backlog ends after N documents and a page of what it found beside them.
 */
export class SendBudget {
  private left: number;
  private readonly spending = new AbortController();

  constructor(readonly limit: number | undefined) {
    this.left = limit ?? Number.POSITIVE_INFINITY;
  }

  /** Fires once the last document the limit allows has been handed to a lane. */
  get spent(): AbortSignal {
    return this.spending.signal;
  }

  /** How many of `wanted` documents may go (all of them without a limit). */
  take(wanted: number): number {
    const granted = Math.min(wanted, this.left);
    this.left -= granted;
    if (this.left === 0) this.spending.abort();
    return granted;
  }

  /** Why documents were not sent, and why the sources stopped reading. */
  get reason(): string {
    return `the run's --limit of ${String(this.limit)} documents was reached`;
  }
}
