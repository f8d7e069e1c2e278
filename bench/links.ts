import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { floor, type Floor } from './floor.js';
import { cpuMsOf } from './proc-cpu.js';
import { BenchSandboxes, benchMapping, reportSpanMs, total } from './sandboxes.js';
import { nodeCpuMs } from './startup.js';

/** The settings a sizing changes: erpHttp.yaml's calls, storage.yaml's requests, the link task's pages. */
export interface Sizing {
  name: string;
  maxConcurrentCalls: number;
  maxConcurrentRequests: number;
  batchSize: number;
}

export interface LinkRate {
  sizing: Sizing;
  /** Which program ran: this checkout, or the baseline given with --baseline. */
  program: string;
  docs: number;
  /** Invoices labelled a second, archive-link folders included (the intake alone). */
  intakePerSecond: number;
  /** Documents linked a second (the link task alone), and its seconds. */
  linkPerSecond: number;
  linkSeconds: number;
  /** Repository requests per document of the link task. */
  repositoryPerDoc: number;
  /** The job's CPU ms per linked document (its start-up included) and its peak RSS. */
  jobCpuMsPerDoc: number;
  peakRssMb: number;
  /** The job's CPU ms per link at the margin: the link run's CPU less a run of a fifth of the documents', per extra link. */
  marginCpuMsPerDoc: number;
  /** `node -e 0`'s CPU ms on the machine as it was, just before (the median of three). */
  nodeCpuMs: number;
  /**
   * A bare undici client against a bare server at SAP's latency and the sizing's calls, just
   * before: what this machine allows at all, and the CPU a request costs a client doing nothing else.
   */
  bare: Floor;
  /** The machine's load average over the last minute when the link run ended. */
  loadAverage: number;
  /** New invoices labelled and linked by one run, with archive-link folders, and flat (no folder). */
  whole: { folders: WholeRun; flat: WholeRun };
}

/** One run that labels new invoices and links them: what a scheduled run over a backlog does. */
interface WholeRun {
  docs: number;
  /**
   * Invoices labelled and linked a second, over the run's own span (its report's start to end, the
   * process's start-up aside), as the phases alone are timed by their own durations.
   */
  perSecond: number;
  /** Repository requests per invoice, all kinds, and by kind. */
  repositoryPerDoc: number;
  byKind: string;
  /**
   * The CPU the job and both sandboxes used over the run's process, as a share of all the
   * machine's cores: near 1, the machine, not the requests or the calls, set the pace.
   */
  machineCpuShare: number;
  /**
   * The CPU of the benchmark's main thread, where both sandboxes answer, as a share of one core over
   * the run: near 1, the sandboxes, not the job, set the pace.
   */
  sandboxThreadShare: number;
}

/** The smaller link run the CPU per link at the margin is taken against: a fifth of the documents (1,000 of 5,000). */
export const marginFrom = (docs: number): number => docs / 5;

/** Rewrites one `key: number` line of a YAML file of the bench's configuration. */
function setNumber(file: string, key: string, value: number): void {
  const text = readFileSync(file, 'utf8');
  const line = new RegExp(`^(\\s*${key}:) \\d+`, 'm');
  if (!line.test(text)) throw new Error(`${file} has no ${key}`);
  writeFileSync(file, text.replace(line, `$1 ${value}`));
}

/**
 * `docs` new invoices at the given latencies under one sizing: the intake alone (each gets its
 * archive-link folder), then the link task alone, each a run of its own process, as scheduled
 * runs are, of `program` (this checkout's, or an earlier build's entry). Checks that every invoice
 * is linked once. Then a fifth as many invoices more the same way, so that the CPU per link is had at
 * the margin, start-up and first pages aside.
 */
