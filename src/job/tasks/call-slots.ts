import { StoppableLimit } from '../../stop.js';

/**
 * A task's calls to the ERP: per system, as many at once as it takes (`maxConcurrentCalls`).
 * The slots also set how far the task reads ahead: the next page is read while fewer calls wait
 * for a slot than the systems met so far take at once, so that each slot has its next call ready
 * when it frees. What waits is then at most a slot's worth of calls less one, plus the page that
 * crossed the mark and the page read ahead (a call is a document, or a page's list of bar codes).
 * One knob, the calls SAP agreed to, sizes both; what waits is not claimed yet (run-task.ts).
 */
export class CallSlots {
  private readonly limits = new Map<string, StoppableLimit>();
  private capacity = 0;
  private waiting = 0;
  private wake: (() => void) | undefined;

  /** `stop`: once it fires, calls still waiting for a slot are refused (StoppableLimit). */
  constructor(
    private readonly callsAtOnce: (system: string) => number,
    private readonly stop: AbortSignal,
  ) {}

  /** `work` in one of the system's slots; a call refused before it had one is a NotSentError. */
  run<T>(system: string, what: string, work: () => Promise<T>): Promise<T> {
    const limit = this.limit(system);
    this.waiting += 1;
    let waits = true;
    const leave = (): void => {
      if (!waits) return;
      waits = false;
      this.waiting -= 1;
      if (this.waiting < this.capacity) this.wakeReader();
    };
    return limit
      .run(what, () => {
        leave();
        return work();
      })
      .finally(leave);
  }

  /** Resolves once the task may read its next page: few enough calls wait for a slot. */
  async room(): Promise<void> {
    while (this.waiting > 0 && this.waiting >= this.capacity) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  private wakeReader(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private limit(system: string): StoppableLimit {
    let limit = this.limits.get(system);
    if (limit === undefined) {
      const calls = this.callsAtOnce(system);
      limit = new StoppableLimit(calls, this.stop);
      this.limits.set(system, limit);
      this.capacity += calls;
    }
    return limit;
  }
}
