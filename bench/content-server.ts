import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { Agent, request } from 'undici';
import { setUpRepository, writeDemoConfig } from '../dist/sandbox/demo.js';
import { ArchiveLinkCaller } from '../dist/sandbox/erp/archivelink-client.js';
import { RepositorySandbox } from '../dist/sandbox/repository/server.js';
import { NO_BLOBS, type StoredDoc } from '../dist/sandbox/repository/store.js';

const PROJECT = join(import.meta.dirname, '..');
const CLI = join(PROJECT, 'bin', 'connect2erp.js');
const INVOICES = '/default-domain/workspaces/ERP/Invoices';
const ADMIN = `Basic ${Buffer.from('Administrator:Administrator').toString('base64')}`;

export interface ContentServerFigures {
  componentKb: number;
  /** Per latency and concurrency: docs/s downloaded straight from the repository, and through serve. */
  throughput: Array<{
    latencyMs: number;
    concurrency: number;
    direct: number;
    /** Through the benchmark's forwarder (bench/forwarder.ts): the same two requests, and nothing else. */
    forwarded: number;
    served: number;
    requestsPerGet: number;
    /** CPU ms per get: serve's, the forwarder's, and this process's (clients and repository sandbox) straight and through serve. */
    cpu: { serve: number; forwarder: number; benchDirect: number; benchServed: number };
  }>;
  big: { bytes: number; seconds: number; rssBeforeMb: number; rssAfterMb: number; rssSmallOnlyMb: number };
}

/** VmHWM (peak resident set) and VmRSS of a process, in MB (Linux). */
function memoryOf(pid: number): { peakMb: number; rssMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string): number => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1]) / 1024;
  return { peakMb: kb('VmHWM'), rssMb: kb('VmRSS') };
}

/** A process's CPU time so far, user and system, in ms (Linux: /proc/<pid>/stat, in 1/100 s ticks). */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  // After the command's closing parenthesis, utime and stime are the 12th and 13th fields.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const ownCpuMs = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** Downloads `urls` with `concurrency` at once, reading every byte; answers docs per second. */
async function download(urls: string[], concurrency: number, headers: Record<string, string> = {}): Promise<number> {
  const dispatcher = new Agent({ connections: concurrency });
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < urls.length) {
        const url = urls[next++];
        const response = await request(url, { dispatcher, headers });
        if (response.statusCode !== 200) throw new Error(`${url}: HTTP ${response.statusCode}`);
        for await (const chunk of response.body) void chunk;
      }
    }),
  );
  await dispatcher.close();
  return urls.length / ((performance.now() - started) / 1000);
}

