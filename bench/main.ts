import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { badInputBench, type BadInput } from './bad-input.js';
import { contentServerBench, type ContentServerFigures } from './content-server.js';
import { firstLinkBench, type FirstLink } from './first-link.js';
import { floor } from './floor.js';
import { linksBench, marginFrom, type LinkRate, type Sizing } from './links.js';
import { scaleOutBench, type ScaleOut } from './scale-out.js';
import { byRow, f, machineState, ROUNDS, span, statesLine, type MachineState } from './ranges.js';
import { STARTUP_ROUNDS, startupBench, type Startup } from './startup.js';
import { BenchSandboxes, BUNDLE, FOLDER, reportSpanMs, total, type JobRun, type UseCase } from './sandboxes.js';
import { ON_RUNTIME } from './runtime.js';

/**
 * `npm run bench`: the job against the sandboxes with injected latency, on generated backlogs.
 * Writes BENCHMARKS.md. What each figure means: the notes at the end of BENCHMARKS.md.
 */
const { values } = parseArgs({
  options: {
    'repository-latency': { type: 'string', default: '5' },
    'erp-latency': { type: 'string', default: '50' },
    quick: { type: 'boolean', default: false },
    /** Only the content server's section, the rest of BENCHMARKS.md kept as it is. */
    'content-server-only': { type: 'boolean', default: false },
    /** Only the start-up section, the rest of BENCHMARKS.md kept as it is. */
    'startup-only': { type: 'boolean', default: false },
    /** Only the time-to-first-link section, the rest of BENCHMARKS.md kept as it is. */
    'first-link-only': { type: 'boolean', default: false },
    /** Only the scale-out section, the rest of BENCHMARKS.md kept as it is. */
    'scale-out-only': { type: 'boolean', default: false },
    /** Only the links-per-second section (shipped and large sizing), the rest of BENCHMARKS.md kept as it is. */
    'links-only': { type: 'boolean', default: false },
    /** Only the head (throughput, memory, repository size: above the content server's section), the rest kept. */
    'throughput-only': { type: 'boolean', default: false },
    /** Only the bad-input memory section, the rest of BENCHMARKS.md kept as it is. */
    'bad-input-only': { type: 'boolean', default: false },
    /**
     * A build of an earlier commit (a checkout whose `bin/connect2erp.js` runs, its `dist` built):
     * the links section measures it beside this checkout, in the same run, alternating.
     */
    baseline: { type: 'string' },
    out: { type: 'string', default: join(import.meta.dirname, '..', 'BENCHMARKS.md') },
  },
});
if (ON_RUNTIME !== '' && !values['startup-only'] && !values['links-only'])
  throw new Error(
    'BENCH_NODE: with --startup-only or --links-only, whose sections are written beside those of the default runtime',
  );
const latency = { repositoryMs: Number(values['repository-latency']), erpMs: Number(values['erp-latency']) };
const scale = values.quick ? 10 : 1;
const SIZES = {
  throughput: [1000 / scale, 10_000 / scale],
  memory: [1000 / scale, 10_000 / scale, 100_000 / scale],
  history: 100_000 / scale,
  fresh: 100,
};

/** A repository latency at which neither the job's nor the sandbox's CPU is the limit: the repository-bound phases again. */
const SWEEP_REPOSITORY_MS = 20;

/** What the shipped configuration allows in flight: storage.yaml and erpHttp.yaml. */
const IN_FLIGHT = { repository: 8, erp: 8 };

interface PhaseRow {
  phase: string;
  docs: number;
  seconds: number;
  repositoryPerDoc: number;
  repositoryBound: string;
  erpPerDoc: number;
  lookupsPerDoc: number;
  erpBound: string;
  /** Documents per second the in-flight limits and the injected latencies allow at the measured requests per document. */
  boundPerSecond: number;
  /** The latencies the sandboxes really answered a bare client with in this run… */
  real: Latency;
  /** …and the bound at those latencies. */
  effectiveBoundPerSecond: number;
  /** The ratio a bare client and server reach on this machine, on the side (repository or ERP) that sets the bound. */
  floorRatio: number;
  /** The mean time a request spent in the sandbox on the side that sets the bound, arrival to answer, and that side's injected latency. */
  inSandbox: { ms: number; latencyMs: number };
  peakRssMb: number;
  /** CPU the job's process spent per request, its start-up (a run with nothing to do) taken off. */
  jobMsPerRequest: number;
  /** CPU both sandboxes spent per request. */
  sandboxMsPerRequest: number;
  sandboxCpu: number;
  detail: string;
}

const LOOKUPS = new Set(['ARCHIV_GET_CONNECTIONS']);

type Latency = { repositoryMs: number; erpMs: number };

/** What one throughput run measured beside the job's own report. */
interface Measured {
  sandboxCpuMs: number;
  /** The job's CPU for a run with nothing to do. */
  startupCpuMs: number;
  effective: Latency;
  injected: Latency;
  /** Ratio to the bound that a bare client and server reach at each side's latency and in-flight limit. */
  floors: { repository: number; erp: number };
}

