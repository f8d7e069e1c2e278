// The program as the image runs it: `node deploy/bundle.mjs OUTDIR` bundles src/main.ts and what it
// imports into OUTDIR (main.js, and a chunk per command and per optional library, loaded when used).
// A few files to compile instead of some 150 modules, and undici's dispatchers without the rest
// of its entry: what a run with nothing to do costs is in BENCHMARKS.md, "Start-up". OUTDIR sits
// two folders below the project's root (package.json, nuxeo-package/), as dist/bundle does in the
// image.
import { build } from 'esbuild';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');

/** undici's dispatchers alone in place of its whole entry (deploy/undici-entry.cjs says why). */
const undiciDispatchers = {
  name: 'undici-dispatchers',
  setup(build) {
    build.onResolve({ filter: /^undici$/ }, () => ({ path: join(root, 'deploy', 'undici-entry.cjs') }));
  },
};

/**
 * Bundles the program into `outdir`, rejecting with esbuild's errors. The `.js` files an earlier
 * build left there go first: chunks are named by their content, so they would pile up beside the
 * new ones. Nothing else in `outdir` is touched.
 */
export async function bundle(outdir) {
  const earlier = existsSync(outdir) ? readdirSync(outdir, { withFileTypes: true }) : [];
  for (const entry of earlier.filter((e) => e.isFile() && e.name.endsWith('.js'))) rmSync(join(outdir, entry.name));
  await build({
    entryPoints: [join(root, 'src', 'main.ts')],
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // ESM builds of the libraries that ship both: jsonc-parser's CommonJS one requires files by computed names.
    mainFields: ['module', 'main'],
    // Libraries written as CommonJS require Node's own modules: they get a require in the bundle.
    banner: {
      js: "import { createRequire as bundleRequire } from 'node:module'; const require = bundleRequire(import.meta.url);",
    },
    plugins: [undiciDispatchers],
    logLevel: 'warning',
  });
}

if (process.argv[1] === import.meta.filename) await bundle(process.argv[2] ?? join(root, 'dist', 'bundle'));
