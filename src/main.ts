// The program's entry. Its only static import is the signal handling, so that the handlers are
// in place before the commands and their libraries load.
import { setFlagsFromString } from 'node:v8';
import { StopSignals } from './signals.js';

// undici parses HTTP with llhttp, compiled to WebAssembly. On Node 20 and 22, V8 recompiles its
// large parsing function with its optimizing compiler after the first few answers, on a helper
// thread: a large share of a run with nothing to do, and nothing saved on the answers after it
// (BENCHMARKS.md, issue 39's seventh part). The baseline code is kept. The flag is V8's
// (node --v8-options), present in Node 20, 22 and 26, and it changes only WebAssembly.
setFlagsFromString('--liftoff-only');

const signals = new StopSignals();
const { main } = await import('./cli.js');
process.exitCode = await main(process.argv.slice(2), signals);
// Once nothing is left to do (the logs written out), the process ends by process.exit: an exit
// that comes by itself first closes the signal handlers, and a SIGTERM in the few milliseconds
// left would then kill the process (exit 143) instead of being ignored.
process.once('beforeExit', (code) => process.exit(code));
