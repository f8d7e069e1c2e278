import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../common/project.js';

/** The program's version, from its package.json. */
export const programVersion = (): string =>
  (JSON.parse(readFileSync(join(projectRoot(import.meta.dirname), 'package.json'), 'utf8')) as { version: string })
    .version;
