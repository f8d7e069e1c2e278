// The CLI as bin/connect2erp.js runs it, but from the TypeScript sources, for tests that spawn it.
import '../../src/main.js';
