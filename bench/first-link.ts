import { BenchSandboxes } from './sandboxes.js';

export interface FirstLink {
  backlog: number;
  /** From the run's start (its process spawned) to SAP's first work item. */
  firstSeconds: number;
  /** Documents labelled and sent by the time the run stopped. */
  labelled: number;
  sent: number;
  stoppedAfter: string;
}

/**
 * A backlog of `backlog` new workflow documents, repository 20 ms and SAP 100 ms: how long a run
 * takes to make SAP's first work item (ARCHIV_PROCESS_RFCINPUT). The run is stopped by its
 * `--max-duration`, as a scheduled run is; what it labelled and sent by then is kept.
 */
export async function firstLinkBench(backlog: number, maxDuration = '30s'): Promise<FirstLink> {
  const sandboxes = await BenchSandboxes.start({ repositoryMs: 20, erpMs: 100 });
  try {
    sandboxes.addNew('workflow', backlog);
    const counted = sandboxes.erp.faults.observe;
    let started = 0;
    let first: number | undefined;
    sandboxes.erp.faults.observe = (req, res, functionName) => {
      counted(req, res, functionName);
      if (functionName === 'ARCHIV_PROCESS_RFCINPUT') first ??= performance.now() - started;
    };
    started = performance.now();
    const run = await sandboxes.run({ task: 'workflow', maxDuration });
    if (first === undefined) throw new Error(`no work item within ${maxDuration} over ${backlog} documents`);
    return {
      backlog,
      firstSeconds: first / 1000,
      labelled: run.report.intake.counts.labelled,
      sent: run.report.tasks.workflow.counts.DONE ?? 0,
      stoppedAfter: maxDuration,
    };
  } finally {
    await sandboxes.stop();
  }
}
