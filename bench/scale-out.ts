import { BenchSandboxes, total } from './sandboxes.js';

export interface ScaleOut {
  processes: number;
  seconds: number;
  done: number;
  repositoryPerDoc: number;
  conflicts: number;
}

/**
 * One backlog of `backlog` new workflow documents per row, sent by 1, 2 and 4 runs side by side,
 * each with its shard (`--shard k/n`), at the benchmark's latencies: wall time to the end of the
 * last, documents done, repository requests per document and the 409s the runs met.
 */
export async function scaleOutBench(
  backlog: number,
  latency: { repositoryMs: number; erpMs: number },
): Promise<ScaleOut[]> {
  const rows: ScaleOut[] = [];
  for (const processes of [1, 2, 4]) {
    const sandboxes = await BenchSandboxes.start(latency);
    try {
      await sandboxes.warmUp();
      sandboxes.addNew('workflow', backlog);
      const run = await sandboxes.runShards(processes, 'workflow');
      const done = run.reports.reduce((sum, r) => sum + (r.tasks.workflow.counts.DONE ?? 0), 0);
      if (done !== backlog) throw new Error(`${processes} shards: ${done} of ${backlog} done`);
      rows.push({
        processes,
        seconds: run.wallMs / 1000,
        done,
        repositoryPerDoc: total(run.repository) / backlog,
        conflicts: run.conflicts,
      });
    } finally {
      await sandboxes.stop();
    }
  }
  return rows;
}
