import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import PQueue from 'p-queue';
import { NotSentError } from '../common/errors.js';

/** A signal that never fires: the default for code run without a stop controller. */
export const NEVER: AbortSignal = new AbortController().signal;

/** `what` refused before it was sent, because the run is stopping. */
export const notSent = (stop: AbortSignal, what: string): NotSentError =>
  new NotSentError(`${what}: not sent, the run is stopping (${String(stop.reason)})`, { target: what });

/**
 * A concurrency limit for calls to the ERP, on p-queue. Once the run stops, calls still waiting for
 * their turn are refused at once with a NotSentError (they never leave, so their documents can be
 * released within the grace period); calls under way go on. A refused call's turn still comes, and
 * does nothing: p-queue's own `signal` would take it out of the queue, but a signal of its own for
 * each call cost about 20 µs of CPU more per call, and a link makes three (BENCHMARKS.md, issue 57).
 */
export class StopAwareQueue {
  private readonly queue: PQueue;
  /** Refuses each call still waiting; one listener on the stop for all of them. */
  private readonly waiting = new Set<() => void>();

  constructor(
    concurrency: number,
    private readonly stop: AbortSignal,
  ) {
    this.queue = new PQueue({ concurrency });
    // NEVER is one signal for the whole process: a listener on it would keep every queue made with it alive.
    if (stop === NEVER) return;
    stop.addEventListener(
      'abort',
      () => {
        for (const refuse of this.waiting) refuse();
        this.waiting.clear();
      },
      { once: true },
    );
  }

  run<T>(what: string, work: () => Promise<T>): Promise<T> {
    if (this.stop.aborted) return Promise.reject(notSent(this.stop, what));
    return new Promise<T>((resolve, reject) => {
      const refuse = (): void => reject(notSent(this.stop, what));
      this.waiting.add(refuse);
      void this.queue.add(async () => {
        // Refused while it waited: its turn comes, but it is never sent.
        if (!this.waiting.delete(refuse)) return;
        await work().then(resolve, reject);
      });
    });
  }

  /** Waits for a turn held across steps: resolves with the function that gives it back. */
  enter(what: string): Promise<() => void> {
    return new Promise((entered, reject) => {
      this.run(what, () => new Promise<void>((leave) => entered(leave))).catch(reject);
    });
  }
}

/**
 * The work's end, or — once a stop is requested — at most `graceMs` more of it. Resolves
 * true when the work finished, false when the grace period ran out first; the work's own
 * error is thrown when it ends in time.
 */
export async function withinGrace(work: Promise<unknown>, stop: AbortSignal, graceMs: number): Promise<boolean> {
  const finished = new AbortController();
  const graceOver = (async () => {
    if (!stop.aborted) await once(stop, 'abort', { signal: finished.signal });
    await sleep(graceMs, undefined, { signal: finished.signal });
    return false as const;
  })().catch(() => false as const); // cancelled because the work ended first
  try {
    return await Promise.race([work.then(() => true as const), graceOver]);
  } finally {
    finished.abort();
    // Work abandoned after the grace period may still fail; the run has already reported it.
    work.catch(() => undefined);
  }
}