function row(
  phase: string,
  docs: number,
  run: JobRun,
  durationMs: number,
  bounds: { repository: string; erp: string },
  m: Measured,
): PhaseRow {
  const requests = total(run.repository) + total(run.erp);
  const repository = total(run.repository) / docs;
  const erp = total(run.erp, (k) => !LOOKUPS.has(k)) / docs;
  const lookups = total(run.erp, (k) => LOOKUPS.has(k)) / docs;
  const perSecond = (inFlight: number, latencyMs: number, perDoc: number): number =>
    perDoc === 0 || latencyMs === 0 ? Infinity : (inFlight * 1000) / latencyMs / perDoc;
  const bound = (l: Latency): number =>
    Math.min(
      perSecond(IN_FLIGHT.repository, l.repositoryMs, repository),
      perSecond(IN_FLIGHT.erp, l.erpMs, erp + lookups),
    );
  const repositoryBinds =
    perSecond(IN_FLIGHT.repository, m.injected.repositoryMs, repository) <=
    perSecond(IN_FLIGHT.erp, m.injected.erpMs, erp + lookups);
  const detail = [...run.repository, ...run.erp]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${(n / docs).toFixed(3)}`)
    .join(', ');
  return {
    phase,
    docs,
    seconds: durationMs / 1000,
    repositoryPerDoc: repository,
    repositoryBound: bounds.repository,
    erpPerDoc: erp,
    lookupsPerDoc: lookups,
    erpBound: bounds.erp,
    boundPerSecond: bound(m.injected),
    real: m.effective,
    effectiveBoundPerSecond: bound(m.effective),
    floorRatio: repositoryBinds ? m.floors.repository : m.floors.erp,
    peakRssMb: run.peakRssKb / 1024,
    inSandbox: repositoryBinds
      ? { ms: run.repositoryBusyMs / total(run.repository), latencyMs: m.injected.repositoryMs }
      : { ms: run.erpBusyMs / total(run.erp), latencyMs: m.injected.erpMs },
    jobMsPerRequest: run.cpuMs > m.startupCpuMs ? (run.cpuMs - m.startupCpuMs) / requests : NaN,
    sandboxMsPerRequest: m.sandboxCpuMs / requests,
    sandboxCpu: m.sandboxCpuMs / durationMs,
    detail,
  };
}

/** Sandbox CPU time while `work` runs: how busy the servers were (1.0 = one core, the limit). */
async function timed<T>(work: () => Promise<T>): Promise<{ result: T; cpuMs: number }> {
  const before = process.cpuUsage();
  const result = await work();
  const used = process.cpuUsage(before);
  return { result, cpuMs: (used.user + used.system) / 1000 };
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`benchmark run went wrong: ${message}`);
}

const TASK_BOUNDS: Record<UseCase, { repository: string; erp: string }> = {
  workflow: { repository: '2 + 1/50', erp: '1' },
  barcode: { repository: '2 + 1/100', erp: '1/100' },
  link: { repository: '2 + 1/50', erp: '1' },
};

const bareRatio = (bare: { perSecond: number; bound: number }): number => bare.perSecond / bare.bound;

/** Intake, then each task, over `n` new documents per use case; only the repository-bound phases when `repositoryBound`. */
async function throughput(n: number, injected: Latency, repositoryBound = false): Promise<PhaseRow[]> {
  const sandboxes = await BenchSandboxes.start(injected);
  const rows: PhaseRow[] = [];
  try {
    await sandboxes.warmUp();
    const effective = await sandboxes.effectiveLatency();
    // Start-up CPU varies by a few hundred ms from run to run: the median of three.
    const idle = [];
    for (let i = 0; i < 3; i++) idle.push((await sandboxes.run({ intakeOnly: true })).cpuMs);
    const startupCpuMs = idle.sort((a, b) => a - b)[1];
    const floors = {
      repository: bareRatio(await floor(injected.repositoryMs, IN_FLIGHT.repository)),
      erp: bareRatio(await floor(injected.erpMs, IN_FLIGHT.erp)),
    };
    const measured = (sandboxCpuMs: number): Measured => ({ sandboxCpuMs, startupCpuMs, effective, injected, floors });
    const intakes: Array<[UseCase, string, { repository: string; erp: string }]> = [
      ['workflow', 'intake, flat (workflow)', { repository: '1 + 4/100', erp: '0' }],
      ['barcode', 'intake, flat (barcode)', { repository: '1 + 4/100', erp: '0' }],
      ['link', 'intake, with folders (invoices)', { repository: '2 + 4/100', erp: '0' }],
    ];
    for (const [useCase, phase, bounds] of intakes.filter(([u]) => !repositoryBound || u === 'barcode')) {
      sandboxes.addNew(useCase, n);
      const { result: run, cpuMs } = await timed(() => sandboxes.run({ intakeOnly: true }));
      check(
        run.report.intake.counts.labelled === n && run.report.intake.counts.ready === n,
        `${phase}: ${JSON.stringify(run.report.intake.counts)}`,
      );
      rows.push(row(phase, n, run, run.report.intake.durationMs, bounds, measured(cpuMs)));
    }
    for (const useCase of repositoryBound ? (['barcode'] as const) : (['workflow', 'barcode', 'link'] as const)) {
      const { result: run, cpuMs } = await timed(() => sandboxes.run({ task: useCase }));
      const summary = run.report.tasks[useCase];
      check(summary.counts.DONE === n, `task ${useCase}: ${JSON.stringify(summary.counts)}`);
      rows.push(row(`task ${useCase}`, n, run, summary.durationMs, TASK_BOUNDS[useCase], measured(cpuMs)));
    }
    const { inbox, barcodes, links } = sandboxes.erp.tables;
    check(
      barcodes.length === n && (repositoryBound || (inbox.length === n && links.length === n)),
      'SAP did not get one row per document',
    );
  } finally {
    await sandboxes.stop();
  }
  return rows;
}

/** Peak RSS of one whole run (intake and tasks) over `n` new workflow documents, without latency. */
async function memory(n: number): Promise<{
  n: number;
  peakRssMb: number;
  seconds: number;
  perSecond: number;
  sandboxCpu: number;
  sandboxMsPerRequest: number;
  overhead: Latency;
}> {
  const sandboxes = await BenchSandboxes.start({ repositoryMs: 0, erpMs: 0 });
  try {
    const overhead = await sandboxes.effectiveLatency();
    sandboxes.addNew('workflow', n);
    const { result: run, cpuMs } = await timed(() => sandboxes.run({}));
    check(
      run.report.tasks.workflow.counts.DONE === n,
      `memory ${n}: ${JSON.stringify(run.report.tasks.workflow.counts)}`,
    );
    const ms = run.report.intake.durationMs + run.report.tasks.workflow.durationMs;
    const requests = total(run.repository) + total(run.erp);
    return {
      n,
      peakRssMb: run.peakRssKb / 1024,
      seconds: run.wallMs / 1000,
      perSecond: n / (ms / 1000),
      sandboxCpu: cpuMs / run.wallMs,
      sandboxMsPerRequest: cpuMs / requests,
      overhead,
    };
  } finally {
    await sandboxes.stop();
  }
}

/** One whole run over 100 new documents, in a repository holding `processed` documents done before. */
async function history(processed: number): Promise<{ processed: number; seconds: number; repositoryRequests: number }> {
  const sandboxes = await BenchSandboxes.start(latency);
  try {
    const useCases = Object.keys(FOLDER) as UseCase[];
    useCases.forEach((useCase, i) =>
      sandboxes.addProcessed(useCase, Math.floor(processed / 3) + (i < processed % 3 ? 1 : 0)),
    );
    useCases.forEach((useCase, i) =>
      sandboxes.addNew(useCase, Math.floor(SIZES.fresh / 3) + (i < SIZES.fresh % 3 ? 1 : 0)),
    );
    const run = await sandboxes.run({});
    const done = Object.values(run.report.tasks).reduce((sum, t) => sum + (t.counts.DONE ?? 0), 0);
    check(done === SIZES.fresh, `history ${processed}: ${done} done`);
    return { processed, seconds: reportSpanMs(run.report) / 1000, repositoryRequests: total(run.repository) };
  } finally {
    await sandboxes.stop();
  }
}

/** The phases' table, a row per phase, each figure its range over the rounds (each round the same phases in the same order). */
function phaseTable(rounds: PhaseRow[][]): string[] {
  const lines = [
    "| phase | documents | seconds | docs/s | bound docs/s | ratio | ratio, real latency | bare pair's ratio | ms per request in the sandbox (injected) | repository req/doc (lower bound) | ERP calls/doc beyond lookups (lower bound) | lookups/doc | job peak RSS MB | CPU ms per request, job / sandboxes | sandbox CPU |",
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|',
  ];
  const perSecond = (p: PhaseRow): number => p.docs / p.seconds;
  for (const p of byRow(rounds, (r) => `${r.phase} ${r.docs}`)) {
    const [first] = p;
    lines.push(
      `| ${first.phase} | ${first.docs} | ${span(p, (r) => r.seconds)} | ${span(p, perSecond, 0)} | ${span(p, (r) => r.boundPerSecond, 0)} | ${span(p, (r) => perSecond(r) / r.boundPerSecond)} | ${span(p, (r) => perSecond(r) / r.effectiveBoundPerSecond)} | ${span(p, (r) => r.floorRatio)} | ${span(p, (r) => r.inSandbox.ms)} (${first.inSandbox.latencyMs}) | ${span(p, (r) => r.repositoryPerDoc, 3)} (${first.repositoryBound}) | ${span(p, (r) => r.erpPerDoc, 3)} (${first.erpBound}) | ${span(p, (r) => r.lookupsPerDoc, 3)} | ${span(p, (r) => r.peakRssMb, 0)} | ${span(p, (r) => r.jobMsPerRequest, 3)} / ${span(p, (r) => r.sandboxMsPerRequest, 3)} | ${span(p, (r) => r.sandboxCpu)} |`,
    );
  }
  return lines;
}

/** The content server's section of BENCHMARKS.md, between its own markers. */
const SERVER_START = '<!-- content server: written by npm run bench -->';
const SERVER_END = '<!-- end of the content server section -->';

function contentServerSection(figures: ContentServerFigures): string[] {
  const { refused, uploads } = figures;
  const md = [
    SERVER_START,
    '## Content server',
    '',
    `\`connect2erp serve\` in its own process, the repository sandbox in the benchmark's with the latency shown. SAP's \`get\` of a job's document (${figures.componentKb} KB, signed URL, DSA/SHA-1) through the server, against the same download straight from the repository (\`@blob\`), with as many clients at once; documents per second; each figure the range over ${ROUNDS} rounds, the three ways alternated in each.`,
    '',
    '"forwarding alone" is the yardstick between them: a process of the benchmark\'s (bench/forwarder.ts) that makes the same two repository requests per get (the document and its blob, together) and streams the blob on, with no signature, no checks and no logs. Its ratio is what relaying the bytes allows on this machine at all; serve ÷ forwarding is what serve\'s own work costs.',
    '',
    "CPU per get, in ms: the server's own, the forwarder's, and the benchmark process's (its clients and the repository sandbox, one thread) for the direct download and for the get through serve. On a machine of 2 cores the processes share them, and with many clients at once they run out of CPU before the repository's latency is the limit.",
    '',
    '| repository latency ms | clients at once | direct docs/s | forwarding alone docs/s | through serve docs/s | serve ÷ direct | forwarding ÷ direct | serve ÷ forwarding | repository requests per get | CPU ms per get: serve / forwarder | benchmark CPU ms per get: direct / through serve |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...figures.throughput.map(({ latencyMs, concurrency, rounds: r }) => {
      return `| ${latencyMs} | ${concurrency} | ${span(r, (x) => x.direct, 0)} | ${span(r, (x) => x.forwarded, 0)} | ${span(r, (x) => x.served, 0)} | ${span(r, (x) => x.served / x.direct)} | ${span(r, (x) => x.forwarded / x.direct)} | ${span(r, (x) => x.served / x.forwarded)} | ${span(r, (x) => x.requestsPerGet)} | ${span(r, (x) => x.cpu.serve)} / ${span(r, (x) => x.cpu.forwarder)} | ${span(r, (x) => x.cpu.benchDirect)} / ${span(r, (x) => x.cpu.benchServed)} |`;
    }),
    '',
    `Memory while one component of ${f(figures.big.bytes / (1 << 20), 0)} MB streams through (latency 0): the server's peak RSS ${f(figures.big.rssSmallOnlyMb, 0)} MB after the gets above, ${f(figures.big.rssAfterMb, 0)} MB after the large one (× ${f(figures.big.rssAfterMb / figures.big.rssSmallOnlyMb)}; resident before it: ${f(figures.big.rssBeforeMb, 0)} MB), in ${f(figures.big.seconds)} s (${f(figures.big.bytes / (1 << 20) / figures.big.seconds, 0)} MB/s).`,
    '',
    `Refused requests: ${refused.requests} unsigned gets of that large document, each answered 401. Per refused get the repository answered ${f(refused.repositoryRequests / refused.requests)} requests and sent ${f(refused.repositoryBytes / refused.requests, 0)} bytes (the document's metadata), of them ${f(refused.blobBytes / refused.requests, 0)} bytes of content.`,
    '',
    `Memory while SAP stores large components (latency 0, signatures off, a multipart body made as it is sent): serve's peak RSS (VmHWM so far, so a row never shows less than the one above) from ${f(uploads.startPeakMb, 0)} MB at start. The first three through a serve with maxPartBytes ${f(uploads.maxPartBytes / (1 << 20), 0)} MB, the last through one whose maxPartBytes is a quarter of the component (for 1 GB, the shipped 256 MB).`,
    '',
    '| upload | MB sent | answer | seconds to the answer | MB/s | serve peak RSS MB |',
    '|---|---:|---:|---:|---:|---:|',
    ...uploads.steps.map(
      (s) =>
        `| ${s.what} | ${f(uploads.bytes / (1 << 20), 0)} | ${s.status} | ${f(s.seconds)} | ${s.status >= 400 ? '–' : f(uploads.bytes / (1 << 20) / s.seconds, 0)} | ${f(s.peakMb, 0)} |`,
    ),
    SERVER_END,
  ];
  return md;
}