/** A file of `bytes` random-looking bytes on disk, and its MD5 (the sandbox's blob key). */
async function bigFile(path: string, bytes: number): Promise<string> {
  const block = randomBytes(1 << 20);
  const hash = createHash('md5');
  const out = createWriteStream(path);
  for (let written = 0; written < bytes; written += block.length) {
    hash.update(block);
    if (!out.write(block)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return hash.digest('hex');
}

/** A process that prints `"port":N` on stderr once it listens; what it logs after that is read and dropped. */
async function startListening(args: string[]): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, NUXEO_PASSWORD: 'Administrator', SAP_PASSWORD: 'sandbox' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr.length > 100_000) return;
      stderr += chunk.toString();
      const found = /"port":(\d+)/.exec(stderr);
      if (found) resolve(Number(found[1]));
    });
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${stderr}`)));
  });
  return { child, port };
}

function startServe(configDir: string): Promise<{ child: ChildProcess; port: number }> {
  const file = join(configDir, 'contentServer.yaml');
  writeFileSync(file, readFileSync(file, 'utf8').replace('port: 8090', 'port: 0'));
  return startListening([CLI, 'serve', '--config', configDir]);
}

async function stop(child: ChildProcess): Promise<void> {
  child.kill('SIGINT');
  child.kill('SIGINT');
  await once(child, 'exit');
}

/**
 * `connect2erp serve` in its own process against the repository sandbox in this one, at the
 * repository latency the job is measured at: SAP's `get` of a job's document through the server
 * against the same download straight from the repository and through a forwarder that does nothing
 * else (bench/forwarder.ts), and the server's memory while it streams a 1 GB component.
 */
export async function contentServerBench(latencies: number[], quick: boolean): Promise<ContentServerFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'connect2erp-bench-cs-'));
  const repository = new RepositorySandbox({ dataDir: join(dir, 'repository'), searchLagMs: 0 });
  const baseUrl = await repository.start();
  try {
    await setUpRepository(
      baseUrl,
      readFileSync(join(PROJECT, 'config', 'connector_configuration_connect_to_erp.json'), 'utf8'),
    );
    const configDir = writeDemoConfig(dir, baseUrl, 'http://127.0.0.1:9');
    const { store } = repository;
    const actor = repository.actor();
    const parent = store.getByPath(INVOICES) as StoredDoc;
    const componentKb = 256;
    const content = store.storeBlob(randomBytes(componentKb * 1024), 'invoice.pdf', 'application/pdf');
    /** A document as the job leaves it: labelled for Z1 of S4H, its docId its own id. */
    const labelled = (name: string, blob: typeof content): string => {
      let doc = store.create(actor, parent, { type: 'File', name, properties: { 'file:content': {} } }, () => blob);
      doc = store.addFacet(actor, doc, 'fct_erp_http_content');
      store.update(
        actor,
        doc,
        {
          'erpHttpContent:docId': doc.uid,
          'erpHttpContent:archiveId': 'Z1',
          'erpHttpContent:source': 'S4H',
          'erpHttpContent:compId': 'data',
        },
        NO_BLOBS,
      );
      return doc.uid;
    };
    const uids = Array.from({ length: 64 }, (_, i) => labelled(`invoice-${i}.pdf`, content));
    const bigBytes = (quick ? 64 : 1024) * (1 << 20);
    // Written where the sandbox keeps its blobs, under the name it gives them: never held in memory.
    const digest = await bigFile(join(dir, 'repository', 'blobs', 'big'), bigBytes);
    renameSync(join(dir, 'repository', 'blobs', 'big'), join(dir, 'repository', 'blobs', digest));
    const bigUid = labelled('archive.dat', {
      name: 'archive.dat',
      'mime-type': 'application/octet-stream',
      encoding: null,
      digestAlgorithm: 'MD5',
      digest,
      length: String(bigBytes),
    });

    const { child, port } = await startServe(configDir);
    const forwarder = await startListening([join(import.meta.dirname, 'forwarder.js'), `${baseUrl}/api/v1`]);
    try {
      const caller = new ArchiveLinkCaller(`http://127.0.0.1:${port}/archivelink/S4H`, 'Z1');
      await caller.putCert();
      for (const doc of store.all())
        if (doc.facets.includes('fct_erp_certificate'))
          store.update(actor, doc, { 'erpCertificate:status': 'approved' }, NO_BLOBS);
      let repositoryRequests = 0;
      repository.faults.observe = () => void repositoryRequests++;
      const gets = quick ? 128 : 512;
      const docId = (i: number): string => uids[i % uids.length];
      // Signed before the clock starts, each its own signature, as SAP signs a URL for every access.
      const served = Array.from({ length: gets }, (_, i) => caller.url('get', [['docId', docId(i)]]));
      const direct = Array.from({ length: gets }, (_, i) => `${baseUrl}/api/v1/id/${docId(i)}/@blob/file:content`);
      const forwarded = Array.from({ length: gets }, (_, i) => `http://127.0.0.1:${forwarder.port}/?docId=${docId(i)}`);
      await download(served.slice(0, 32), 8);
      await download(forwarded.slice(0, 32), 8);
      const throughput: ContentServerFigures['throughput'] = [];
      for (const [latencyMs, concurrency] of latencies.flatMap((l) => [1, 8, 32].map((c) => [l, c]))) {
        repository.faults.latencyMs = latencyMs;
        const count = concurrency === 1 ? gets / 4 : gets;
        const rates = { direct: 0, forwarded: 0, served: 0 };
        const cpu = { serve: 0, forwarder: 0, benchDirect: 0, benchServed: 0 };
        repositoryRequests = 0;
        let requestsPerGet = 0;
        // Alternated, twice each: the machine's drift falls on all alike.
        for (let round = 0; round < 2; round++) {
          let own = ownCpuMs();
          rates.direct += (await download(direct.slice(0, count), concurrency, { authorization: ADMIN })) / 2;
          cpu.benchDirect += (ownCpuMs() - own) / count / 2;
          const forwarderBefore = cpuMsOf(forwarder.child.pid as number);
          rates.forwarded += (await download(forwarded.slice(0, count), concurrency)) / 2;
          cpu.forwarder += (cpuMsOf(forwarder.child.pid as number) - forwarderBefore) / count / 2;
          const before = repositoryRequests;
          const serveBefore = cpuMsOf(child.pid as number);
          own = ownCpuMs();
          rates.served += (await download(served.slice(0, count), concurrency)) / 2;
          cpu.benchServed += (ownCpuMs() - own) / count / 2;
          cpu.serve += (cpuMsOf(child.pid as number) - serveBefore) / count / 2;
          requestsPerGet = (repositoryRequests - before) / count;
        }
        throughput.push({ latencyMs, concurrency, ...rates, requestsPerGet, cpu });
      }
      repository.faults.latencyMs = 0;
      const rssSmallOnlyMb = memoryOf(child.pid as number).peakMb;
      const rssBeforeMb = memoryOf(child.pid as number).rssMb;
      const started = performance.now();
      await download([caller.url('get', [['docId', bigUid]])], 1);
      const seconds = (performance.now() - started) / 1000;
      const rssAfterMb = memoryOf(child.pid as number).peakMb;
      return { componentKb, throughput, big: { bytes: bigBytes, seconds, rssBeforeMb, rssAfterMb, rssSmallOnlyMb } };
    } finally {
      await Promise.all([stop(child), stop(forwarder.child)]);
    }
  } finally {
    await repository.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
