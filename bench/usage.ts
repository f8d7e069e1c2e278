import { writeFileSync } from 'node:fs';

// Preloaded into the job's process (`node --import`): its peak resident set size (getrusage's
// ru_maxrss, Linux VmHWM) in kilobytes and the CPU time it used, in milliseconds, written as
// JSON where the benchmark asked when the process exits.
const target = process.env.BENCH_USAGE_FILE;
if (target !== undefined) {
  process.on('exit', () => {
    const usage = process.resourceUsage();
    writeFileSync(
      target,
      JSON.stringify({ peakRssKb: usage.maxRSS, cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000 }),
    );
  });
}