/** The start-up section, between its own markers. */
const STARTUP_START = `<!-- start-up${ON_RUNTIME}: written by npm run bench -->`;
const STARTUP_END = `<!-- end of the start-up section${ON_RUNTIME} -->`;

function startupSection({ rows, loadAverage }: { rows: Startup[]; loadAverage: [number, number] }): string[] {
  const [node] = rows;
  const range = (r: Startup): string =>
    r.cpuRange === undefined ? '' : `${f(r.cpuRange[0], 0)}–${f(r.cpuRange[1], 0)}`;
  return [
    STARTUP_START,
    `## Start-up${ON_RUNTIME}`,
    '',
    `What each process of a per-minute CronJob pays before any work: the median of ${STARTUP_ROUNDS} processes each (and the lowest and highest CPU of them), with the CPU time and peak RSS the process reports at its exit (bench/usage.ts); "run, nothing to do" against the sandboxes with no latency, its configuration loaded, the mapping file read and one search per phase. All of them in this run, one kind after the other; the machine's load average over the last minute was ${f(loadAverage[0])} before the first and ${f(loadAverage[1])} after the last.`,
    '',
    '| process | wall ms | CPU ms | CPU ms, lowest–highest | peak RSS MB | CPU × node -e 0 |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.what} | ${f(r.wallMs, 0)} | ${f(r.cpuMs, 0)} | ${range(r)} | ${f(r.peakRssMb, 0)} | ${f(r.cpuMs / node.cpuMs)} |`,
    ),
    STARTUP_END,
  ];
}

