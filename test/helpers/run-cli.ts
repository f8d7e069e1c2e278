import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';

/** The CLI entry from the TypeScript sources, for tests that run it as its own process. */
export const CLI = join(import.meta.dirname, 'cli.ts');
export const PROJECT = join(import.meta.dirname, '..', '..');

export interface Result { code: number | null; stdout: string; stderr: string }

/** Run `connect2erp ARGS` to its end, with the sandbox passwords in its environment. */
export async function cli(args: string[], env: Record<string, string> = {}): Promise<Result> {
  const child = spawn(process.execPath, [...process.execArgv, CLI, ...args], {
    env: { ...process.env, NUXEO_PASSWORD: 'Administrator', SAP_PASSWORD: 'sandbox', ...env }, cwd: PROJECT,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const [code] = await once(child, 'close');
  return { code, stdout, stderr };
}
