import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAPPING, sandboxEnv, type Env } from './helpers/env.js';
import { startCli } from './helpers/run-cli.js';
import { uploadFile } from '../sandbox/demo.js';

/**
 * Memory bounded by design, not by input: a run given the inputs that once made it grow with them
 * (issue 34) peaks where an ordinary run does. Peak RSS from the process's own VmHWM; the absolute
 * figures of the image's bundle are in BENCHMARKS.md ("Memory under bad input").
 */

// Processes of their own over large inputs: several times tap's default on a busy machine.
t.setTimeout(300_000);

const MB = 1024 * 1024;
/**
 * What a run may grow by over an ordinary run of the same program, whatever it is given: room for
 * the garbage collector's own pace on a busy machine, well below what holding either input would
 * take (the file alone 200 MB; the page read whole, as text and parsed, about 300 MB).
 */
const GROWTH_MAX_MB = 160;
const HOOK = join(import.meta.dirname, 'helpers', 'peak-memory.mjs');

async function peakOf(env: Env, args: string[]): Promise<{ code: number | null; peakMb: number; stdout: string }> {
  const file = join(env.dir, `peak-${Date.now()}.json`);
  const run = startCli(
    [...args, '--config', env.location.configDir],
    { C2E_PEAK_FILE: file },
    {
      execArgv: [`--import=${HOOK}`],
    },
  );
  const { code, stdout } = await run.exited;
  return { code, stdout, peakMb: (JSON.parse(readFileSync(file, 'utf8')) as { peakKb: number }).peakKb / 1024 };
}

/** The shipped mapping, the invoice number of each linked document taken from its description. */
function mapping(): string {
  const parsed = JSON.parse(MAPPING) as { mapping: Array<{ path: string; properties: Record<string, unknown> }> };
  parsed.mapping[1].properties['erpCreateALDocument:erpObjectId'] = '$dc:description';
  return JSON.stringify(parsed);
}

async function invoices(env: Env, n: number, description: string, content?: Buffer<ArrayBuffer>): Promise<void> {
  for (let i = 0; i < n; i++) {
    const uid = await uploadFile(env.baseUrl, '/default-domain/workspaces/ERP/Invoices', `invoice-${i}.pdf`, content);
    env.fill(uid, { 'dc:description': description });
  }
}

t.test(
  'a 200 MB file uploaded over Rest and a 100 MB search page: the run peaks where an ordinary one does',
  async (t) => {
    const ordinary = await sandboxEnv(t, { mapping: mapping() });
    await invoices(ordinary, 5, '4711');
    const yardstick = await peakOf(ordinary, ['run']);
    t.equal(yardstick.code, 0);

    const upload = await sandboxEnv(t, { mapping: mapping() });
    const link = join(upload.location.jobsDir, 'link.yaml');
    writeFileSync(link, readFileSync(link, 'utf8').replace('function: RFC', 'function: Rest'));
    await invoices(upload, 1, '4711', Buffer.alloc(200 * MB, 7));
    const uploaded = await peakOf(upload, ['run', '--task', 'link']);
    t.equal(uploaded.code, 0);
    t.equal(upload.erp.tables.attachments[0]?.FileSize, String(200 * MB), 'SAP has the whole file');
    t.ok(
      uploaded.peakMb - yardstick.peakMb <= GROWTH_MAX_MB,
      `200 MB uploaded: ${uploaded.peakMb.toFixed(0)} MB at the peak, an ordinary run ${yardstick.peakMb.toFixed(0)} MB`,
    );

    const large = await sandboxEnv(t, { mapping: mapping() });
    await invoices(large, 100, 'd'.repeat(MB));
    const paged = await peakOf(large, ['run']);
    t.equal(paged.code, 1, 'each document an intake error of its own: its value is too long for OBJECT_ID');
    t.match(paged.stdout, /intake: 0 labelled .*100 errors/);
    t.ok(
      paged.peakMb - yardstick.peakMb <= GROWTH_MAX_MB,
      `100 documents of 1 MB each, a page of 100 asked for: ${paged.peakMb.toFixed(0)} MB at the peak, an ordinary run ${yardstick.peakMb.toFixed(0)} MB`,
    );
  },
);
