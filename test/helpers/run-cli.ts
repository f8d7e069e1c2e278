import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The CLI entry from the TypeScript sources, for tests that run it as its own process. */
export const CLI = join(import.meta.dirname, 'cli.ts');
export const PROJECT = join(import.meta.dirname, '..', '..');

interface Result {
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

interface StartOptions {
  /** Node options before the entry, such as `--import` of a test hook. */
  execArgv?: string[];
  /** A file descriptor for its standard output instead of a pipe read by this process. */
  stdout?: number;
  /**
   * No file it writes grows past this many KiB (`ulimit -f`): a disk that fills, as the process
   * sees it (EFBIG; file-size-limit.mjs). Such a process runs without tap's coverage, whose files
   * would not fit; in-process tests cover the code it runs.
   */
  fileSizeLimitKiB?: number;
  /**
   * Where it runs (the project's folder by default): relative paths and ./config are read from
   * there. A folder inside the project (`t.testdir()`): a process started outside it loses the
   * coverage tap gathered from every other test's processes.
   */
  cwd?: string;
}

const TAP_HOOKS = /@tapjs[/\\](processinfo|mock)[/\\]/;

/**
 * Node's options for a CLI the tests spawn: the test's own (source maps, tap's coverage) less tap's
 * mock hook, which the CLI never uses and which would cost every process about a second of CPU
 * (docs/development.md). swc's transpiling (ts-loader.mjs) by its full path: `.taprc` names it
 * from the project's folder, and a CLI may run in another.
 */
export const CHILD_EXEC_ARGV = [
  `--import=${pathToFileURL(join(import.meta.dirname, 'ts-loader.mjs')).href}`,
  ...process.execArgv.filter((arg) => !/@tapjs[/\\]mock[/\\]|ts-loader\.mjs$/.test(arg)),
];

/** How many of the JSON log lines in `stderr` have this message. */
export const logLines = (stderr: string, message: string): number =>
  stderr.split('\n').filter((line) => line.includes(`"message":"${message}"`)).length;

/** Start `connect2erp ARGS` as its own process, with the sandbox passwords in its environment. */
export function startCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  options: StartOptions = {},
): Running {
  const limited = options.fileSizeLimitKiB !== undefined;
  const execArgv = limited ? CHILD_EXEC_ARGV.filter((arg) => !TAP_HOOKS.test(arg)) : CHILD_EXEC_ARGV;
  const hooks = [
    ...(options.execArgv ?? []),
    ...(limited ? [`--import=${join(import.meta.dirname, 'file-size-limit.mjs')}`] : []),
  ];
  const node = [process.execPath, ...execArgv, ...hooks, CLI, ...args];
  // POSIX counts `ulimit -f` in blocks of 512 bytes (Debian's sh, dash, does).
  const blocks = (options.fileSizeLimitKiB ?? 0) * 2;
  const command = limited ? ['sh', '-c', `ulimit -f ${blocks} && exec "$@"`, 'sh', ...node] : node;
  const inherited = { ...process.env };
  if (limited) {
    delete inherited.NODE_V8_COVERAGE;
    inherited.NODE_OPTIONS = (inherited.NODE_OPTIONS ?? '')
      .split(' ')
      .filter((arg) => !TAP_HOOKS.test(arg))
      .join(' ');
  }
  const child = spawn(command[0], command.slice(1), {
    env: {
      ...inherited,
      NUXEO_PASSWORD: 'Administrator',
      CONTENT_SERVER_PASSWORD: 'Administrator',
      SAP_PASSWORD: 'sandbox',
      ...env,
    },
    cwd: options.cwd ?? PROJECT,
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
/** `env`: a variable given as undefined is left out of the process's environment. */
export async function cli(
  args: string[],
  env: Record<string, string | undefined> = {},
  options: StartOptions = {},
): Promise<Result> {
  return startCli(args, env, options).exited;
}
