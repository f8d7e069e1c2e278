// The program's entry. Its only static import is the signal handling, so that the handlers are
// in place before the commands and their libraries load.
import { StopSignals } from './signals.js';

const signals = new StopSignals();
const { main } = await import('./cli.js');
process.exitCode = await main(process.argv.slice(2), signals);
