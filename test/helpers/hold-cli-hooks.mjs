// Module customization hooks (https://nodejs.org/api/module.html#customization-hooks) for hold-cli.mjs.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

let dir;

export function initialize(data) {
  dir = data.dir;
}

export async function load(url, context, nextLoad) {
  if (/\/src\/cli\.ts$/.test(url)) {
    writeFileSync(join(dir, 'held'), '');
    while (!existsSync(join(dir, 'release'))) await sleep(5);
  }
  return nextLoad(url, context);
}
