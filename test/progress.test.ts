import { spawn } from 'node:child_process';
import { once } from 'node:events';
import t from 'tap';
import { sandboxEnv } from './helpers/env.js';
import { CHILD_EXEC_ARGV, CLI, PROJECT } from './helpers/run-cli.js';
import { cli } from './helpers/run-cli.js';

/** The progress line of `run`: on a terminal only, where a person watches a long run. */
t.setTimeout(120_000);

/** What redraws the line: back to its start, and clear it (ECMA-48 EL). */
const CLEAR = '\r\u001b[2K';
const quote = (word: string): string => `'${word.replace(/'/g, "'\\''")}'`;

/** `connect2erp ARGS` with a terminal for its output, as `script` gives one (util-linux). */
async function onTerminal(args: string[]): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, ...CHILD_EXEC_ARGV, CLI, ...args].map(quote).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    cwd: PROJECT,
    env: { ...process.env, NUXEO_PASSWORD: 'Administrator', SAP_PASSWORD: 'sandbox' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, output };
}

t.test('on a terminal, a run shows each phase done of found, its rate and the time left, on one line', async (t) => {
  const env = await sandboxEnv(t);
  const invoices = await Promise.all(
    Array.from({ length: 24 }, (_, i) => env.upload('ERP/Invoices', `invoice-${i}.pdf`)),
  );
  await env.run();
  invoices.forEach((uid, i) => env.fill(uid, { 'erpCreateALDocument:erpObjectId': `INV-${i}` }));
  env.sandbox.index.catchUp();
  // Each call takes 100 ms, four at a time: the link phase lasts long enough to be redrawn.
  env.erp.faults.latencyMs = 100;
  const { code, output } = await onTerminal(['run', '--task', 'link', '--config', env.location.configDir]);
  t.equal(code, 0, output);
  const lines = output.split(CLEAR).map((line) => line.split('\n')[0]);
  t.ok(
    lines.some((line) => /^task link: \d+ of 24 documents/.test(line)),
    'the documents done of those found',
  );
  t.ok(
    lines.some((line) => /^task link: \d+ of 24 documents · \d+\.\d\/s · about \d+ (ms|seconds?) left$/.test(line)),
    'then the rate and the time left',
  );
  t.ok(
    lines.some((line) => line.startsWith('task link: 24 of 24 documents')),
    'and the last one',
  );
  t.match(
    output,
    /info documents settled runId=\S+ task=link documents=24 DONE=24/,
    'log lines are readable lines between the redraws',
  );
  t.match(output, `${CLEAR}connect2erp run `, 'the summary comes after the line is cleared');

  const piped = await cli(['run', '--task', 'link', '--config', env.location.configDir]);
  t.notOk(piped.stderr.includes(CLEAR) || piped.stderr.includes('documents ·'), 'not on a pipe: no progress line');
  t.match(piped.stderr.split('\n')[0], /^\{"dryRun":false,.*"message":"run started"/, 'the log stays JSON lines');
});