export async function linksBench(
  docs: number,
  latency: { repositoryMs: number; erpMs: number },
  sizing: Sizing,
  program: { name: string; entry?: string } = { name: 'this checkout' },
): Promise<LinkRate> {
  const sandboxes = await sized(latency, sizing);
  try {
    const nodeMs = await nodeCpuMs();
    const bare = await floor(latency.erpMs, sizing.maxConcurrentCalls);
    const run = await linkRun(sandboxes, docs, program.entry);
    const loadAverage = loadavg()[0];
    const margin = await linkRun(sandboxes, marginFrom(docs), program.entry);
    const folders = await wholeRun(sandboxes, docs, program.entry);
    const { durationMs } = run.report.tasks.link;
    return {
      sizing,
      program: program.name,
      docs,
      intakePerSecond: docs / (run.intakeMs / 1000),
      linkPerSecond: docs / (durationMs / 1000),
      linkSeconds: durationMs / 1000,
      repositoryPerDoc: total(run.repository) / docs,
      jobCpuMsPerDoc: run.cpuMs / docs,
      peakRssMb: run.peakRssKb / 1024,
      marginCpuMsPerDoc: (run.cpuMs - margin.cpuMs) / (docs - marginFrom(docs)),
      nodeCpuMs: nodeMs,
      bare,
      loadAverage,
      whole: { folders, flat: await flatRun(latency, sizing, docs, program.entry) },
    };
  } finally {
    await sandboxes.stop();
  }
}

/** Sandboxes at the latencies, the job configured with the sizing, warmed up. */
async function sized(
  latency: { repositoryMs: number; erpMs: number },
  sizing: Sizing,
  mapping?: string,
): Promise<BenchSandboxes> {
  const sandboxes = await BenchSandboxes.start(latency, mapping);
  setNumber(sandboxes.file('config/erpHttp.yaml'), 'maxConcurrentCalls', sizing.maxConcurrentCalls);
  setNumber(sandboxes.file('config/storage.yaml'), 'maxConcurrentRequests', sizing.maxConcurrentRequests);
  setNumber(sandboxes.file('jobs/link.yaml'), 'batchSize', sizing.batchSize);
  await sandboxes.warmUp();
  return sandboxes;
}

/** A whole run over invoices linked without archive-link folders, on sandboxes of their own. */
async function flatRun(
  latency: { repositoryMs: number; erpMs: number },
  sizing: Sizing,
  docs: number,
  entry: string | undefined,
): Promise<WholeRun> {
  const sandboxes = await sized(latency, sizing, benchMapping({ flatInvoices: true }));
  try {
    return await wholeRun(sandboxes, docs, entry);
  } finally {
    await sandboxes.stop();
  }
}

/** `docs` new invoices labelled and linked by one `run --task link`. */
async function wholeRun(sandboxes: BenchSandboxes, docs: number, entry: string | undefined): Promise<WholeRun> {
  const linkedBefore = sandboxes.erp.tables.links.length;
  sandboxes.addNew('link', docs);
  const sandboxCpu = process.cpuUsage();
  // The main thread alone: the one where both sandboxes answer.
  const threadBefore = cpuMsOf(process.pid, process.pid);
  const run = await sandboxes.run({ task: 'link', entry });
  const { user, system } = process.cpuUsage(sandboxCpu);
  const threadMs = cpuMsOf(process.pid, process.pid) - threadBefore;
  const links = sandboxes.erp.tables.links.length - linkedBefore;
  if (run.report.tasks.link.counts.DONE !== docs || links !== docs)
    throw new Error(`whole run: ${JSON.stringify(run.report.tasks.link.counts)}, ${links} links for ${docs} invoices`);
  const byKind = [...run.repository]
    .sort((a, b) => b[1] - a[1])
    .map(([kind, n]) => `${kind} ${(n / docs).toFixed(3)}`)
    .join(', ');
  return {
    docs,
    perSecond: docs / (reportSpanMs(run.report) / 1000),
    repositoryPerDoc: total(run.repository) / docs,
    byKind,
    machineCpuShare: (run.cpuMs + (user + system) / 1000) / (availableParallelism() * run.wallMs),
    sandboxThreadShare: threadMs / run.wallMs,
  };
}

/** `docs` new invoices labelled by an intake-only run, then linked by a link-only run: that run, and the intake's time. */
async function linkRun(sandboxes: BenchSandboxes, docs: number, entry: string | undefined) {
  const linkedBefore = sandboxes.erp.tables.links.length;
  sandboxes.addNew('link', docs);
  const intake = await sandboxes.run({ intakeOnly: true, entry });
  if (intake.report.intake.counts.ready !== docs)
    throw new Error(`intake: ${JSON.stringify(intake.report.intake.counts)}`);
  const run = await sandboxes.run({ task: 'link', entry });
  const { counts } = run.report.tasks.link;
  const links = sandboxes.erp.tables.links.length - linkedBefore;
  if (counts.DONE !== docs || links !== docs)
    throw new Error(`link: ${JSON.stringify(counts)}, ${links} links in SAP for ${docs} invoices`);
  return { ...run, intakeMs: intake.report.intake.durationMs };
}
