// Module hooks that run the TypeScript sources in the tests' processes and the CLIs they start
// (ts-loader.mjs registers them; `.taprc` imports it in place of tap's ts-node, which loads
// TypeScript itself on two threads of every process: docs/development.md): each .ts file
// transpiled by swc, with the options ts-node gave swc for this tsconfig (ES2022, ES modules,
// class names kept, source maps inline for stack traces and coverage), and NodeNext's `./x.js`
// found as `./x.ts`.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { transformSync } from '@swc/core';

const OPTIONS = {
  swcrc: false,
  sourceMaps: 'inline',
  module: { type: 'es6', strictMode: true, noInterop: false },
  jsc: {
    parser: { syntax: 'typescript', tsx: false, dynamicImport: true, importAssertions: true },
    target: 'es2022',
    keepClassNames: true,
  },
};

/** A relative `.js` import that names no file resolves to the `.ts` source beside it, as tsc's NodeNext resolution does. */
export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (error) {
    const relative = specifier.startsWith('.') || specifier.startsWith('file:');
    if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !relative || !specifier.endsWith('.js')) throw error;
    return next(`${specifier.slice(0, -'.js'.length)}.ts`, context);
  }
}

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context);
  const filename = fileURLToPath(url);
  // Synchronous: no work left on the thread pool of the hooks' thread when the process exits.
  const { code } = transformSync(readFileSync(filename, 'utf8'), { ...OPTIONS, filename });
  return { format: 'module', source: code, shortCircuit: true };
}