const BAD_INPUT_START = '<!-- bad input: written by npm run bench -->';
const BAD_INPUT_END = '<!-- end of the bad-input section -->';

function badInputSection(rows: BadInput[]): string[] {
  const [yardstick] = rows;
  return [
    BAD_INPUT_START,
    '## Memory under bad input',
    '',
    "Peak RSS (VmHWM) of one `run` of the image's bundle given what a user's repository or a mistaken administrator would hand it, each against fresh sandboxes (latency 0); the target is 256 MB whatever the input, in a 512 MiB pod. What the run made of each input is its report's.",
    '',
    '| input | exit | job peak RSS MB | × the ordinary run | what the run did |',
    '|---|---:|---:|---:|---|',
    ...rows.map(
      (r) =>
        `| ${r.input} | ${r.exitCode} | ${f(r.peakRssMb, 0)} | ${f(r.peakRssMb / yardstick.peakRssMb)} | ${r.outcome.replace(/\|/g, '\\|')} |`,
    ),
    BAD_INPUT_END,
  ];
}

const SCALE_START = '<!-- scale-out: written by npm run bench -->';
const SCALE_END = '<!-- end of the scale-out section -->';

function scaleOutSection(rounds: Array<{ state: MachineState; rows: ScaleOut[] }>, backlog: number): string[] {
  const rows = byRow(
    rounds.map((round) => round.rows),
    (r) => String(r.processes),
  );
  return [
    SCALE_START,
    '## Scale-out with shards',
    '',
    `One backlog of ${backlog.toLocaleString('en')} new workflow documents, sent by 1, 2 and 4 runs side by side, each with its shard (\`run --task workflow --shard k/n\`), at the latencies above; each run in its own process, both sandboxes in the benchmark's. The speed-up is the single run's wall time over n runs' in the same round; requests per document count every repository request of all the runs. Each figure is the range over ${ROUNDS} rounds. ${statesLine(rounds.map((r) => r.state))}`,
    '',
    '| runs | seconds | speed-up | × n | repository requests per document | extra over one run | 409 answers |',
    '|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((row) => {
      const [r] = row;
      const e = row.map((x, k) => ({ one: rows[0][k], r: x }));
      return `| ${r.processes} | ${span(e, (x) => x.r.seconds)} | ${span(e, (x) => x.one.seconds / x.r.seconds)} | ${span(e, (x) => x.one.seconds / x.r.seconds / x.r.processes)} | ${span(e, (x) => x.r.repositoryPerDoc, 3)} | ${span(e, (x) => x.r.repositoryPerDoc - x.one.repositoryPerDoc, 3)} | ${span(e, (x) => x.r.conflicts, 0)} |`;
    }),
    SCALE_END,
  ];
}

const LINKS_START = `<!-- links${ON_RUNTIME}: written by npm run bench -->`;
const LINKS_END = `<!-- end of the links section${ON_RUNTIME} -->`;
/** The latencies the issue's users measure a sizing at: a repository at 20 ms, SAP at 100 ms. */
const LINKS_LATENCY = { repositoryMs: 20, erpMs: 100 };
/** The shipped configuration, and the large one README's "Sizing" documents. */
const SIZINGS: Sizing[] = [
  { name: 'shipped', maxConcurrentCalls: 8, maxConcurrentRequests: 8, batchSize: 50 },
  { name: 'large (README, Sizing)', maxConcurrentCalls: 64, maxConcurrentRequests: 64, batchSize: 100 },
];
const HISTORY = 10_000_000;

