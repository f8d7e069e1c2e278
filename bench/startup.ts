import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchSandboxes, BUNDLE, CLI, spawnJob, USAGE } from './sandboxes.js';

export interface Startup {
  what: string;
  wallMs: number;
  cpuMs: number;
  peakRssMb: number;
  /** The lowest and highest CPU ms of the processes the median was taken of. */
  cpuRange?: [number, number];
}

export const STARTUP_ROUNDS = 7;

/** One process, with the usage hook of bench/usage.ts: its wall time, CPU time and peak RSS. */
async function measure(args: string[]): Promise<Omit<Startup, 'what'>> {
  const usageFile = join(tmpdir(), `connect2erp-bench-usage-${process.pid}.json`);
  const started = performance.now();
  const { exitCode, stderr } = await spawnJob(['--import', USAGE, ...args], usageFile);
  const wallMs = performance.now() - started;
  if (exitCode !== 0) throw new Error(`${args.join(' ')} exited with ${exitCode}: ${stderr}`);
  const usage = JSON.parse(readFileSync(usageFile, 'utf8')) as { peakRssKb: number; cpuMs: number };
  return { wallMs, cpuMs: usage.cpuMs, peakRssMb: usage.peakRssKb / 1024 };
}

/** `node -e 0`'s CPU time as the machine gives it now: the median of three processes. */
export async function nodeCpuMs(): Promise<number> {
  return (await medianOf('node -e 0', 3, () => measure(['-e', '0']))).cpuMs;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function medianOf(what: string, rounds: number, once: () => Promise<Omit<Startup, 'what'>>): Promise<Startup> {
  const runs = [];
  for (let i = 0; i < rounds; i++) runs.push(await once());
  return {
    what,
    wallMs: median(runs.map((r) => r.wallMs)),
    cpuMs: median(runs.map((r) => r.cpuMs)),
    cpuRange: [Math.min(...runs.map((r) => r.cpuMs)), Math.max(...runs.map((r) => r.cpuMs))],
    peakRssMb: median(runs.map((r) => r.peakRssMb)),
  };
}

/**
 * What a per-minute CronJob pays before any work: `node -e 0`, `connect2erp --version` and a run
 * with nothing to do against the sandboxes (no latency), as the image runs them (the bundle), and
 * the run once more as a clone runs it (its modules, bin/connect2erp.js); each the median of
 * `rounds` processes.
 */
export async function startupBench(rounds = STARTUP_ROUNDS): Promise<Startup[]> {
  const sandboxes = await BenchSandboxes.start({ repositoryMs: 0, erpMs: 0 });
  const idle = (entry: string) => async () => {
    const run = await sandboxes.run({ intakeOnly: true, entry });
    return { wallMs: run.wallMs, cpuMs: run.cpuMs, peakRssMb: run.peakRssKb / 1024 };
  };
  try {
    await sandboxes.warmUp();
    return [
      await medianOf('node -e 0', rounds, () => measure(['-e', '0'])),
      await medianOf('connect2erp --version (the image: the bundle)', rounds, () => measure([BUNDLE, '--version'])),
      await medianOf('connect2erp run, nothing to do (the image: the bundle)', rounds, idle(BUNDLE)),
      await medianOf('connect2erp run, nothing to do (a clone: its modules)', rounds, idle(CLI)),
    ];
  } finally {
    await sandboxes.stop();
  }
}
