// The program's entry. Its only static import is the signal handling, so that the handlers are
// in place before the commands and their libraries load.
import { StopSignals } from './signals.js';

const signals = new StopSignals();
const { main } = await import('./cli.js');
process.exitCode = await main(process.argv.slice(2), signals);
// Once nothing is left to do (the logs written out), the process ends by process.exit: an exit
// that comes by itself first closes the signal handlers, and a SIGTERM in the few milliseconds
// left would then kill the process (exit 143) instead of being ignored.
process.once('beforeExit', (code) => process.exit(code));
