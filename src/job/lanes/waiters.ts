/**
 * Those waiting for a condition that changes as work settles (room in a lane, the intake's
 * documents settled): each waits until `ready()` holds or `stop` fires, and `wake()` has them
 * look again. A waiter's listener on `stop` goes when it is woken, so none piles up on the run's signal.
 */
export class Waiters {
  private wakers: Array<() => void> = [];

  async until(ready: () => boolean, stop: AbortSignal): Promise<void> {
    while (!ready() && !stop.aborted) {
      await new Promise<void>((resolve) => {
        const woken = (): void => {
          stop.removeEventListener('abort', woken);
          resolve();
        };
        this.wakers.push(woken);
        stop.addEventListener('abort', woken, { once: true });
      });
    }
  }

  wake(): void {
    const wakers = this.wakers;
    this.wakers = [];
    for (const wake of wakers) wake();
  }
}
