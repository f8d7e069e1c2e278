import { readFileSync, writeFileSync } from 'node:fs';

// Preloaded into the job's process (`node --import`): its peak resident set size (Linux VmHWM) in
// kilobytes and the CPU time it used, in milliseconds, written as JSON where the benchmark asked
// when the process exits. Not getrusage's ru_maxrss: Linux carries the parent's high-water mark
// into a child started by fork and exec, so a benchmark holding a large blob would be measured too.
const target = process.env.BENCH_USAGE_FILE;
if (target !== undefined) {
  process.on('exit', () => {
    const usage = process.resourceUsage();
    writeFileSync(
      target,
      JSON.stringify({
        peakRssKb: ownPeakKb() ?? usage.maxRSS,
        cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000,
      }),
    );
  });
}

/** VmHWM, or undefined where there is no /proc (not Linux): getrusage's figure is taken then. */
function ownPeakKb(): number | undefined {
  try {
    const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return hwm === null ? undefined : Number(hwm[1]);
  } catch {
    return undefined;
  }
}
