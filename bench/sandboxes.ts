import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, cpSync, readdirSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setUpRepository, writeDemoConfig } from '../dist/sandbox/demo.js';
import { ErpSandbox } from '../dist/sandbox/erp/server.js';
import { RepositorySandbox } from '../dist/sandbox/repository/server.js';
import { PRODUCTION_SEARCH_LAG_MS } from '../dist/sandbox/settings.js';
import { NO_BLOBS, type StoredDoc } from '../dist/sandbox/repository/store.js';
import type { RunReport } from '../dist/src/job/report/report.js';
import { requestEnvelope } from '../dist/src/erp/soap.js';
import { RUNTIME } from './runtime.js';

const PROJECT = join(import.meta.dirname, '..');
export const CLI = join(PROJECT, 'bin', 'connect2erp.js');
/** The program as the image runs it: one bundle (deploy/bundle.mjs, written by npm run build). */
export const BUNDLE = join(PROJECT, 'dist', 'bundle', 'main.js');
export const USAGE = pathToFileURL(join(import.meta.dirname, 'usage.js')).href;
export const WORKSPACES = '/default-domain/workspaces/ERP';

export type UseCase = 'workflow' | 'barcode' | 'link';
/** Where each use case's documents are uploaded (the shipped mapping file's paths). */
export const FOLDER: Record<UseCase, string> = {
  workflow: `${WORKSPACES}/Workflow`,
  barcode: `${WORKSPACES}/Barcode`,
  link: `${WORKSPACES}/Invoices`,
};

/** Documents per warm-up round (`warmUp`). */
const WARM_UP_DOCUMENTS = 1000;

/**
 * The shipped mapping file, with the two values a user would type in the web UI taken from
 * the generated documents instead (bar code from the title, invoice number from the
 * description), so every generated document is READY after intake.
 */
export function benchMapping(options: { flatInvoices?: boolean } = {}): string {
  const mapping = JSON.parse(
    readFileSync(join(PROJECT, 'config', 'connector_configuration_connect_to_erp.json'), 'utf8'),
  ) as { mapping: Array<{ path: string; properties: Record<string, unknown>; createParentALFolder: boolean }> };
  for (const entry of mapping.mapping) {
    if (entry.path === FOLDER.barcode) entry.properties['erpBarcode:barcode'] = '$dc:title';
    if (entry.path === FOLDER.link) entry.properties['erpCreateALDocument:erpObjectId'] = '$dc:description';
    // Invoices linked as they are, without an archive-link folder each.
    if (entry.path === FOLDER.link && options.flatInvoices === true) entry.createParentALFolder = false;
  }
  return JSON.stringify(mapping);
}

const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** Mean time of `n` requests one after the other, with a plain keep-alive HTTP client. */
async function sequentialMs(
  url: string,
  options: { method: string; headers: Record<string, string>; body?: string },
  n = 200,
): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const once = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const req = request(url, { ...options, agent }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end(options.body);
    });
  await once();
  const started = performance.now();
  for (let i = 0; i < n; i++) await once();
  agent.destroy();
  return (performance.now() - started) / n;
}

/** A process of the job (`args` after node), with the usage hook: its exit code and the end of its standard error. */
export async function spawnJob(args: string[], usageFile: string): Promise<{ exitCode: number; stderr: string }> {
  const child = spawn(RUNTIME, args, {
    env: {
      ...process.env,
      NUXEO_PASSWORD: 'Administrator',
      CONTENT_SERVER_PASSWORD: 'Administrator',
      SAP_PASSWORD: 'sandbox',
      BENCH_USAGE_FILE: usageFile,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exitCode = await new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? -1)));
  return { exitCode, stderr };
}

export interface JobRun {
  exitCode: number;
  report: RunReport;
  /** Wall time of the job's process, start-up included. */
  wallMs: number;
  peakRssKb: number;
  /** CPU time of the job's process, start-up included. */
  cpuMs: number;
  /** Requests by kind (`PUT id`, `POST Document.AddFacet`, `ARCHIV_CONNECTION_INSERT` …). */
  repository: Map<string, number>;
  erp: Map<string, number>;
  /** The time all requests spent in each sandbox, from arrival to answer, added up (`TimeInSandbox`). */
  repositoryBusyMs: number;
  erpBusyMs: number;
}

/**
 * Adds up the time requests spend in a sandbox, from arrival to answer: divided by their number,
 * whether the sandbox kept to its injected latency under the phase's load.
 */
