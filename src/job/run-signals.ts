/**
 * A run's stops as one tree. At the root the run's stop (SIGTERM, Ctrl-C, --max-duration): nothing
 * more is claimed, calls under way get the grace period. Below it `reading`: no source reads a
 * further page, which the stop fires and so does `endReading` (a source failed, a lane met a
 * failure of the run's scope, the run's --limit was reached). Below that, one child per source
 * for what ends it alone (a task's search, once every system it may send to is down).
 */
export class RunSignals {
  readonly reading: AbortSignal;
  private readonly reads = new AbortController();

  constructor(readonly stop: AbortSignal) {
    this.reading = AbortSignal.any([stop, this.reads.signal]);
  }

  /** No source reads on; the first reason stays. */
  endReading(reason: unknown): void {
    this.reads.abort(reason);
  }

  /** A source's own signal: it fires with `reading`, or when the source calls `end`. */
  source(): { signal: AbortSignal; end: () => void } {
    const own = new AbortController();
    return { signal: AbortSignal.any([this.reading, own.signal]), end: () => own.abort() };
  }
}
