import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import { setUpRepository, writeDemoConfig } from '../dist/sandbox/demo.js';
import { ArchiveLinkCaller } from '../dist/sandbox/erp/archivelink-client.js';
import { RepositorySandbox } from '../dist/sandbox/repository/server.js';
import { NO_BLOBS, type StoredDoc } from '../dist/sandbox/repository/store.js';
import { ROUNDS } from './ranges.js';
import { RUNTIME } from './runtime.js';
import { cpuMsOf } from './proc-cpu.js';

const PROJECT = join(import.meta.dirname, '..');
const CLI = join(PROJECT, 'bin', 'connect2erp.js');
const INVOICES = '/default-domain/workspaces/ERP/Invoices';
const ADMIN = `Basic ${Buffer.from('Administrator:Administrator').toString('base64')}`;

export interface ContentServerFigures {
  componentKb: number;
  /** Per latency and concurrency, ROUNDS rounds: docs/s downloaded straight from the repository, and through serve. */
  throughput: Array<{ latencyMs: number; concurrency: number; rounds: GetRound[] }>;
  big: { bytes: number; seconds: number; rssBeforeMb: number; rssAfterMb: number; rssSmallOnlyMb: number };
  /** Unsigned gets of the large document, refused: what the repository sent serve for them. */
  refused: { requests: number; repositoryRequests: number; repositoryBytes: number; blobBytes: number };
  /** Serve's peak RSS (VmHWM so far) after each upload of `bytes`, and its limit for a part. */
  uploads: {
    bytes: number;
    maxPartBytes: number;
    steps: Array<{ what: string; status: number; seconds: number; peakMb: number }>;
    startPeakMb: number;
  };
}

/** One round of gets at a latency and concurrency: each way's docs/s and CPU per get. */
interface GetRound {
  direct: number;
  /** Through the benchmark's forwarder (bench/forwarder.ts): the same two requests, and nothing else. */
  forwarded: number;
  served: number;
  requestsPerGet: number;
  /** CPU ms per get: serve's, the forwarder's, and this process's (clients and repository sandbox) straight and through serve. */
  cpu: { serve: number; forwarder: number; benchDirect: number; benchServed: number };
}

/** VmHWM (peak resident set) and VmRSS of a process, in MB (Linux). */
function memoryOf(pid: number): { peakMb: number; rssMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string): number => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1]) / 1024;
  return { peakMb: kb('VmHWM'), rssMb: kb('VmRSS') };
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
  const child = spawn(RUNTIME, args, {
    env: {
      ...process.env,
      NUXEO_PASSWORD: 'Administrator',
      CONTENT_SERVER_PASSWORD: 'Administrator',
      SAP_PASSWORD: 'sandbox',
    },
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

function startServe(configDir: string, maxPartBytes?: number): Promise<{ child: ChildProcess; port: number }> {
  const file = join(configDir, 'contentServer.yaml');
  const yaml = readFileSync(file, 'utf8')
    .replace('port: 8090', 'port: 0')
    .replace(/^maxPartBytes: .*\n/m, '');
  writeFileSync(file, maxPartBytes === undefined ? yaml : `maxPartBytes: ${maxPartBytes}\n${yaml}`);
  return startListening([CLI, 'serve', '--config', configDir]);
}

/** A multipart body of parts of `bytes` each, made as it is sent (the benchmark holds none of it). */
function* multipartBody(parts: Array<{ docId: string; bytes: number }>): Generator<Buffer> {
  const block = randomBytes(1 << 20);
  for (const part of parts) {
    yield Buffer.from(`--b\r\nX-docId: ${part.docId}\r\nX-compId: data\r\nContent-Type: application/pdf\r\n\r\n`);
    for (let sent = 0; sent < part.bytes; sent += block.length)
      yield block.subarray(0, Math.min(block.length, part.bytes - sent));
    yield Buffer.from('\r\n');
  }
  yield Buffer.from('--b--\r\n');
}

/** POSTs a streamed multipart body; the answer's status once it comes (a refusal comes before the body ends). */
function postMultipart(url: string, body: Iterable<Buffer>): Promise<number> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      url,
      { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=b' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode as number));
      },
    );
    // Once refused, the server stops reading: what is left unsent is no error here.
    sent.on('error', (error) => (sent.headersSent ? undefined : reject(error)));
    const source = Readable.from(body);
    source.pipe(sent);
  });
}

/**
 * Serve's memory while SAP stores large components: create, mCreate and update POST of `bytes` in
 * all, through a serve whose limit takes them; then a component of `bytes` refused by a serve whose
 * limit is a quarter of it (for 1 GB, the shipped 256 MB). Each peak is VmHWM so far, so a step can only show more than the ones before.
 */
