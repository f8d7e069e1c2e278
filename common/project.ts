import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The project's folder (the one holding package.json), found upwards from a module's folder: the
 * sources (`src/…`) and the compiled code (`dist/src/…`) sit at different depths below it.
 */
export function projectRoot(from: string): string {
  let dir = from;
  while (!existsSync(join(dir, 'package.json'))) {
    if (dirname(dir) === dir) throw new Error(`no package.json in ${from} or above it`);
    dir = dirname(dir);
  }
  return dir;
}
