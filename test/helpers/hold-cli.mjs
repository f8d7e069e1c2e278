// Loaded with `node --import`: holds the loading of the CLI's command module until the test says
// so, to stand for a start-up that is still under way when a signal comes. The hook writes `held`
// into $C2E_HOLD_DIR when the load begins and waits for a `release` file there.
import { register } from 'node:module';

register('./hold-cli-hooks.mjs', import.meta.url, { data: { dir: process.env.C2E_HOLD_DIR } });
