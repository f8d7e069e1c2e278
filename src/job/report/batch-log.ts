import type { Logger } from '../../log.js';

/**
 * One info line per batch of documents a phase settled, with how many came to what, instead of a
 * line per document (a 3,000-document run writes some sixty, not 6,000): the document lines are at
 * level debug, and failures stay warn lines of their own. What remains at the end is said by `flush`.
 */
export class BatchLog {
  private counts = new Map<string, number>();
  private size = 0;

  constructor(
    private readonly log: Logger,
    private readonly message: string,
    private readonly fields: Record<string, unknown>,
    private readonly batch: number,
  ) {}

  /** A document settled with `outcome` (DONE, READY, error…). */
  add(outcome: string): void {
    this.counts.set(outcome, (this.counts.get(outcome) ?? 0) + 1);
    if (++this.size >= this.batch) this.flush();
  }

  /** The batch so far, if it holds any document. */
  flush(): void {
    if (this.size === 0) return;
    this.log.info(this.message, { ...this.fields, documents: this.size, ...Object.fromEntries(this.counts) });
    this.counts = new Map();
    this.size = 0;
  }
}
