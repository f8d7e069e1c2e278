import type { Finding, Reconciliation } from './reconcile.js';

const day = (at: Date | string): string => new Date(at).toISOString().slice(0, 10);

/** A finding as one line: its kind, task, document and what differs. */
const findingLine = (f: Finding, back: string): string =>
  `${f.kind.toUpperCase()}  ${f.task}  ${f.path ?? f.docId}${f.uid === undefined ? '' : ` (${f.uid})`}: ${f.detail}${f.requeued === true ? back : ''}`;

/** The reconciliation as a person reads it: the range, each task's counts and what was not checked, every finding, the totals. */
export function renderReconciliation(result: Reconciliation): string {
  const lines = [
    `reconcile ${day(result.range.from)} to ${day(result.range.until)}: DONE documents by their last attempt, SAP's links by their storage date`,
    '',
  ];
  for (const task of result.tasks) {
    lines.push(
      `task ${task.task}: ${task.looked} DONE document(s) looked up in SAP; ${task.sapRows} row(s) of SAP's listed, ${task.foreign} of documents the job did not label` +
        (task.sapStored > 0
          ? `; ${task.sapStored} document(s) SAP stored ${result.dryRun ? 'would get' : 'got'} the business objects SAP linked them to`
          : ''),
      ...task.notChecked.map((reason) => `  not checked: ${reason}`),
    );
  }
  const back = result.dryRun ? ' → would be put back to READY' : ' → put back to READY';
  lines.push('', ...result.findings.map((f) => findingLine(f, back)));
  const count = (kind: string): number => result.findings.filter((f) => f.kind === kind).length;
  const more = result.unlisted > 0 ? ` (and ${result.unlisted} more, not listed)` : '';
  lines.push(
    `${count('absent')} absent from SAP, ${count('not done')} in SAP but not DONE, ${count('twice')} twice in SAP, ${count('not checked')} not checked${more}`,
  );
  return `${lines.join('\n')}\n`;
}