const hours = (seconds: number): string =>
  seconds < 48 * 3600 ? `${f(seconds / 3600, 1)} h` : `${f(seconds / 86_400, 1)} days`;

function linksSection(rates: LinkRate[]): string[] {
  const { erpMs, repositoryMs } = LINKS_LATENCY;
  const bound = (r: LinkRate): number => r.sizing.maxConcurrentCalls / (erpMs / 1000);
  const ours = rates.filter((r) => r.program === THIS);
  return [
    LINKS_START,
    `## Links per second, and ten million documents${ON_RUNTIME}`,
    '',
    `${rates[0].docs.toLocaleString('en')} new invoices per sizing, the repository at ${repositoryMs} ms and SAP at ${erpMs} ms: the intake alone (each invoice gets its archive-link folder), then the link task alone, each a run of its own process; then ${marginFrom(rates[0].docs).toLocaleString('en')} more the same way, so that the job's CPU per link is also had at the margin (the larger run's CPU less the smaller's, per extra link: start-up and first pages aside). Each sizing is measured in ${ROUNDS} rounds (with \`--baseline\`, an earlier build and this checkout alternate in each round), and each row gives the machine's state: \`node -e 0\`'s CPU just before, and the load average when the link run ended. The bound is what the calls allow, calls ÷ ${erpMs} ms: a slot is held for its call alone, as a link's documents are claimed while they wait for it. The repository side (requests ÷ ${repositoryMs} ms ÷ requests per link) is above it in both. The bare pair (bench/floor.ts), measured just before each row: a bare undici client in its own process against a bare \`node:http\` server at SAP's latency, as many requests in flight as the sizing's calls; its ÷ bound is what this machine allows any client at that moment, and its CPU per request (warmed up) what a request costs a client that does nothing else, at that rate, here. A link is at least three requests (its claim and its outcome to the repository, its call to SAP), which the job sends at three times the bare client's rate: more requests a wake-up, so less CPU each.`,
    '',
    '| sizing | program | calls | requests | batchSize | links/s | ÷ (calls ÷ SAP latency) | bare pair ÷ bound | repository requests per link | job CPU ms per link, whole run / at the margin | bare client CPU ms per request | node -e 0 CPU ms | load average | job peak RSS MB | intake docs/s |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rates.map(
      (r) =>
        `| ${r.sizing.name} | ${r.program} | ${r.sizing.maxConcurrentCalls} | ${r.sizing.maxConcurrentRequests} | ${r.sizing.batchSize} | ${f(r.linkPerSecond, 0)} | ${f(r.linkPerSecond / bound(r))} | ${f(bareRatio(r.bare))} | ${f(r.repositoryPerDoc, 3)} | ${f(r.jobCpuMsPerDoc, 2)} / ${f(r.marginCpuMsPerDoc, 2)} | ${f(r.bare.cpuMsPerRequest, 3)} | ${f(r.nodeCpuMs, 0)} | ${f(r.loadAverage)} | ${f(r.peakRssMb, 0)} | ${f(r.intakePerSecond, 0)} |`,
    ),
    '',
    `Over the rounds, lowest to highest:`,
    '',
    '| sizing | program | links/s | ÷ (calls ÷ SAP latency) | bare pair ÷ bound | job CPU ms per link at the margin | bare client CPU ms per request | intake docs/s | whole run with folders ÷ slower phase | whole run flat ÷ link alone | node -e 0 CPU ms | load average |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...groups(rates).map(
      (g) =>
        `| ${g[0].sizing.name} | ${g[0].program} | ${span(g, (r) => r.linkPerSecond, 0)} | ${span(g, (r) => r.linkPerSecond / bound(r))} | ${span(g, (r) => bareRatio(r.bare))} | ${span(g, (r) => r.marginCpuMsPerDoc)} | ${span(g, (r) => r.bare.cpuMsPerRequest, 3)} | ${span(g, (r) => r.intakePerSecond, 0)} | ${span(g, (r) => r.whole.folders.perSecond / Math.min(r.intakePerSecond, r.linkPerSecond))} | ${span(g, (r) => r.whole.flat.perSecond / r.linkPerSecond)} | ${span(g, (r) => r.nodeCpuMs, 0)} | ${span(g, (r) => r.loadAverage)} |`,
    ),
    ...beforeAfter(rates),
    '',
    `Whole runs: ${rates[0].whole.flat.docs.toLocaleString('en')} new invoices labelled and linked by one \`run --task link\`, as a scheduled run over a backlog does, with archive-link folders (on the sandboxes above, after the rounds' runs) and flat (the mapping's invoices without \`createParentALFolder\`, on sandboxes of their own). Invoices a second over the run's own span, from its report's start to its end (the mapping file read, labelling and linking; the process's start-up aside, as the phases alone above are timed by their own durations). "÷ slower phase" divides it by the slower of the intake alone and the link task alone above (same round); flat, by the link task alone (the same calls and, per link, the same repository writes; a flat intake alone is faster than either). Repository requests per invoice count every request of the run, searches and the mapping file included. "Machine CPU" is the CPU the job and both sandboxes used over the run's process (spawned to exit), as a share of all ${availableParallelism()} cores: near 1, the machine set the pace, not the requests or the calls. "Sandboxes' thread" is the CPU of the benchmark's main thread, where both sandboxes answer every request, as a share of one core over the run: near 1, the sandboxes set the pace, not the job.`,
    '',
    "| sizing | program | with folders: invoices/s | ÷ slower phase | repository requests per invoice | machine CPU | sandboxes' thread | flat: invoices/s | ÷ link alone | repository requests per invoice | machine CPU | sandboxes' thread |",
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rates.map(
      ({ sizing, program, whole, intakePerSecond, linkPerSecond }) =>
        `| ${sizing.name} | ${program} | ${f(whole.folders.perSecond, 0)} | ${f(whole.folders.perSecond / Math.min(intakePerSecond, linkPerSecond))} | ${f(whole.folders.repositoryPerDoc, 3)} | ${f(whole.folders.machineCpuShare)} | ${f(whole.folders.sandboxThreadShare)} | ${f(whole.flat.perSecond, 0)} | ${f(whole.flat.perSecond / linkPerSecond)} | ${f(whole.flat.repositoryPerDoc, 3)} | ${f(whole.flat.machineCpuShare)} | ${f(whole.flat.sandboxThreadShare)} |`,
    ),
    '',
    'Repository requests by kind, per invoice, in the last round:',
    '',
    ...groups(rates).flatMap((g) => {
      const { sizing, program, whole } = g[g.length - 1];
      return [
        `- ${sizing.name}, ${program}, with folders: ${whole.folders.byKind}`,
        `- ${sizing.name}, ${program}, flat: ${whole.flat.byKind}`,
      ];
    }),
    '',
    `Projected time for a history of ${HISTORY.toLocaleString('en')} documents on n pods with shards, each as fast as one measured here (the range over the rounds): linking alone, the time SAP is busy with the connector, ${HISTORY.toLocaleString('en')} ÷ (n × links/s); labelling and linking one after the other, ${HISTORY.toLocaleString('en')} × (1 ÷ intake docs/s + 1 ÷ links/s) ÷ n, an upper bound, as a run hands what its intake labels to the sending at once. It assumes a repository and an SAP system that keep their latency under n times the load (n × requests in flight; n × calls, which SAP gives the connector in dialog work processes: agree them with the SAP team) and pods on nodes of their own (the scale-out section measures what one 2-core machine shared by all pods gives).`,
    '',
    '| sizing | linking, 4 pods | labelling then linking, 1 pod | 4 pods | 16 pods |',
    '|---|---:|---:|---:|---:|',
    ...groups(ours).map((g) => {
      const linking = (n: number) => (r: LinkRate) => HISTORY / r.linkPerSecond / n;
      const both = (n: number) => (r: LinkRate) => (HISTORY * (1 / r.intakePerSecond + 1 / r.linkPerSecond)) / n;
      return `| ${g[0].sizing.name} | ${hoursSpan(g, linking(4))} | ${hoursSpan(g, both(1))} | ${hoursSpan(g, both(4))} | ${hoursSpan(g, both(16))} |`;
    }),
    LINKS_END,
  ];
}

