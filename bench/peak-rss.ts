import { writeFileSync } from 'node:fs';

// Preloaded into the job's process (`node --import`): its peak resident set size, in kilobytes,
// written where the benchmark asked when the process exits (getrusage's ru_maxrss, Linux VmHWM).
const target = process.env.BENCH_PEAK_RSS_FILE;
if (target !== undefined) process.on('exit', () => writeFileSync(target, String(process.resourceUsage().maxRSS)));
