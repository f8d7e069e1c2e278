// The CLI as bin/connect2erp.js runs it, but from the TypeScript sources, for tests that spawn it.
import { main } from '../../src/cli.js';

process.exitCode = await main(process.argv.slice(2));
