import { outageText, phaseNote, taskDetail, type RunReport } from './report.js';

function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Paths keep their end: the file and folder names tell documents apart, the workspace prefix does not. */
function shortenPath(path: string, max: number): string {
  return path.length > max ? `…${path.slice(path.length - max + 1)}` : path;
}

/** A phase's line: its counts, after what stopped it when it did not finish. */
function phaseLine(note: string | undefined, counts: string): string {
  if (note === undefined) return counts;
  return counts === '' ? note : `${note}; ${counts}`;
}

const unlistedNote = (n: number): string[] =>
  n > 0 ? [`… and ${n} more documents: see the JSON report (--report) or the log`] : [];

/** The run report as a person reads it on a terminal. */
export function renderReport(report: RunReport): string {
  const out = [...headLines(report), '', ...intakeLines(report), ...taskLines(report), ...plannedCallLines(report)];
  return out.join('\n');
}

/** The run, its mapping file, and what stopped or troubled it. */
function headLines(report: RunReport): string[] {
  const out: string[] = [];
  out.push(`connect2erp run ${report.runId}${report.dryRun ? ' (dry run: nothing was written)' : ''}`);
  if (report.mappingFile) out.push(`mapping file: ${report.mappingFile.path}`);
  if (report.failure !== undefined) out.push(`error: the run stopped: ${report.failure}`);
  for (const problem of report.problems) out.push(`configuration problem: ${problem}`);
  for (const outage of report.outages) out.push(`outage: ${outageText(outage)} (its documents wait, none charged)`);
  for (const warning of report.warnings) out.push(`warning: ${warning}`);
  if (report.interrupted) {
    const { reason, graceExpired, leftClaimed } = report.interrupted;
    out.push(
      `interrupted (${reason}): ${graceExpired ? `the grace period ran out; ${leftClaimed.length} document(s) still in flight stay claimed until their claims expire` : 'work under way finished, the rest is left for the next run'}`,
    );
  }
  return out;
}

/** The intake's line, its documents, and in a dry run the values it would write. */
function intakeLines(report: RunReport): string[] {
  const docs = report.intake.documents;
  const c = report.intake.counts;
  const skipped = c.skipped > 0 ? `, ${c.skipped} left to another run` : '';
  const counts = `${report.dryRun ? `${c.planned} to label` : `${c.labelled} labelled`} (${c.ready} ready, ${c.pendingInput} waiting for input)${skipped}, ${c.errors} errors`;
  const out = [
    `intake: ${phaseLine(phaseNote(report.intake), ['not run', 'skipped'].includes(report.intake.state) ? '' : counts)}`,
  ];
  if (docs.length > 0) {
    out.push(
      table(
        ['document', 'use case', 'result', 'status', 'folder', 'missing / error'],
        docs.map((d) => [
          shortenPath(d.path, 60),
          d.useCase,
          d.result,
          d.status ?? '',
          d.folder ? shortenPath(d.folder, 40) : '',
          shorten(d.error ?? d.skipped ?? d.missing.join(', '), 80),
        ]),
      ),
    );
  }
  out.push(...unlistedNote(report.intake.unlisted));
  if (report.dryRun && docs.some((d) => d.result === 'planned')) {
    out.push('', 'values that would be written:');
    for (const d of docs.filter((doc) => doc.result === 'planned')) {
      out.push(`  ${d.path}`, `    facets: ${d.facets.join(', ')}`);
      for (const [key, value] of Object.entries(d.values)) out.push(`    ${key} = ${JSON.stringify(value)}`);
    }
  }
  return out;
}

/** Each task's line and its documents. */
function taskLines(report: RunReport): string[] {
  const out: string[] = [];
  for (const [name, task] of Object.entries(report.tasks)) {
    const counts = Object.entries(task.counts)
      .map(([result, n]) => `${n} ${result}`)
      .join(', ');
    out.push('', `task ${name}: ${phaseLine(phaseNote(task), counts) || 'nothing to do'}`);
    if (task.documents.length > 0) {
      out.push(
        table(
          ['document', 'result', 'ERP reference / message'],
          task.documents.map((d) => [shortenPath(d.path, 60), d.result, shorten(taskDetail(d), 100)]),
        ),
      );
    }
    out.push(...unlistedNote(task.unlisted));
  }
  return out;
}

/** A dry run's ERP calls, as they would be made. */
function plannedCallLines(report: RunReport): string[] {
  if (report.plannedCalls.length === 0) return [];
  return [
    '',
    'ERP calls that would be made:',
    ...report.plannedCalls.map((call) => `  ${call.system} ${call.call} ${JSON.stringify(call.params)}`),
  ];
}
