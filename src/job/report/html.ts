import { EXIT, EXIT_MEANING } from '../../exit-codes.js';
import { html, type Html } from './markup.js';
import { LISTED_MAX, outageText, phaseNote, taskDetail, type Phase, type RunReport } from './report.js';
import type { IntakeRecord, TaskRecord } from '../records.js';

/** Rows listed per section; the JSON report has them all. */
export const MAX_ROWS = 1000;

interface Row {
  phase: string;
  uid: string;
  path: string;
  result: string;
  reason: Html | string;
  /** What someone does about it, if anything. */
  next: string;
}

/** What to do about a listed document, by its result. */
function nextStep(result: string, uid: string): string {
  switch (result) {
    case 'FAILED':
      return `fix what the reason says, then: connect2erp retry --doc ${uid}`;
    case 'error':
    case 'ERROR':
      return 'fix what the reason says; the next run tries again';
    case 'PENDING_INPUT':
      return "fill in the values in the document's ERP tab; the next run checks them";
    case 'PLANNED':
      return 'run without --dry-run';
    default:
      // RETRY, RELEASED, IN_PROGRESS: a later run goes on by itself.
      return 'nothing: a later run goes on with it';
  }
}

/** Web UI's address of a document (storage.yaml's webUiUrl, or the repository's + /ui). */
function documentLink(report: RunReport, row: Row): Html {
  if (report.webUiUrl === undefined) return html`${row.path}`;
  return html`<a href="${`${report.webUiUrl}/#!/doc/${encodeURIComponent(row.uid)}`}">${row.path}</a>`;
}

/**
 * SAP's reference, the link that opens the business object in SAP (its system's `openInSap`, an
 * address the job filled, percent-encoding each value), and what the connector has to tell.
 */
function doneReason(d: TaskRecord): Html {
  const open = d.url === undefined ? html`` : html` <a href="${d.url}">Open in SAP</a>`;
  const told = d.message === undefined ? html`` : html`<br>${d.message}`;
  return html`SAP: ${String(d.reference)}${open}${told}`;
}

function table(headers: string[], rows: Array<Array<Html | string>>): Html {
  const head = headers.map((h) => html`<th>${h}</th>`);
  const body = rows.map((cells) => html`<tr>${cells.map((c) => html`<td>${c}</td>`)}</tr>\n`);
  return html`<table><thead><tr>${head}</tr></thead><tbody>\n${body}</tbody></table>`;
}

function documentSection(report: RunReport, title: string, rows: Row[]): Html {
  if (rows.length === 0) return html``;
  const shown = rows
    .slice(0, MAX_ROWS)
    .map((r) => [r.phase, documentLink(report, r), html`<code>${r.uid}</code>`, r.result, r.reason, r.next]);
  const more =
    rows.length > MAX_ROWS
      ? html`<p>… and ${rows.length - MAX_ROWS} more: see the JSON report (--report).</p>`
      : html``;
  const headers = ['phase', 'document', 'uid', 'result', 'reason', 'next step'];
  return html`<h2>${title} (${rows.length})</h2>\n${table(headers, shown)}\n${more}`;
}

/** How long each phase that ran took; one that did not run says so. */
function durations(report: RunReport): Html {
  const phases: Array<[string, Phase]> = [
    ['intake', report.intake],
    ...Object.entries(report.tasks).map(([name, task]): [string, Phase] => [`task ${name}`, task]),
  ];
  return table(
    ['phase', 'took'],
    phases.map(([name, phase]) => [
      name,
      phase.state === 'finished' || phase.state === 'stopped'
        ? `${(phase.durationMs / 1000).toFixed(1)} s`
        : phase.state,
    ]),
  );
}

function totals(report: RunReport): Html {
  const c = report.intake.counts;
  const intakeNote = phaseNote(report.intake);
  const rows: string[][] = [
    ...(intakeNote === undefined ? [] : [['intake', intakeNote, '']]),
    ['intake', report.dryRun ? 'to label' : 'labelled', String(report.dryRun ? c.planned : c.labelled)],
    ['intake', 'ready', String(c.ready)],
    ['intake', 'waiting for input', String(c.pendingInput)],
    ['intake', 'labelled by another run', String(c.skipped)],
    ['intake', 'errors', String(c.errors)],
  ];
  for (const [name, task] of Object.entries(report.tasks)) {
    const counts = Object.entries(task.counts);
    const note = phaseNote(task);
    if (note !== undefined) rows.push([`task ${name}`, note, '']);
    else if (counts.length === 0) rows.push([`task ${name}`, 'nothing to do', '0']);
    for (const [result, n] of counts) rows.push([`task ${name}`, result, String(n)]);
  }
  return table(['phase', 'result', 'documents'], rows);
}

type Attention = { failed: Row[]; waiting: Row[]; wouldProcess: Row[]; done: Row[] };

/**
 * The failed documents, the waiting ones (for input, for a retry, or left claimed by a cut-short
 * run), in a dry run the ones a task would process, with the call each would get, and those the
 * run put in SAP, with SAP's reference.
 */
function attention(report: RunReport): Attention {
  const rows: Attention = { failed: [], waiting: [], wouldProcess: [], done: [] };
  for (const d of report.intake.documents) intakeAttention(d, rows);
  for (const [name, task] of Object.entries(report.tasks)) {
    for (const d of task.documents) taskAttention(`task ${name}`, d, rows);
  }
  for (const d of report.interrupted?.leftClaimed ?? []) {
    rows.waiting.push({
      phase: `task ${d.task}`,
      uid: d.uid,
      path: d.path,
      result: 'IN_PROGRESS',
      reason: 'still in flight when the run ended; a later run takes it over once its claim expires',
      next: nextStep('IN_PROGRESS', d.uid),
    });
  }
  return rows;
}

