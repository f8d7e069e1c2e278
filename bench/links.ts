import { readFileSync, writeFileSync } from 'node:fs';
import { BenchSandboxes, total } from './sandboxes.js';

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
}

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
 * is linked once.
 */
export async function linksBench(
  docs: number,
  latency: { repositoryMs: number; erpMs: number },
  sizing: Sizing,
  program: { name: string; entry?: string } = { name: 'this checkout' },
): Promise<LinkRate> {
  const sandboxes = await BenchSandboxes.start(latency);
  try {
    setNumber(sandboxes.file('config/erpHttp.yaml'), 'maxConcurrentCalls', sizing.maxConcurrentCalls);
    setNumber(sandboxes.file('config/storage.yaml'), 'maxConcurrentRequests', sizing.maxConcurrentRequests);
    setNumber(sandboxes.file('jobs/link.yaml'), 'batchSize', sizing.batchSize);
    await sandboxes.warmUp();
    sandboxes.addNew('link', docs);
    const intake = await sandboxes.run({ intakeOnly: true, entry: program.entry });
    if (intake.report.intake.counts.ready !== docs)
      throw new Error(`intake: ${JSON.stringify(intake.report.intake.counts)}`);
    const run = await sandboxes.run({ task: 'link', entry: program.entry });
    const { counts, durationMs } = run.report.tasks.link;
    const links = sandboxes.erp.tables.links.length;
    if (counts.DONE !== docs || links !== docs)
      throw new Error(`link: ${JSON.stringify(counts)}, ${links} links in SAP for ${docs} invoices`);
    return {
      sizing,
      program: program.name,
      docs,
      intakePerSecond: docs / (intake.report.intake.durationMs / 1000),
      linkPerSecond: docs / (durationMs / 1000),
      linkSeconds: durationMs / 1000,
      repositoryPerDoc: total(run.repository) / docs,
      jobCpuMsPerDoc: run.cpuMs / docs,
      peakRssMb: run.peakRssKb / 1024,
    };
  } finally {
    await sandboxes.stop();
  }
}
