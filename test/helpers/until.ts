import { setTimeout as sleep } from 'node:timers/promises';

/** Waits until `condition` holds, looking every 10 ms: what it waits for is held by the test, not raced. */
export async function until(condition: () => boolean, what: string, withinMs = 30_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(10);
  }
}
