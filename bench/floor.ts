import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { Agent } from 'undici';
import { Faults } from '../dist/sandbox/faults.js';
import { close, listen, readBody } from '../dist/sandbox/http.js';
import { RUNTIME } from './runtime.js';

/**
 * What this machine allows at all: a bare client and server, with no job and no repository
 * behind them, at the same injected latency and in-flight limit. The client is undici in a
 * process of its own, as the job's; the server waits with the sandbox's latency injection and
 * answers every PUT with a document-sized JSON body. Their ratio to the bound is the most any
 * client can reach here; what is left between it and the job's is the job's and the sandbox's work.
 * The client's CPU per request is what a request costs a client that does nothing else, at that rate.
 */
const ANSWER = JSON.stringify({
  'entity-type': 'document',
  repository: 'default',
  uid: '00000000-0000-4000-8000-000000000000',
  path: '/default-domain/workspaces/ERP/Barcode/scan.pdf',
  type: 'File',
  state: 'project',
  changeToken: '3-1',
  title: 'BC-000000001',
  lastModified: new Date(0).toISOString(),
  properties: Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`erpTaskStatus:field${i}`, `value ${i}`])),
  facets: [
    'Versionable',
    'Publishable',
    'Commentable',
    'HasRelatedText',
    'Downloadable',
    'fct_erp_http_content',
    'fct_erp_barcode',
    'fct_erp_task_status',
  ],
  schemas: [
    'common',
    'dublincore',
    'file',
    'uid',
    'relatedtext',
    'erp_http_content',
    'erp_barcode',
    'erp_task_status',
  ].map((name) => ({ name, prefix: name })),
});

export interface Floor {
  latencyMs: number;
  inFlight: number;
  perSecond: number;
  bound: number;
  /** The bare client's CPU ms per request, warmed up: its start-up and first requests aside. */
  cpuMsPerRequest: number;
}

export async function floor(latencyMs: number, inFlight: number): Promise<Floor> {
  const faults = new Faults();
  faults.latencyMs = latencyMs;
  const server = createServer((req, res) => {
    void readBody(req).then(async () => {
      await faults.apply(req, res);
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(ANSWER) });
      res.end(ANSWER);
    });
  });
  const { port } = await listen(server, 0, '127.0.0.1');
  try {
    const bound = (inFlight * 1000) / latencyMs;
    // About four seconds at the bound.
    const requests = Math.round(bound * 4);
    const child = spawn(RUNTIME, [import.meta.filename, String(port), String(inFlight), String(requests)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    if (code !== 0) throw new Error(`the bare client exited with ${code}`);
    const { perSecond, cpuMsPerRequest } = JSON.parse(out) as Pick<Floor, 'perSecond' | 'cpuMsPerRequest'>;
    return { latencyMs, inFlight, perSecond, bound, cpuMsPerRequest };
  } finally {
    await close(server);
  }
}

/**
 * The client: `requests` PUTs, `inFlight` at a time, after four a connection to warm up (its
 * connections opened, its code compiled); prints their requests per second and CPU ms per request.
 */
async function client(port: number, inFlight: number, requests: number): Promise<void> {
  const agent = new Agent({ connections: inFlight });
  const body = JSON.stringify({
    'entity-type': 'document',
    properties: { 'erpTaskStatus:status': 'READY', 'erpTaskStatus:task': 'barcode' },
  });
  let sent = 0;
  let until = 0;
  const worker = async (): Promise<void> => {
    while (sent < until) {
      sent++;
      const res = await agent.request({
        origin: `http://127.0.0.1:${port}`,
        path: '/nuxeo/api/v1/id/x',
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body,
      });
      await res.body.json();
    }
  };
  const batch = async (count: number): Promise<void> => {
    until = sent + count;
    await Promise.all(Array.from({ length: inFlight }, worker));
  };
  await batch(inFlight * 4);
  const cpu = process.cpuUsage();
  const started = performance.now();
  await batch(requests);
  const { user, system } = process.cpuUsage(cpu);
  const perSecond = (requests / (performance.now() - started)) * 1000;
  process.stdout.write(JSON.stringify({ perSecond, cpuMsPerRequest: (user + system) / 1000 / requests }));
  await agent.close();
}

if (process.argv[1] === import.meta.filename)
  await client(Number(process.argv[2]), Number(process.argv[3]), Number(process.argv[4]));
