// Loaded with `node --import`: the process's peak resident set (Linux VmHWM, in kB) written as JSON
// into $C2E_PEAK_FILE when it exits. VmHWM is this process's own: getrusage's maxrss would carry the
// test's high-water mark at the time it started the process.
import { readFileSync, writeFileSync } from 'node:fs';

const target = process.env.C2E_PEAK_FILE;
if (target !== undefined) {
  process.on('exit', () => {
    const kb = Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
    writeFileSync(target, JSON.stringify({ peakKb: kb }));
  });
}