/** The rates by sizing and program, in the order first met. */
function groups(rates: LinkRate[]): LinkRate[][] {
  const byKey = new Map<string, LinkRate[]>();
  for (const r of rates) {
    const key = `${r.sizing.name}\u0000${r.program}`;
    byKey.set(key, [...(byKey.get(key) ?? []), r]);
  }
  return [...byKey.values()];
}

/** A duration's range over rates, in hours or days: the fastest round first. */
function hoursSpan(rates: LinkRate[], seconds: (r: LinkRate) => number): string {
  const values = rates.map(seconds);
  const [low, high] = [hours(Math.min(...values)), hours(Math.max(...values))];
  return low === high ? low : `${low} – ${high}`;
}

const THIS = 'this checkout';

/** With a baseline measured in the same run: this checkout's links a second ÷ the baseline's, per sizing and round. */
function beforeAfter(rates: LinkRate[]): string[] {
  const pairs = rates.flatMap((r, i) => {
    const before = rates[i - 1];
    return r.program === THIS && before !== undefined && before.program !== THIS && before.sizing === r.sizing
      ? [[before, r]]
      : [];
  });
  if (pairs.length === 0) return [];
  return [
    '',
    `Before and after: the earlier build (${pairs[0][0].program}) and this checkout one after the other on the same sandboxes, in this run, each pair its own round:`,
    '',
    '| sizing | before links/s | after links/s | after ÷ before | before repository requests per link | after | before job CPU ms per link at the margin | after | after ÷ before |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...pairs.map(
      ([before, after]) =>
        `| ${after.sizing.name} | ${f(before.linkPerSecond, 0)} | ${f(after.linkPerSecond, 0)} | ${f(after.linkPerSecond / before.linkPerSecond)} | ${f(before.repositoryPerDoc, 3)} | ${f(after.repositoryPerDoc, 3)} | ${f(before.marginCpuMsPerDoc)} | ${f(after.marginCpuMsPerDoc)} | ${f(after.marginCpuMsPerDoc / before.marginCpuMsPerDoc)} |`,
    ),
  ];
}

const FIRST_START = '<!-- first link: written by npm run bench -->';
const FIRST_END = '<!-- end of the first-link section -->';

function firstLinkSection(rounds: FirstLink[][]): string[] {
  return [
    FIRST_START,
    '## Time to the first document in SAP',
    '',
    `A backlog of new workflow documents, the repository at 20 ms and SAP at 100 ms, the shipped defaults (intakeRoundSize 1,000): one \`run --task workflow\` stopped by its \`--max-duration\` as a scheduled run is. Seconds from the run's start (its process spawned) to SAP's first work item; what it had labelled and sent when it stopped. Each figure is the range over ${ROUNDS} rounds.`,
    '',
    '| backlog | first work item after s | labelled | sent | run stopped after |',
    '|---:|---:|---:|---:|---:|',
    ...byRow(rounds, (r) => String(r.backlog)).map(
      (row) =>
        `| ${row[0].backlog.toLocaleString('en')} | ${span(row, (x) => x.firstSeconds)} | ${span(row, (x) => x.labelled, 0)} | ${span(row, (x) => x.sent, 0)} | ${row[0].stoppedAfter} |`,
    ),
    FIRST_END,
  ];
}

/** BENCHMARKS.md with a section (its first and last lines its markers) replaced, or added before the notes. */
function withSection(text: string, section: string[]): string {
  const [first, last] = [section[0], section[section.length - 1]];
  const start = text.indexOf(first);
  const end = text.indexOf(last);
  if (start >= 0 && end > start) return `${text.slice(0, start)}${section.join('\n')}${text.slice(end + last.length)}`;
  const notes = text.indexOf(NOTES_MARKER);
  const at = notes < 0 ? text.length : notes;
  return `${text.slice(0, at)}${section.join('\n')}\n\n${text.slice(at)}`;
}

/**
 * Links per second per sizing, ROUNDS rounds; with --baseline, the baseline's program and
 * this checkout's one after the other in each round, so both meet the machine as it is then.
 */
