import { build } from 'esbuild';
import { join } from 'node:path';

/**
 * The ERP tab as Web UI loads an addon's `ui/<package name>.bundle.js`: one ES module with no bare
 * imports, for Polymer and Nuxeo's elements are Web UI's own globals (web-ui-globals.d.ts); the
 * job's readiness rules (src/status/) are bundled in, so that the tab marks what the job waits for.
 */
export async function webUiBundle(packageDir: string): Promise<string> {
  const result = await build({
    entryPoints: [join(packageDir, 'web-ui', 'connect2erp.ts')],
    bundle: true,
    format: 'esm',
    // What the browsers Web UI 3 supports run (nuxeo-web-ui: Polymer 3, ES2018 modules and later).
    target: 'es2020',
    write: false,
    legalComments: 'none',
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}
