import { Writable } from 'node:stream';
import ms from 'ms';

/** Redrawn at most this often: a terminal is read by a person, not a meter. */
const REDRAW_MS = 200;
const CLEAR = '\r\x1b[2K';

interface Count {
  found: number;
  done: number;
  /** When the phase's first document was done: the rate is counted from there. */
  since?: number;
}

/**
 * The line a person watching a long run on a terminal sees, on stderr: the phase under way, its
 * documents done of those found, the rate and the time left at that rate. "Found" is what the
 * searches counted (the index's count), so it can trail what is done: then done is shown as the
 * total. Log lines are written through `logStream`, which clears the line before each and draws
 * it again after, so the two never mix.
 */
export class ProgressLine {
  private readonly counts = new Map<string, Count>();
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
        if (this.phase !== '') this.draw();
        callback();
      },
    });
  }

  found(phase: string, count: number): void {
    this.count(phase).found += count;
    this.update(phase);
  }

  done(phase: string): void {
    const count = this.count(phase);
    count.since ??= this.now();
    count.done += 1;
    this.update(phase);
  }

  /** The run is over: the line goes, for the summary. */
  end(): void {
    this.clear();
  }

  private count(phase: string): Count {
    let count = this.counts.get(phase);
    if (count === undefined) {
      count = { found: 0, done: 0 };
      this.counts.set(phase, count);
    }
    return count;
  }

  private update(phase: string): void {
    this.phase = phase;
    if (this.now() - this.drawnAt >= REDRAW_MS) this.draw();
  }

  private draw(): void {
    this.out.write(`${CLEAR}${this.text()}`);
    this.shown = true;
    this.drawnAt = this.now();
  }

  private clear(): void {
    if (!this.shown) return;
    this.out.write(CLEAR);
    this.shown = false;
  }

  private text(): string {
    const { found, done, since } = this.count(this.phase);
    const total = Math.max(found, done);
    const parts = [`${this.phase}: ${done.toLocaleString('en')} of ${total.toLocaleString('en')} documents`];
    const seconds = since === undefined ? 0 : (this.now() - since) / 1000;
    if (done > 1 && seconds > 0) {
      const rate = done / seconds;
      parts.push(`${rate.toFixed(1)}/s`);
      if (total > done) parts.push(`about ${ms(Math.ceil((total - done) / rate) * 1000, { long: true })} left`);
    }
    return parts.join(' · ');
  }
}