async function linkRates(log: (line: string) => void): Promise<LinkRate[]> {
  const docs = 5_000 / scale;
  const rounds = ROUNDS;
  const programs = [
    ...(values.baseline === undefined
      ? []
      : [{ name: `before: ${commitOf(values.baseline)}`, entry: join(values.baseline, 'bin', 'connect2erp.js') }]),
    { name: THIS },
  ];
  const rates = [];
  for (const sizing of SIZINGS)
    for (let round = 0; round < rounds; round++)
      for (const program of programs) {
        log(`links per second, ${sizing.name} sizing, ${docs} invoices, ${program.name}`);
        rates.push(await linksBench(docs, LINKS_LATENCY, sizing, program));
      }
  return rates;
}

/** The commit a checkout is at (its short hash), or its folder's name when git cannot tell. */
function commitOf(dir: string): string {
  try {
    return execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return basename(dir);
  }
}

/** What one round of the head of BENCHMARKS.md measured: the throughput tables, memory and repository size. */
interface HeadRound {
  state: MachineState;
  phases: PhaseRow[];
  swept: PhaseRow[];
  memories: Array<Awaited<ReturnType<typeof memory>>>;
  alone: Awaited<ReturnType<typeof history>>;
  beside: Awaited<ReturnType<typeof history>>;
}

async function headRound(log: (line: string) => void, round: number): Promise<HeadRound> {
  const state = await machineState();
  const phases: PhaseRow[] = [];
  for (const n of SIZES.throughput) {
    log(`round ${round}: throughput, ${n} documents per use case`);
    phases.push(...(await throughput(n, latency)));
  }
  const slower = { ...latency, repositoryMs: SWEEP_REPOSITORY_MS };
  log(`round ${round}: repository-bound phases at ${slower.repositoryMs} ms, ${SIZES.throughput[1]} documents`);
  const swept = await throughput(SIZES.throughput[1], slower, true);
  const memories = [];
  for (const n of SIZES.memory) {
    log(`round ${round}: memory, ${n} documents`);
    memories.push(await memory(n));
  }
  log(`round ${round}: repository size, ${SIZES.fresh} new documents alone and beside ${SIZES.history} processed ones`);
  return { state, phases, swept, memories, alone: await history(0), beside: await history(SIZES.history) };
}

/**
 * The head of BENCHMARKS.md, everything above the content server's section: ROUNDS rounds, each
 * figure the range over them.
 */
async function headSection(log: (line: string) => void, started: number): Promise<string[]> {
  const rounds: HeadRound[] = [];
  for (let round = 1; round <= ROUNDS; round++) rounds.push(await headRound(log, round));
  const [first] = rounds;
  const command = `npm run bench --${values.quick ? ' --quick' : ''} --repository-latency ${latency.repositoryMs} --erp-latency ${latency.erpMs}`;
  const md: string[] = [];
  md.push(
    '# Benchmarks',
    '',
    `Reproduce with \`${command}\` (${values.quick ? 'reduced sizes, ' : ''}about ${Math.ceil((Date.now() - started) / 60_000)} minutes on the machine below${values['throughput-only'] ? ' for this part alone, with `--throughput-only`' : ''}).`,
  );
  md.push(
    `Measured ${new Date().toISOString().slice(0, 10)}, Node.js ${process.version}, ${(await import('node:os')).cpus().length} cores; the job runs in its own process, both sandboxes in the benchmark's.`,
  );
  md.push(
    `Injected latency: repository ${latency.repositoryMs} ms, ERP ${latency.erpMs} ms per request. In flight at most: ${IN_FLIGHT.repository} repository requests (storage.yaml \`maxConcurrentRequests\`), ${IN_FLIGHT.erp} ERP calls (erpHttp.yaml \`maxConcurrentCalls\`); shipped configuration otherwise.`,
  );
  md.push(
    '',
    `Every figure down to the content server's section is the range over ${ROUNDS} rounds of the same measurements, lowest to highest (one figure when they print the same). ${statesLine(rounds.map((r) => r.state))}`,
  );
  md.push('', '## Requests per document and throughput', '');
  const real = rounds.map((r) => r.phases[r.phases.length - 1].real);
  md.push(
    'Requests per document count everything the phase sent (searches, the mapping file, CSRF fetches included); the lower bound in brackets is argued below ("How the benchmark works"). Seconds are the phase\'s own, from the run report (`durationMs`).',
  );
  md.push(
    `The bound is what the in-flight limits allow at those requests per document: min(repository in flight ÷ latency ÷ repository requests per document, ERP in flight ÷ latency ÷ ERP calls per document). "ratio" uses the injected latencies; "ratio, real latency" uses what the sandboxes really answer a bare client in the benchmark's process with (${span(real, (r) => r.repositoryMs)} ms and ${span(real, (r) => r.erpMs)} ms here: the sandbox answers after the injected latency on average, the client's and the loopback's own work come on top). "bare pair's ratio" is what this machine allows at all on the side that sets the bound: a bare undici client in its own process and a bare node:http server with the sandbox's latency injection, nothing behind either, at the same latency and in-flight limit (bench/floor.ts); the job cannot do better than it. "ms per request in the sandbox" is, on the same side, the mean time from a request's arrival at the sandbox to its answer, under the phase's load: when it is the injected latency, the rest of each round trip is spent in the job's process and on the loopback. CPU ms per request: the job's process (its start-up, measured by a run with nothing to do, taken off; – when a small phase used less than that, within the start-up's run-to-run spread) and both sandboxes; sandbox CPU is the share of one core the sandboxes used over the phase.`,
    '',
  );
  md.push(...phaseTable(rounds.map((r) => r.phases)));
  md.push('', `### The repository-bound phases at ${SWEEP_REPOSITORY_MS} ms`, '');
  md.push(
    `The same phases with the repository's latency at ${SWEEP_REPOSITORY_MS} ms (ERP unchanged): a quarter of the requests per second, so the CPU of the job and of the sandboxes is no longer what runs out on this machine.`,
    '',
  );
  md.push(...phaseTable(rounds.map((r) => r.swept)));
  md.push('', 'Requests by kind, per document, in the first round:', '');
  for (const p of first.phases) md.push(`- ${p.phase}, ${p.docs}: ${p.detail}`);
  md.push(
    '',
    '## Memory',
    '',
    "Peak RSS (Linux VmHWM) of one whole run (mapping file, intake, all tasks) over new workflow documents, latency 0. The same runs show the sandboxes' own overhead: their CPU per request, against the latency they stand in for.",
    '',
  );
  md.push(
    '| documents | job peak RSS MB | × the smallest | wall seconds | docs/s | sandbox CPU | sandbox CPU ms per request | bare request to the repository / ERP sandbox, ms |',
  );
  md.push('|---:|---:|---:|---:|---:|---:|---:|---|');
  const memories = byRow(
    rounds.map((r) => r.memories),
    (m) => String(m.n),
  );
  for (const row of memories) {
    const [m] = row;
    const each = row.map((x, k) => ({ m: x, smallest: memories[0][k] }));
    md.push(
      `| ${m.n} | ${span(each, (e) => e.m.peakRssMb, 0)} | ${span(each, (e) => e.m.peakRssMb / e.smallest.peakRssMb)} | ${span(each, (e) => e.m.seconds)} | ${span(each, (e) => e.m.perSecond, 0)} | ${span(each, (e) => e.m.sandboxCpu)} | ${span(each, (e) => e.m.sandboxMsPerRequest, 3)} | ${span(each, (e) => e.m.overhead.repositoryMs, 3)} / ${span(each, (e) => e.m.overhead.erpMs, 3)} |`,
    );
  }
  md.push('', '## Cost with repository size', '');
  md.push(
    `One whole run over ${SIZES.fresh} new documents (split over the three use cases), from run start to report; injected latency as above.`,
    '',
  );
  md.push('| repository holds | seconds | repository requests | × alone |', '|---|---:|---:|---:|');
  md.push(
    `| ${SIZES.fresh} new only | ${span(rounds, (r) => r.alone.seconds)} | ${span(rounds, (r) => r.alone.repositoryRequests, 0)} | 1.00 |`,
    `| ${SIZES.fresh} new + ${first.beside.processed} processed | ${span(rounds, (r) => r.beside.seconds)} | ${span(rounds, (r) => r.beside.repositoryRequests, 0)} | ${span(rounds, (r) => r.beside.seconds / r.alone.seconds)} |`,
  );
  return md;
}

