import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/** One injected failure: matched by method (or any of several) and a substring of the path, used `times` times. */
export interface FaultRule {
  method?: string | string[];
  path?: string;
  /** ERP sandbox only: the function module called. */
  functionName?: string;
  times?: number;
  /** Answer with this status instead of handling the request. */
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Wait this long before answering (or before handling, when no status is given): a time-out. */
  delayMs?: number;
  /** Close the connection without answering. */
  drop?: boolean;
  /** Do the work, then close the connection instead of answering: the write happened, its answer was lost. */
  loseAnswer?: boolean;
  /** Let this many matching requests through before the rule applies (a document's second write, say). */
  skip?: number;
  /**
   * After `delayMs`, handle the request even when the client has given up meanwhile: the server
   * did the work but the answer was lost. By default a request whose client is gone is dropped.
   */
  handleAfterDisconnect?: boolean;
}

/** Latency and faults, shared by both sandboxes, for tests and benchmarks. */
export class Faults {
  latencyMs = 0;
  /** Sees every request that reaches the fault check, with the function module for the ERP: the benchmark counts and times with it. */
  observe: (req: IncomingMessage, res: ServerResponse, functionName?: string) => void = () => undefined;
  private rules: Array<FaultRule & { left: number; skipped: number }> = [];
  /** While set, requests wait for it to open: a server that has them and has not answered yet. */
  private gate?: { opened: Promise<void>; open: () => void };
  private held = 0;
  private heldWatchers: Array<{ count: number; reached: () => void }> = [];
  /** How much shorter than `latencyMs` the wait is, so that answers leave `latencyMs` after arrival on average. */
  private trimMs = 0;

  add(rule: FaultRule): void {
    this.rules.push({ ...rule, left: rule.times ?? 1, skipped: 0 });
  }

  /** Every rule gone: the server is well again. */
  clear(): void {
    this.rules = [];
  }

  /**
   * Hold every request from now on, after its latency, until `release()`. A test holds the work
   * that must still be under way at some point (a deadline, a signal) this way, instead of betting
   * on how fast the machine gets there.
   */
  hold(): void {
    const gate = {} as { opened: Promise<void>; open: () => void };
    gate.opened = new Promise<void>((resolve) => (gate.open = resolve));
    this.gate = gate;
  }

  /** Let the held requests, and every later one, go on. */
  release(): void {
    this.gate?.open();
    this.gate = undefined;
  }

  /** Resolves once `count` requests are being held at the same time. */
  whenHeld(count: number): Promise<void> {
    return new Promise((reached) => {
      this.heldWatchers.push({ count, reached });
      this.notifyHeld();
    });
  }

  private notifyHeld(): void {
    const due = this.heldWatchers.filter((watcher) => this.held >= watcher.count);
    this.heldWatchers = this.heldWatchers.filter((watcher) => this.held < watcher.count);
    for (const watcher of due) watcher.reached();
  }

  /** Returns true when the request was answered (or dropped) by a fault. */
  async apply(req: IncomingMessage, res: ServerResponse, functionName?: string): Promise<boolean> {
    this.observe(req, res, functionName);
    const arrived = performance.now();
    if (this.latencyMs > 0) await sleep(dithered(this.latencyMs - this.trimMs));
    const gate = this.gate;
    if (gate !== undefined) {
      this.held++;
      this.notifyHeld();
      await gate.opened;
      this.held--;
    }
    const rule = this.rules.find(
      (r) =>
        r.left > 0 &&
        (r.method === undefined || [r.method].flat().includes(req.method as string)) &&
        (r.path === undefined || (req.url as string).includes(r.path)) &&
        (r.functionName === undefined || r.functionName === functionName),
    );
    if (rule !== undefined && rule.skipped < (rule.skip ?? 0)) rule.skipped++;
    else if (rule !== undefined) return this.inject(rule, req, res);
    if (this.latencyMs > 0) res.once('finish', () => this.learn(performance.now() - arrived));
    return false;
  }

  private async inject(
    rule: FaultRule & { left: number },
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<boolean> {
    rule.left--;
    if (rule.delayMs !== undefined) await sleep(rule.delayMs);
    // A client that gave up (or died) while we waited never delivered its request.
    if (rule.drop || (req.socket.destroyed && !rule.handleAfterDisconnect)) {
      req.socket.destroy();
      return true;
    }
    if (rule.loseAnswer) {
      // The handler does the work and answers into a connection that is closed instead.
      res.writeHead = () => res;
      res.end = (() => {
        req.socket.destroy();
        return res;
      }) as ServerResponse['end'];
      return false;
    }
    if (rule.status === undefined) return false;
    res.writeHead(rule.status, rule.headers ?? { 'Content-Type': 'text/plain' });
    res.end(rule.body ?? '');
    return true;
  }

  /**
   * The sandbox stands in for a server that answers in `latencyMs`, but its timers fire late
   * and its own work comes on top (BENCHMARKS.md, "ms per request in the sandbox"). So the wait is trimmed by a
   * running estimate of that excess, and answers leave on time on average.
   */
  private learn(answeredMs: number): void {
    this.trimMs = Math.min(this.latencyMs, Math.max(0, this.trimMs + 0.05 * (answeredMs - this.latencyMs)));
  }
}

/**
 * Timers count whole milliseconds (4.6 waits 4), so the fraction is kept on average by
 * rounding up that often: the trim can then move the mean wait smoothly.
 */
function dithered(ms: number): number {
  const whole = Math.floor(Math.max(0, ms));
  return whole + (Math.random() < ms - whole ? 1 : 0);
}