class TimeInSandbox {
  busyMs = 0;

  track(res: ServerResponse): void {
    const arrived = performance.now();
    res.once('close', () => {
      this.busyMs += performance.now() - arrived;
    });
  }
}

/** Requests to the repository sandbox by kind: the method and what the path addresses. */
function repositoryKind(req: IncomingMessage): string {
  const path = (req.url as string).split('?')[0].replace(/^\/nuxeo\/api\/v1\//, '');
  const operation = /(?:automation|@op)\/([\w.]+)/.exec(path)?.[1];
  if (operation !== undefined) return `POST ${operation}`;
  return `${req.method as string} ${path.split('/')[0]}`;
}

/** A run's own span, its report's start to end: the process's start-up aside. */
export const reportSpanMs = (report: RunReport): number =>
  Date.parse(report.finishedAt as string) - Date.parse(report.startedAt);

/** The requests counted, of the kinds `include` keeps (all by default). */
export const total = (counts: Map<string, number>, include: (key: string) => boolean = () => true): number =>
  [...counts].reduce((sum, [key, n]) => sum + (include(key) ? n : 0), 0);

const count = (counts: Map<string, number>, key: string): void => {
  counts.set(key, (counts.get(key) ?? 0) + 1);
};

/**
 * Both sandboxes in this process with injected latency, a configuration folder for the job
 * pointing at them, and backlogs generated straight into the repository's store.
 */
export class BenchSandboxes {
  // Searches lag writes as a stock Nuxeo's; each run starts with the index caught up, as the minutes between scheduled runs leave it.
  readonly repository = new RepositorySandbox({ searchLagMs: PRODUCTION_SEARCH_LAG_MS });
  readonly erp = new ErpSandbox();
  private readonly dir = mkdtempSync(join(tmpdir(), 'connect2erp-bench-'));
  private readonly repositoryRequests = new Map<string, number>();
  private readonly erpRequests = new Map<string, number>();
  private repositoryTime = new TimeInSandbox();
  private erpTime = new TimeInSandbox();
  private configDir = '';
  private baseUrl = '';
  private erpUrl = '';
  private serial = 0;
  /** The repository's 409 answers since the last runShards. */
  private conflicts = 0;

  static async start(
    latency: { repositoryMs: number; erpMs: number },
    mapping = benchMapping(),
  ): Promise<BenchSandboxes> {
    const sandboxes = new BenchSandboxes();
    const baseUrl = await sandboxes.repository.start();
    const erpUrl = await sandboxes.erp.start();
    sandboxes.baseUrl = baseUrl;
    sandboxes.erpUrl = erpUrl;
    await setUpRepository(baseUrl, mapping);
    sandboxes.configDir = writeDemoConfig(sandboxes.dir, baseUrl, erpUrl);
    sandboxes.disabledJobs();
    sandboxes.buildIndexes();
    sandboxes.repository.faults.latencyMs = latency.repositoryMs;
    sandboxes.erp.faults.latencyMs = latency.erpMs;
    sandboxes.repository.faults.observe = (req, res) => {
      count(sandboxes.repositoryRequests, repositoryKind(req));
      sandboxes.repositoryTime.track(res);
      res.once('finish', () => {
        if (res.statusCode === 409) sandboxes.conflicts++;
      });
    };
    sandboxes.erp.faults.observe = (req, res, functionName) => {
      count(sandboxes.erpRequests, functionName ?? req.method ?? '');
      sandboxes.erpTime.track(res);
    };
    return sandboxes;
  }

  /**
   * How long the sandboxes really take per request with their injected latency, seen by a
   * client that adds next to nothing: a small read from the repository, RFC_PING from the ERP.
   * Timers overshoot and the servers do their work on top, so this is a little over the latency.
   */
  async effectiveLatency(): Promise<{ repositoryMs: number; erpMs: number }> {
    const root = this.folder('/default-domain');
    const repositoryMs = await sequentialMs(`${this.baseUrl}/api/v1/id/${root.uid}`, {
      method: 'GET',
      headers: { Authorization: basic('Administrator', 'Administrator') },
    });
    const erpMs = await sequentialMs(
      `${this.erpUrl}/sap/bc/soap/rfc?sap-client=100`,
      {
        method: 'POST',
        headers: {
          Authorization: basic('CONNECTOR', 'sandbox'),
          'Content-Type': 'text/xml; charset=utf-8',
          SOAPAction: '',
        },
        body: requestEnvelope('RFC_PING', {}),
      },
      50,
    );
    this.repositoryRequests.clear();
    this.erpRequests.clear();
    return { repositoryMs, erpMs };
  }

  /**
   * The indexes the job's queries are narrowed by (a task's statuses, the intake's "without the
   * facet, or without docId", the archive-link folder's dc:source). A production repository has
   * them before the job comes; the sandbox builds each on first use, which would charge the first
   * measured run for it.
   */
  private buildIndexes(): void {
    const store = this.repository.index.indexed;
    store.idsWithValue('erpTaskStatus:status', 'READY');
    store.idsWithoutValue('erpHttpContent:docId');
    store.idsWithoutFacet('fct_erp_http_content');
    store.idsWithValue('dc:source', '');
  }

  /** A copy of the jobs folder with every task disabled: a run there is the intake alone. */
  private disabledJobs(): void {
    const jobs = join(this.dir, 'jobs');
    cpSync(jobs, join(this.dir, 'intake-only'), { recursive: true });
    for (const file of readdirSync(join(this.dir, 'intake-only'))) {
      const path = join(this.dir, 'intake-only', file);
      writeFileSync(path, readFileSync(path, 'utf8').replace(/^enabled: true/m, 'enabled: false'));
    }
  }

  /** A file of the job's configuration (`config/…`, `jobs/…`), for a benchmark to change a setting. */
  file(relative: string): string {
    return join(this.dir, relative);
  }

  private folder(path: string): StoredDoc {
    return this.repository.store.getByPath(path) as StoredDoc;
  }

  /** The mapping file a run reads replaced, as `mapping upload` does. */
  async useMapping(text: string): Promise<void> {
    await setUpRepository(this.baseUrl, text);
  }

  /** The link task over Rest (the S/4HANA attachment service) instead of RFC. */
  linkOverRest(): void {
    const file = join(this.dir, 'jobs', 'link.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('function: RFC', 'function: Rest'));
  }

  /**
   * `n` new files, as users upload them: each with a title, a description and a small PDF, or
   * the description and content given.
   */
  addNew(useCase: UseCase, n: number, given: { description?: string; content?: Buffer } = {}): void {
    const { store } = this.repository;
    const actor = this.repository.actor();
    const parent = this.folder(FOLDER[useCase]);
    const blob = store.storeBlob(given.content ?? Buffer.from('%PDF-1.4 benchmark'), 'scan.pdf', 'application/pdf');
    for (let i = 0; i < n; i++) {
      const id = ++this.serial;
      const name = `${useCase}-${String(id).padStart(7, '0')}.pdf`;
      store.create(
        actor,
        parent,
        {
          type: 'File',
          name,
          properties: {
            'dc:title': `BC-${String(id).padStart(9, '0')}`,
            'dc:description': given.description ?? String(5_100_000_000 + id),
            'file:content': { 'upload-batch': 'bench' },
          },
        },
        () => ({ ...blob, name }),
      );
    }
  }

  /** `n` documents a job labelled and linked long ago: status DONE, nothing left to do. */
  addProcessed(useCase: UseCase, n: number): void {
    const { store } = this.repository;
    const actor = this.repository.actor();
    const parent = this.folder(FOLDER[useCase]);
    const facets = {
      workflow: 'fct_erp_start_workflow',
      barcode: 'fct_erp_barcode',
      link: 'fct_erp_create_al_document',
    }[useCase];
    for (let i = 0; i < n; i++) {
      const id = ++this.serial;
      let doc = store.create(
        actor,
        parent,
        { type: 'File', name: `done-${useCase}-${id}.pdf`, properties: { 'dc:title': `BC-${id}` } },
        NO_BLOBS,
      );
      for (const facet of ['fct_erp_http_content', facets, 'fct_erp_task_status'])
        doc = store.addFacet(actor, doc, facet);
      store.update(
        actor,
        doc,
        {
          'erpHttpContent:docId': doc.uid,
          'erpHttpContent:archiveId': 'Z1',
          'erpHttpContent:source': 'S4H',
          'erpTaskStatus:status': 'DONE',
          'erpTaskStatus:task': useCase,
          'erpTaskStatus:erpReference': doc.uid,
        },
        NO_BLOBS,
      );
    }
  }

  /**
   * The repository sandbox stands in for a server that has been up for a while: its hot paths are
   * compiled. A fresh one spends twice the CPU per request on its first thousands of requests
   * (1.1 ms, then 0.5 here), which the first measured phase would otherwise pay for. So the intake
   * runs twice over throwaway documents, which are then marked DONE so no task picks them up.
   */
  async warmUp(): Promise<void> {
    const { store } = this.repository;
    const actor = this.repository.actor();
    for (let round = 0; round < 2; round++) {
      this.addNew('workflow', WARM_UP_DOCUMENTS);
      await this.run({ intakeOnly: true });
      for (const uid of store.idsWithValue('erpTaskStatus:status', 'READY')) {
        store.update(actor, store.get(uid) as StoredDoc, { 'erpTaskStatus:status': 'DONE' }, NO_BLOBS);
      }
    }
  }

  /** Run the job in its own process (`run --task`, or intake alone), counting what reaches the sandboxes. */
  async run(what: {
    task?: string;
    intakeOnly?: boolean;
    nodeArgs?: string[];
    /** `--max-duration`: the run stops there (exit 3). */
    maxDuration?: string;
    /** The program's entry: the clone's modules (CLI, the default) or the image's BUNDLE. */
    entry?: string;
    /** The exit codes the run may end with (0, and 3 with a maximum duration, by default). */
    exitCodes?: number[];
  }): Promise<JobRun> {
    this.repository.index.catchUp();
    this.repositoryRequests.clear();
    this.erpRequests.clear();
    this.repositoryTime = new TimeInSandbox();
    this.erpTime = new TimeInSandbox();
    const reportFile = join(this.dir, 'report.json');
    const usageFile = join(this.dir, 'usage.json');
    const args = [
      ...(what.nodeArgs ?? []),
      '--import',
      USAGE,
      what.entry ?? CLI,
      'run',
      '--config',
      this.configDir,
      '--report',
      reportFile,
    ];
    if (what.intakeOnly) args.push('--jobs', join(this.dir, 'intake-only'));
    if (what.task !== undefined) args.push('--task', what.task);
    if (what.maxDuration !== undefined) args.push('--max-duration', what.maxDuration);
    const started = performance.now();
    const { exitCode, stderr } = await spawnJob(args, usageFile);
    const wallMs = performance.now() - started;
    const expected = what.exitCodes ?? (what.maxDuration === undefined ? [0] : [0, 3]);
    if (!expected.includes(exitCode)) throw new Error(`the job exited with ${exitCode}: ${stderr}`);
    const usage = JSON.parse(readFileSync(usageFile, 'utf8')) as { peakRssKb: number; cpuMs: number };
    return {
      exitCode,
      wallMs,
      report: JSON.parse(readFileSync(reportFile, 'utf8')) as RunReport,
      ...usage,
      repository: new Map(this.repositoryRequests),
      erp: new Map(this.erpRequests),
      repositoryBusyMs: this.repositoryTime.busyMs,
      erpBusyMs: this.erpTime.busyMs,
    };
  }

  /**
   * `n` runs of `task` side by side, each with its shard (`--shard k/n`), on one backlog: the wall
   * time until the last ends, each one's report, the requests that reached the sandboxes and how
   * many of the repository's answers were 409 (a run meeting another on a document).
   */
  async runShards(
    n: number,
    task: string,
  ): Promise<{ wallMs: number; reports: RunReport[]; repository: Map<string, number>; conflicts: number }> {
    this.repository.index.catchUp();
    this.repositoryRequests.clear();
    this.conflicts = 0;
    const started = performance.now();
    const runs = Array.from({ length: n }, async (_, i) => {
      const reportFile = join(this.dir, `shard-${i}.json`);
      const args = ['--import', USAGE, CLI, 'run', '--config', this.configDir, '--task', task, '--report', reportFile];
      const { exitCode, stderr } = await spawnJob(
        [...args, '--shard', `${i + 1}/${n}`],
        join(this.dir, `usage-${i}.json`),
      );
      if (exitCode !== 0) throw new Error(`shard ${i + 1}/${n} exited with ${exitCode}: ${stderr}`);
      return JSON.parse(readFileSync(reportFile, 'utf8')) as RunReport;
    });
    const reports = await Promise.all(runs);
    return {
      wallMs: performance.now() - started,
      reports,
      repository: new Map(this.repositoryRequests),
      conflicts: this.conflicts,
    };
  }

  async stop(): Promise<void> {
    await this.erp.stop();
    await this.repository.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
