import { Gauge, Pushgateway, Registry } from 'prom-client';
import type { RunReport } from './report.js';

/** How long a push may take: the run is over, and monitoring must not hold the pod. */
export const PUSH_TIMEOUT_MS = 10_000;

/**
 * A run's outcome as Prometheus gauges, for a Pushgateway (a batch job is gone before any scrape):
 * documents per phase, task and result, each phase's duration, the SAP systems (or a task's lane
 * of one) that stopped, the exit code and when the run finished. Names follow Prometheus'
 * conventions (base units, `_seconds`).
 */
function runMetrics(report: RunReport): Registry {
  const registry = new Registry();
  const registers = [registry];
  const documents = new Gauge({
    name: 'connect2erp_documents',
    help: 'Documents of the last run, per phase, task and result',
    labelNames: ['phase', 'task', 'result'],
    registers,
  });
  const duration = new Gauge({
    name: 'connect2erp_phase_duration_seconds',
    help: 'How long each phase of the last run took',
    labelNames: ['phase', 'task', 'state'],
    registers,
  });
  for (const [result, count] of Object.entries(report.intake.counts))
    documents.set({ phase: 'intake', task: '', result }, count);
  duration.set({ phase: 'intake', task: '', state: report.intake.state }, report.intake.durationMs / 1000);
  for (const [task, summary] of Object.entries(report.tasks)) {
    for (const [result, count] of Object.entries(summary.counts)) documents.set({ phase: 'task', task, result }, count);
    duration.set({ phase: 'task', task, state: summary.state }, summary.durationMs / 1000);
  }
  const outages = new Gauge({
    name: 'connect2erp_erp_outage',
    help: "An SAP system's connection (task empty) or one task's calls to it stopped in the last run: 1, by kind (unavailable, refused)",
    labelNames: ['system', 'transport', 'task', 'kind'],
    registers,
  });
  for (const outage of report.outages)
    outages.set({ system: outage.system, transport: outage.transport, task: outage.task ?? '', kind: outage.kind }, 1);
  new Gauge({ name: 'connect2erp_run_exit_code', help: 'Exit code of the last run (README)', registers }).set(
    report.exitCode,
  );
  new Gauge({
    name: 'connect2erp_run_finished_timestamp_seconds',
    help: 'When the last run finished, in seconds since the epoch',
    registers,
  }).set(Date.parse(report.finishedAt as string) / 1000);
  new Gauge({ name: 'connect2erp_run_dry_run', help: '1 when the last run was a dry run', registers }).set(
    report.dryRun ? 1 : 0,
  );
  return registry;
}

/**
 * Replaces the metrics of this job's group on the Pushgateway at `url` (PUT): the group is the job
 * `connect2erp` and `run`, the task the run was limited to (`all` without --task), so the CronJobs
 * of the three tasks keep one group each. (`task` is the metrics' own label: a grouping label of
 * the same name would override it.)
 */
export async function pushMetrics(report: RunReport, url: string, task: string | undefined): Promise<void> {
  const gateway = new Pushgateway(url, { timeout: PUSH_TIMEOUT_MS }, runMetrics(report));
  await gateway.push({ jobName: 'connect2erp', groupings: { run: task ?? 'all' } });
}
