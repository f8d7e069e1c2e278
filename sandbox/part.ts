import type { SandboxPart } from '../src/commands/optional-part.js';
import { runDemo } from './demo.js';
import { loadSandboxSettings } from './settings.js';
import { startSandbox } from './start.js';

/** What `connect2erp sandbox` and `connect2erp demo` load when this part is present. */
export const part: SandboxPart = {
  async serve({ faultsFile, ...options }, print, stopped) {
    await startSandbox({ ...options, settings: loadSandboxSettings(faultsFile) }, print, stopped);
  },
  demo: runDemo,
};