async function main(): Promise<void> {
  const started = Date.now();
  const log = (line: string): void => console.log(`[${((Date.now() - started) / 1000).toFixed(0)} s] ${line}`);
  /** The sections a --…-only flag can run alone: each replaces its own in BENCHMARKS.md, the rest kept. */
  const separate: Array<[boolean | undefined, () => Promise<string[]>]> = [
    [
      values['startup-only'],
      async () => {
        log('start-up: node -e 0, --version and a run with nothing to do');
        const before = loadavg()[0];
        const rows = await startupBench();
        return startupSection({ rows, loadAverage: [before, loadavg()[0]] });
      },
    ],
    [
      values['first-link-only'],
      async () => {
        const rounds: FirstLink[][] = [];
        for (let round = 1; round <= ROUNDS; round++) {
          const rows = [];
          for (const backlog of [10_000 / scale, 100_000 / scale]) {
            log(`round ${round}: time to the first work item, backlog ${backlog}`);
            rows.push(await firstLinkBench(backlog));
          }
          rounds.push(rows);
        }
        return firstLinkSection(rounds);
      },
    ],
    [
      values['scale-out-only'],
      async () => {
        const backlog = 10_000 / scale;
        const rounds: Array<{ state: MachineState; rows: ScaleOut[] }> = [];
        for (let round = 1; round <= ROUNDS; round++) {
          log(`round ${round}: scale-out, 1, 2 and 4 runs with shards on ${backlog} documents`);
          const state = await machineState();
          rounds.push({ state, rows: await scaleOutBench(backlog, latency) });
        }
        return scaleOutSection(rounds, backlog);
      },
    ],
    [values['links-only'], async () => linksSection(await linkRates(log))],
    [values['bad-input-only'], async () => badInputSection(await badInputBench(BUNDLE, log))],
  ];
  const asked = separate.find(([flag]) => flag === true);
  if (asked !== undefined) {
    const section = await asked[1]();
    writeFileSync(values.out, withSection(readFileSync(values.out, 'utf8'), section));
    return log(`${section[1]} written to ${values.out}`);
  }
  if (values['throughput-only']) {
    const text = readFileSync(values.out, 'utf8');
    const at = text.indexOf(SERVER_START);
    if (at < 0) throw new Error(`${values.out} has no content server section to keep: run the whole benchmark`);
    writeFileSync(values.out, `${(await headSection(log, started)).join('\n')}\n\n${text.slice(at)}`);
    return log(`throughput, memory and repository size written to ${values.out}`);
  }
  log('content server: get through serve against a direct download, and a large component');
  const server = contentServerSection(
    await contentServerBench([latency.repositoryMs, SWEEP_REPOSITORY_MS], values.quick),
  );
  if (values['content-server-only']) {
    writeFileSync(values.out, withSection(readFileSync(values.out, 'utf8'), server));
    return log(`content server section written to ${values.out}`);
  }
  const [startup, firstLink, scaleOut, links, badInput] = [
    await separate[0][1](),
    await separate[1][1](),
    await separate[2][1](),
    await separate[3][1](),
    await separate[4][1](),
  ];
  const head = await headSection(log, started);
  const md = [...head];
  md.push('', ...server, '', ...startup, '', ...links, '', ...firstLink, '', ...scaleOut, '', ...badInput);
  writeFileSync(values.out, `${md.join('\n')}\n${keptNotes(values.out)}`);
  log(`written to ${values.out}`);
}

/** The hand-written notes below NOTES_MARKER in the file a run replaces: what the figures mean and what was tried. */
const NOTES_MARKER = '<!-- notes: kept as they are by npm run bench -->';

function keptNotes(file: string): string {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const at = text.indexOf(NOTES_MARKER);
  return at < 0 ? '' : `\n${text.slice(at)}`;
}

await main();
