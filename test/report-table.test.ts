import t from 'tap';
import { newReport } from '../src/job/report/report.js';
import { renderReport } from '../src/job/report/table.js';

/** The terminal table a run prints (src/job/report/table.ts). */

t.test('the terminal table shows warnings, errors, statuses and folders', async (t) => {
  const report = newReport('r1', false);
  report.intake.state = 'finished';
  report.warnings.push('the mapping file can be read by members');
  report.intake.documents.push(
    {
      uid: 'a',
      path: `/default-domain/workspaces/ERP/Invoices/${'x'.repeat(70)}.pdf`,
      mapping: '/m',
      useCase: 'link',
      result: 'labelled',
      status: 'READY',
      facets: [],
      values: {},
      folder: '/default-domain/workspaces/ERP/Invoices/folder',
      missing: [],
    },
    {
      uid: 'b',
      path: '/b.pdf',
      mapping: '/m',
      useCase: 'barcode',
      result: 'error',
      facets: [],
      values: {},
      missing: [],
      error: 'the repository accepted but did not store erpBarcode:barcode',
    },
  );
  const text = renderReport(report);
  t.match(text, /^connect2erp run r1\nwarning: the mapping file can be read by members\n/);
  t.match(
    text,
    /\n…x{55}\.pdf\s+link\s+labelled\s+READY\s+…t-domain\/workspaces\/ERP\/Invoices\/folder\n/,
    'long paths keep their end',
  );
  t.match(text, /\/b\.pdf\s+barcode\s+error\s+the repository accepted but did not store erpBarcode:barcode/);
  report.intake.documents[1].error = 'e'.repeat(100);
  t.match(renderReport(report), / e{79}…\n?/, 'long messages are cut at 80 characters');
  report.intake.counts.skipped = 2;
  t.match(
    renderReport(report),
    /intake: 0 labelled \(0 ready, 0 waiting for input\), 2 left to another run, 0 errors/,
    'documents left to another run are counted',
  );
  report.intake.state = 'stopped';
  report.intake.reason = 'SIGTERM';
  t.match(
    renderReport(report),
    /intake: stopped early \(SIGTERM\); the rest of its backlog waits for the next run; 0 labelled \(0 ready/,
    'an intake cut short says so, with what it did',
  );
  report.intake.state = 'finished';
  t.notMatch(text, /values that would be written/, 'only a dry run lists values');
  report.tasks.link = { state: 'finished', counts: {}, documents: [], unlisted: 0, durationMs: 0 };
  report.tasks.workflow = {
    state: 'finished',
    counts: { CLAIMED_ELSEWHERE: 1 },
    documents: [{ uid: 'w', path: '/w.pdf', task: 'workflow', result: 'CLAIMED_ELSEWHERE' }],
    unlisted: 0,
    durationMs: 0,
  };
  report.tasks.barcode = {
    state: 'finished',
    counts: { FAILED: 1 },
    documents: [
      {
        uid: 'c',
        path: '/c.pdf',
        task: 'barcode',
        result: 'FAILED',
        message: 'BAPI_BARCODE_SENDLIST: Bar code x is not valid',
      },
    ],
    unlisted: 0,
    durationMs: 0,
  };
  report.plannedCalls.push({
    system: 'S4H',
    call: 'ARCHIV_PROCESS_RFCINPUT',
    params: { DOCUMENT_ENTRY: { ARC_DOC_ID: 'd' } },
  });
  const withTasks = renderReport(report);
  t.match(withTasks, /\ntask link: nothing to do\n/);
  t.match(withTasks, /\n\/w\.pdf\s+CLAIMED_ELSEWHERE\n/, 'a document another run holds has no message');
  t.match(
    withTasks,
    /\ntask barcode: 1 FAILED\n.*\n.*\n\/c\.pdf\s+FAILED\s+BAPI_BARCODE_SENDLIST: Bar code x is not valid/,
  );
  t.match(
    withTasks,
    /\nERP calls that would be made:\n {2}S4H ARCHIV_PROCESS_RFCINPUT \{"DOCUMENT_ENTRY":\{"ARC_DOC_ID":"d"\}\}$/,
  );
});
