import { Writable } from 'node:stream';
import ms from 'ms';

/** Redrawn at most this often: a terminal is read by a person, not a meter. */
const REDRAW_MS = 200;
const CLEAR = '\r\x1b[2K';

interface Count {
  found: number;
  /** A search could not count (Nuxeo's resultsCount -1): the total is not known. */
  unknown: boolean;
  done: number;
  /** When the phase's first document was done: the rate is counted from there. */
  since?: number;
}

/**
 * The line a person watching a long run on a terminal sees, on stderr: the phase under way, its
 * documents done of those found, the rate and the time left at that rate. "Found" is what the
 * searches counted (the index's count), so it can trail what is done: then done is shown as the
 * total. A phase whose backlog is not all counted yet (the intake before its last folder's search,
 * a task while the intake still hands it documents) says "found so far" and promises no end.
 * Log lines are written through `logStream`, which clears the line before each and draws it
 * again after, so the two never mix.
 */
export class ProgressLine {
  private readonly counts = new Map<string, Count>();
  /** Phases whose backlog is all counted: only they get a time left. */
  private readonly settled = new Set<string>();
  private phase = '';
  private shown = false;
  private drawnAt = Number.NEGATIVE_INFINITY;

  readonly logStream: Writable;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly now: () => number = Date.now,
  ) {
    this.logStream = new Writable({
      write: (chunk: Buffer, _encoding, callback) => {
        this.clear();
        this.out.write(chunk);
        // No phase yet, or the run is over: the log line stands alone.
        if (this.phase !== '') this.draw();
        callback();
      },
    });
  }

  /** `count` -1: the search could not tell (a page provider that does not count). */
  found(phase: string, count: number): void {
    const known = this.count(phase);
    if (count < 0) known.unknown = true;
    else known.found += count;
    this.update(phase);
  }

  /** Every search of the phase has counted, and nothing else will hand it documents. */
  settle(phase: string): void {
    this.settled.add(phase);
  }

  done(phase: string): void {
    const count = this.count(phase);
    count.since ??= this.now();
    count.done += 1;
    this.update(phase);
  }

  /** The run is over: the line goes, for the summary, and log lines after it are written alone. */
  end(): void {
    this.clear();
    this.phase = '';
  }

  private count(phase: string): Count {
    let count = this.counts.get(phase);
    if (count === undefined) {
      count = { found: 0, unknown: false, done: 0 };
      this.counts.set(phase, count);
    }
    return count;
  }

  private update(phase: string): void {
    this.phase = phase;
    if (this.now() - this.drawnAt >= REDRAW_MS) this.draw();
  }

  /** One terminal row: a line that wrapped would leave its first row behind at every redraw. */
  private draw(): void {
    // A terminal that has not told its size (0, as a pseudo-terminal may) is not cut.
    const columns = (this.out as { columns?: number }).columns;
    const text = this.text();
    this.out.write(`${CLEAR}${columns ? text.slice(0, columns - 1) : text}`);
    this.shown = true;
    this.drawnAt = this.now();
  }

  private clear(): void {
    if (!this.shown) return;
    this.out.write(CLEAR);
    this.shown = false;
  }

  private text(): string {
    const { found, unknown, done, since } = this.count(this.phase);
    const total = Math.max(found, done);
    if (unknown) return `${this.phase}: ${done.toLocaleString('en')} documents`;
    const settled = this.settled.has(this.phase);
    const parts = [
      `${this.phase}: ${done.toLocaleString('en')} of ${total.toLocaleString('en')} documents${settled ? '' : ' found so far'}`,
    ];
    const seconds = since === undefined ? 0 : (this.now() - since) / 1000;
    if (done > 1 && seconds > 0) {
      const rate = done / seconds;
      parts.push(`${rate.toFixed(1)}/s`);
      if (settled && total > done)
        parts.push(`about ${ms(Math.ceil((total - done) / rate) * 1000, { long: true })} left`);
    }
    return parts.join(' · ');
  }
}
