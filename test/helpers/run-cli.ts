import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';

/** The CLI entry from the TypeScript sources, for tests that run it as its own process. */
export const CLI = join(import.meta.dirname, 'cli.ts');
export const PROJECT = join(import.meta.dirname, '..', '..');

export interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface Running {
  child: ChildProcess;
  /** What it has written so far. */
  output: () => Omit<Result, 'code'>;
  /** Resolves once its standard error matches `pattern` (its log lines are there), rejects if it exits first. */
  logged: (pattern: RegExp) => Promise<void>;
  exited: Promise<Result>;
}

export interface StartOptions {
  /** Node options before the entry, such as `--import` of a test hook. */
  execArgv?: string[];
  /** A file descriptor for its standard output instead of a pipe read by this process. */
  stdout?: number;
}

/** Start `connect2erp ARGS` as its own process, with the sandbox passwords in its environment. */
export function startCli(args: string[], env: Record<string, string> = {}, options: StartOptions = {}): Running {
  const child = spawn(process.execPath, [...process.execArgv, ...(options.execArgv ?? []), CLI, ...args], {
    env: { ...process.env, NUXEO_PASSWORD: 'Administrator', SAP_PASSWORD: 'sandbox', ...env },
    cwd: PROJECT,
    stdio: ['pipe', options.stdout ?? 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => (stdout += d));
  child.stderr?.on('data', (d) => (stderr += d));
  const exited = once(child, 'close').then(([code]) => ({ code: code as number | null, stdout, stderr }));
  const logged = (pattern: RegExp): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (!pattern.test(stderr)) return;
        child.stderr?.off('data', check);
        resolve();
      };
      child.stderr?.on('data', check);
      check();
      void exited.then(({ code }) =>
        reject(
          new Error(
            `exited (${String(code)}) before logging ${String(pattern)}; its last words: ${stderr.slice(-2000)}`,
          ),
        ),
      );
    });
  return { child, output: () => ({ stdout, stderr }), logged, exited };
}

/** Run `connect2erp ARGS` to its end. */
export async function cli(args: string[], env: Record<string, string> = {}): Promise<Result> {
  return startCli(args, env).exited;
}
