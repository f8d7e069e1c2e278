import { StoppableLimit } from '../../stop.js';

/** One ERP system's slots, and the calls waiting for one of them. */
interface SystemSlots {
  limit: StoppableLimit;
  calls: number;
  waiting: number;
}

/**
 * A task's calls to the ERP: per system, as many at once as it takes (`maxConcurrentCalls`).
 * The slots also set how far the task reads ahead: the next page is read while one of the systems
 * met so far has fewer calls waiting than slots, so that each slot has its next call ready when it
 * frees. With one system, what waits is then at most a slot's worth of calls less one, plus the
 * page that crossed the mark and the page read ahead (a call is a document, or a page's list of
 * bar codes). With several, a slow system does not hold up the others' reading: its calls beyond
 * its slots and a page (`full`) are left for the next run instead of waiting. One knob, the calls
 * SAP agreed to, sizes both; what waits is not claimed yet (run-task.ts).
 */
export class CallSlots {
  private readonly systems = new Map<string, SystemSlots>();
  private wake: (() => void) | undefined;

  /** `stop`: once it fires, calls still waiting for a slot are refused (StoppableLimit). */
  constructor(
    private readonly callsAtOnce: (system: string) => number,
    private readonly stop: AbortSignal,
  ) {}

  /**
   * Whether a call to `system` would wait behind its slots' worth of calls and `slack` more: then
   * it is not queued. `slack` is what a page can add, so that one system alone never reaches it.
   */
  full(system: string, slack: number): boolean {
    const slots = this.slotsOf(system);
    return slots.waiting >= slots.calls + slack;
  }

  /** `work` in one of the system's slots; a call refused before it had one is a NotSentError. */
  run<T>(system: string, what: string, work: () => Promise<T>): Promise<T> {
    const slots = this.slotsOf(system);
    slots.waiting += 1;
    let waits = true;
    const leave = (): void => {
      if (!waits) return;
      waits = false;
      slots.waiting -= 1;
      if (this.hasRoom()) this.wakeReader();
    };
    return slots.limit
      .run(what, () => {
        leave();
        return work();
      })
      .finally(leave);
  }

  /** Resolves once the task may read its next page: a system met so far has fewer calls waiting than slots. */
  async room(): Promise<void> {
    while (!this.hasRoom()) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  /** True as well before any system is met: there is nothing to wait for. */
  private hasRoom(): boolean {
    if (this.systems.size === 0) return true;
    return [...this.systems.values()].some((slots) => slots.waiting < slots.calls);
  }

  private wakeReader(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private slotsOf(system: string): SystemSlots {
    let slots = this.systems.get(system);
    if (slots === undefined) {
      const calls = this.callsAtOnce(system);
      slots = { limit: new StoppableLimit(calls, this.stop), calls, waiting: 0 };
      this.systems.set(system, slots);
    }
    return slots;
  }
}
