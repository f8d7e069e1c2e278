import { existsSync } from 'node:fs';
import { extname } from 'node:path';
import { ConfigError } from '../../common/errors.js';
import { EXIT } from '../exit-codes.js';
import type { Command } from './command.js';

type Print = (line: string) => void;

/** What the optional part beside the product (`sandbox/part.ts`) offers these two commands. */
export interface SandboxPart {
  /** The repository and ERP sandboxes in the foreground, until `stopped` settles. */
  serve(
    options: { port: number; erpPort: number; dataDir?: string; faultsFile?: string },
    print: Print,
    stopped: Promise<unknown>,
  ): Promise<void>;
  /** The whole feature on the sandboxes; resolves to the exit code. */
  demo(options: { dataDir?: string }, print: Print): Promise<number>;
}

/**
 * The fakes live beside the product, not in it: compiled to `dist/sandbox/` from a clone, run
 * from their sources under the tests, and left out of the production image. They are found by
 * path, so the product's build never compiles them in; by the extension of this file, so that
 * the bundle run in a clone (where `../../sandbox/` holds only the sources) says they are missing
 * instead of failing to load TypeScript.
 */
const PART = [new URL(`../../sandbox/part${extname(import.meta.url)}`, import.meta.url)];

/** The part from the first of `places` that holds it; a configuration error (exit 2) when none does. */
export async function loadPart(command: string, places = PART): Promise<SandboxPart> {
  const found = places.find((url) => existsSync(url));
  if (found !== undefined) return ((await import(found.href)) as { part: SandboxPart }).part;
  const message = `the sandboxes are not part of this installation (the production image leaves them out); run them from a clone of the repository: npm ci && npx connect2erp ${command}`;
  throw new ConfigError([{ file: `connect2erp ${command}`, path: '', message }]);
}

const print: Print = (line) => void process.stdout.write(`${line}\n`);

/** `connect2erp sandbox` and `connect2erp demo`, for a clone of the repository. */
export const OPTIONAL_PART_COMMANDS: Record<string, Command> = {
  sandbox: {
    options: {
      'repo-port': { type: 'string', value: 'N', default: '8080', text: 'repository sandbox port (default 8080)' },
      'erp-port': { type: 'string', value: 'N', default: '8081', text: 'ERP sandbox port (default 8081)' },
      data: { type: 'string', value: 'DIR', text: "keep the repository's state in DIR (default: in memory)" },
      faults: {
        type: 'string',
        value: 'FILE',
        text: 'latency, search lag and faults to rehearse outages with (YAML, see docs/sandbox.md)',
      },
    },
    windsDown: true,
    exits: {
      0: 'stopped by SIGTERM or Ctrl-C',
      1: 'could not start (a port taken, no sandboxes in this copy)',
      2: 'usage error',
    },
    async run({ strings, signals }) {
      const part = await loadPart('sandbox');
      const options = {
        port: Number(strings['repo-port']),
        erpPort: Number(strings['erp-port']),
        dataDir: strings.data,
        faultsFile: strings.faults,
      };
      await part.serve(options, print, new Promise((resolve) => signals.listen(resolve)));
      return EXIT.ok;
    },
  },
  demo: {
    // The last run's code: the demo ends as a scheduled run would.
    exits: {
      0: 'the demo ran through',
      1: 'its last run had documents that failed, or a step failed',
      2: 'usage error',
      3: 'interrupted',
    },
    options: {
      data: { type: 'string', value: 'DIR', text: "keep the sandbox's state in DIR (default: a new temporary folder)" },
    },
    async run({ strings }) {
      const part = await loadPart('demo');
      return part.demo({ dataDir: strings.data }, print);
    },
  },
};