/** An intake record that needs a person: an error, or values to fill in. */
function intakeAttention(d: IntakeRecord, rows: Attention): void {
  if (d.result === 'error')
    rows.failed.push({
      phase: 'intake',
      uid: d.uid,
      path: d.path,
      result: 'error',
      reason: String(d.error),
      next: nextStep('error', d.uid),
    });
  else if (d.status === 'PENDING_INPUT')
    rows.waiting.push({
      phase: 'intake',
      uid: d.uid,
      path: d.path,
      result: 'PENDING_INPUT',
      reason: `waiting for ${d.missing.join(', ')}`,
      next: nextStep('PENDING_INPUT', d.uid),
    });
}

/** A task record in the list its result belongs to. */
function taskAttention(phase: string, d: TaskRecord, rows: Attention): void {
  const row = {
    phase,
    uid: d.uid,
    path: d.path,
    result: d.result,
    reason: d.message ?? '',
    next: nextStep(d.result, d.uid),
  };
  if (d.result === 'FAILED' || d.result === 'ERROR') rows.failed.push(row);
  else if (d.result === 'PENDING_INPUT' || d.result === 'RETRY' || d.result === 'RELEASED') rows.waiting.push(row);
  else if (d.result === 'PLANNED') rows.wouldProcess.push({ ...row, reason: taskDetail(d) });
  else if (d.result === 'DONE') rows.done.push({ ...row, reason: doneReason(d), next: 'nothing' });
}

const STYLE = html`body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f3f3f3}.bad{color:#a00}.warn{color:#a60}.ok{color:#070}dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}dd{margin:0}`;

/** The run report as one self-contained HTML page: no scripts, no external style sheets or images. */
export function renderHtml(report: RunReport): string {
  const notes = noteItems(report);
  const { failed, waiting, wouldProcess, done } = attention(report);
  return html`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>connect2erp run ${report.runId}</title>
<style>${STYLE}</style></head>
<body>
<h1>connect2erp run report</h1>
<dl>${facts(report).map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>
${notes.length > 0 ? html`<ul>${notes}</ul>` : html``}
<h2>Totals</h2>
${totals(report)}
<h2>Time per phase</h2>
${durations(report)}
${documentSection(report, 'Failed documents', failed)}
${documentSection(report, 'Waiting documents', waiting)}
${documentSection(report, 'Documents the tasks would process', wouldProcess)}
${documentSection(report, 'Documents in SAP now', done)}
${plannedCalls(report)}
</body></html>
`.text;
}

/** The run's facts: which run, how it ended, what it worked with. */
function facts(report: RunReport): Array<[string, Html | string | undefined]> {
  const meaning = EXIT_MEANING[report.exitCode];
  const status = report.exitCode === EXIT.ok ? 'ok' : report.exitCode === EXIT.interrupted ? 'warn' : 'bad';
  const rows: Array<[string, Html | string | undefined]> = [
    ['run', report.runId],
    ['mode', report.dryRun ? 'dry run: nothing was written' : 'live'],
    ['started', report.startedAt],
    ['finished', report.finishedAt],
    ['exit code', html`<span class="${status}">${report.exitCode} (${meaning})</span>`],
  ];
  if (report.repositoryUrl) rows.push(['repository', report.repositoryUrl]);
  if (report.erpSystems && report.erpSystems.length > 0) rows.push(['SAP', report.erpSystems.join('; ')]);
  if (report.mappingFile) rows.push(['mapping file', report.mappingFile.path]);
  if (report.interrupted) {
    const grace = report.interrupted.graceExpired
      ? 'the grace period ran out with work in flight'
      : 'in-flight work finished';
    rows.push(['interrupted', `${report.interrupted.reason}: ${grace}`]);
  }
  return rows;
}

/** What stopped or troubled the run, and how much of the lists below is shown. */
function noteItems(report: RunReport): Html[] {
  const unlisted = report.intake.unlisted + Object.values(report.tasks).reduce((sum, t) => sum + t.unlisted, 0);
  return [
    ...(report.failure === undefined ? [] : [html`<li class="bad">error: the run stopped: ${report.failure}</li>`]),
    ...report.problems.map((p) => html`<li class="bad">configuration problem: ${p}</li>`),
    ...report.outages.map(
      (o) => html`<li class="bad">outage: ${outageText(o)} (its documents wait, none charged)</li>`,
    ),
    ...report.warnings.map((w) => html`<li class="warn">warning: ${w}</li>`),
    ...(unlisted > 0
      ? [
          html`<li>the lists below come from the first ${LISTED_MAX} documents of each phase; ${unlisted} more are counted in the totals and listed in the JSON report (--report) and the log</li>`,
        ]
      : []),
  ];
}

/** A dry run's ERP calls, as they would be made. */
function plannedCalls(report: RunReport): Html {
  if (report.plannedCalls.length === 0) return html``;
  return html`<h2>ERP calls that would be made (${report.plannedCalls.length})</h2>\n${table(
    ['system', 'call', 'parameters'],
    report.plannedCalls
      .slice(0, MAX_ROWS)
      .map((c) => [c.system, c.call, html`<code>${JSON.stringify(c.params)}</code>`]),
  )}`;
}
