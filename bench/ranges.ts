import { loadavg } from 'node:os';
import { nodeCpuMs } from './startup.js';

/** Runs per figure: a throughput or CPU figure of BENCHMARKS.md is a range over at least three. */
export const ROUNDS = 3;

/** A figure at `digits` decimals, '–' when there is none (a division by zero, a CPU below the start-up's). */
export const f = (n: number, digits = 2): string => (Number.isFinite(n) ? n.toFixed(digits) : '–');

/**
 * The lowest and highest of a figure over items: "a–b", or one figure when they print the same;
 * "(k of n)" after it when only k of the items have one (a CPU below the start-up's), '–' when none.
 */
export function span<T>(items: T[], figure: (item: T) => number, digits = 2): string {
  const values = items.map(figure).filter(Number.isFinite);
  if (values.length === 0) return '–';
  const [low, high] = [f(Math.min(...values), digits), f(Math.max(...values), digits)];
  const range = low === high ? low : `${low}–${high}`;
  return values.length === items.length ? range : `${range} (${values.length} of ${items.length})`;
}

/**
 * A table's rows over the rounds: row i holds each round's i-th measurement, checked to be the same
 * one in every round (by `key`), so that a figure never prints under another row's label.
 */
export function byRow<T>(rounds: T[][], key: (row: T) => string): T[][] {
  const keys = (rows: T[]): string => rows.map(key).join('\n');
  if (rounds.some((rows) => keys(rows) !== keys(rounds[0])))
    throw new Error(`benchmark run went wrong: rounds measured different rows: ${rounds.map(keys).join(' / ')}`);
  return rounds[0].map((_, i) => rounds.map((rows) => rows[i]));
}

/** The machine as a round meets it: `node -e 0`'s CPU and the load average over the last minute. */
export interface MachineState {
  nodeCpuMs: number;
  loadAverage: number;
}

export async function machineState(): Promise<MachineState> {
  return { nodeCpuMs: await nodeCpuMs(), loadAverage: loadavg()[0] };
}

/** One sentence giving each round's machine state, in order. */
export function statesLine(states: MachineState[]): string {
  const each = (figure: (s: MachineState) => string): string => states.map(figure).join(', ');
  return `Before each round, \`node -e 0\`'s CPU: ${each((s) => f(s.nodeCpuMs, 0))} ms; the load average over the last minute: ${each((s) => f(s.loadAverage))}.`;
}
