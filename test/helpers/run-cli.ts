import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';

/** The CLI entry from the TypeScript sources, for tests that run it as its own process. */
export const CLI = join(import.meta.dirname, 'cli.ts');
export const PROJECT = join(import.meta.dirname, '..', '..');

export interface Result { code: number | null; stdout: string; stderr: string }

export interface Running {
  child: ChildProcess;
  /** What it has written so far. */
  output: () => Omit<Result, 'code'>;
  exited: Promise<Result>;
}

/** Start `connect2erp ARGS` as its own process, with the sandbox passwords in its environment. */
export function startCli(args: string[], env: Record<string, string> = {}): Running {
  const child = spawn(process.execPath, [...process.execArgv, CLI, ...args], {
    env: { ...process.env, NUXEO_PASSWORD: 'Administrator', SAP_PASSWORD: 'sandbox', ...env }, cwd: PROJECT,
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => (stdout += d));
  child.stderr?.on('data', (d) => (stderr += d));
  const exited = once(child, 'close').then(([code]) => ({ code: code as number | null, stdout, stderr }));
  return { child, output: () => ({ stdout, stderr }), exited };
}

/** Run `connect2erp ARGS` to its end. */
export async function cli(args: string[], env: Record<string, string> = {}): Promise<Result> {
  return startCli(args, env).exited;
}
