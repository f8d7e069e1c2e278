import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { marketplacePackage } from './marketplace.js';

/** `npm run nuxeo-package`: writes the Marketplace package to dist/nuxeo-package/ and says where. */
const root = join(import.meta.dirname, '..', '..', '..');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
const built = await marketplacePackage(join(root, 'nuxeo-package'), version);
const out = join(root, 'dist', 'nuxeo-package');
mkdirSync(out, { recursive: true });
writeFileSync(join(out, built.fileName), built.zip);
process.stdout.write(`${join('dist', 'nuxeo-package', built.fileName)} (${built.zip.length} bytes)\n`);