async function uploadMemory(configDir: string, bytes: number): Promise<ContentServerFigures['uploads']> {
  const steps: ContentServerFigures['uploads']['steps'] = [];
  const maxPartBytes = bytes + (1 << 20);
  const step = async (
    served: { child: ChildProcess; port: number },
    what: string,
    query: string,
    parts: Array<{ docId: string; bytes: number }>,
  ): Promise<void> => {
    const started = performance.now();
    const status = await postMultipart(
      `http://127.0.0.1:${served.port}/archivelink/S4H?${query}`,
      multipartBody(parts),
    );
    steps.push({
      what,
      status,
      seconds: (performance.now() - started) / 1000,
      peakMb: memoryOf(served.child.pid as number).peakMb,
    });
  };
  const file = join(configDir, 'contentServer.yaml');
  const shipped = readFileSync(file, 'utf8');
  // Unsigned storing, as a content repository with signatures off: the bodies are what is measured.
  writeFileSync(file, shipped.replace(/^( *)- name: S4H\n/m, '$1- name: S4H\n$1  signatures: off\n'));
  let served = await startServe(configDir, maxPartBytes);
  const startPeakMb = memoryOf(served.child.pid as number).peakMb;
  try {
    await step(served, 'create POST, one component', 'create&pVersion=0047&contRep=Z1&docId=BIGC', [
      { docId: 'BIGC', bytes },
    ]);
    const half = bytes / 2;
    await step(served, 'mCreate, two documents of half', 'mCreate&pVersion=0047&contRep=Z1&docId=BIGM1', [
      { docId: 'BIGM1', bytes: half },
      { docId: 'BIGM2', bytes: half },
    ]);
    await step(served, 'update POST, one component', 'update&pVersion=0047&contRep=Z1&docId=BIGC', [
      { docId: 'BIGC', bytes },
    ]);
  } finally {
    await stop(served.child);
  }
  served = await startServe(configDir, bytes / 4);
  try {
    await step(
      served,
      'create POST refused for its size (maxPartBytes a quarter of it)',
      'create&pVersion=0047&contRep=Z1&docId=BIGR',
      [{ docId: 'BIGR', bytes }],
    );
  } finally {
    await stop(served.child);
    writeFileSync(file, shipped);
  }
  return { bytes, maxPartBytes, steps, startPeakMb };
}

async function stop(child: ChildProcess): Promise<void> {
  child.kill('SIGINT');
  child.kill('SIGINT');
  await once(child, 'exit');
}

/** Unsigned gets of a large document, each refused (401): what the repository had to send serve for them. */
async function refusedGets(
  repository: RepositorySandbox,
  script: string,
  uid: string,
  requests: number,
): Promise<ContentServerFigures['refused']> {
  const counted = { repositoryRequests: 0, repositoryBytes: 0, blobBytes: 0 };
  repository.faults.observe = (req, res) => {
    counted.repositoryRequests++;
    const blob = (req.url ?? '').includes('/@blob/');
    const write = res.write.bind(res);
    const count = (chunk: unknown): void => {
      const bytes =
        typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk instanceof Uint8Array ? chunk.length : 0;
      counted.repositoryBytes += bytes;
      if (blob) counted.blobBytes += bytes;
    };
    res.write = ((chunk: unknown, ...rest: never[]) => {
      count(chunk);
      return write(chunk, ...rest);
    }) as typeof res.write;
    const end = res.end.bind(res);
    res.end = ((chunk?: unknown, ...rest: never[]) => {
      if (typeof chunk !== 'function') count(chunk);
      return end(chunk as never, ...rest);
    }) as typeof res.end;
  };
  for (let i = 0; i < requests; i++) {
    const answer = await request(`${script}?get&pVersion=0047&contRep=Z1&docId=${uid}`);
    await answer.body.dump();
    if (answer.statusCode !== 401) throw new Error(`an unsigned get answered ${answer.statusCode}`);
  }
  repository.faults.observe = () => undefined;
  return { requests, ...counted };
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
        const rounds: GetRound[] = [];
        // The three ways alternated in each round: the machine's drift falls on all alike.
        for (let round = 0; round < ROUNDS; round++) {
          let own = ownCpuMs();
          const directRate = await download(direct.slice(0, count), concurrency, { authorization: ADMIN });
          const benchDirect = (ownCpuMs() - own) / count;
          const forwarderBefore = cpuMsOf(forwarder.child.pid as number);
          const forwardedRate = await download(forwarded.slice(0, count), concurrency);
          const forwarderMs = (cpuMsOf(forwarder.child.pid as number) - forwarderBefore) / count;
          repositoryRequests = 0;
          const serveBefore = cpuMsOf(child.pid as number);
          own = ownCpuMs();
          const servedRate = await download(served.slice(0, count), concurrency);
          const benchServed = (ownCpuMs() - own) / count;
          const serveMs = (cpuMsOf(child.pid as number) - serveBefore) / count;
          rounds.push({
            direct: directRate,
            forwarded: forwardedRate,
            served: servedRate,
            requestsPerGet: repositoryRequests / count,
            cpu: { serve: serveMs, forwarder: forwarderMs, benchDirect, benchServed },
          });
        }
        throughput.push({ latencyMs, concurrency, rounds });
      }
      repository.faults.latencyMs = 0;
      const rssSmallOnlyMb = memoryOf(child.pid as number).peakMb;
      const rssBeforeMb = memoryOf(child.pid as number).rssMb;
      const started = performance.now();
      await download([caller.url('get', [['docId', bigUid]])], 1);
      const seconds = (performance.now() - started) / 1000;
      const rssAfterMb = memoryOf(child.pid as number).peakMb;
      const refused = await refusedGets(
        repository,
        `http://127.0.0.1:${port}/archivelink/S4H`,
        bigUid,
        quick ? 20 : 200,
      );
      await Promise.all([stop(child), stop(forwarder.child)]);
      return {
        componentKb,
        throughput,
        big: { bytes: bigBytes, seconds, rssBeforeMb, rssAfterMb, rssSmallOnlyMb },
        refused,
        uploads: await uploadMemory(configDir, bigBytes),
      };
    } finally {
      for (const process of [child, forwarder.child]) if (process.exitCode === null) await stop(process);
    }
  } finally {
    await repository.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
