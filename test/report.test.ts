import t from 'tap';
import { sandboxEnv } from './helpers/env.js';
import { MAX_ROWS, renderHtml } from '../src/report/html.js';
import { newReport, recordTask, finish } from '../src/report/report.js';
import { renderReport } from '../src/report/table.js';

/** The HTML run report: what a person opening it sees, and that nothing on it can run or fetch anything. */

const rows = (html: string, section: string): string => html.slice(html.indexOf(`<h2>${section}`)).split('</table>')[0];

t.test('totals per phase, task and status; failed and waiting documents with reasons and links to them', async (t) => {
  const env = await sandboxEnv(t);
  const bad = await env.upload('ERP/Barcode', '<script>alert(1)</script>.pdf');
  const waiting = await env.upload('ERP/Invoices', 'invoice-9.pdf');
  const done = await env.upload('ERP/Workflow', 'approval.pdf');
  await env.run();
  env.fill(bad, { 'erpBarcode:barcode': 'bad code!' });
  const report = await env.run();
  const html = renderHtml(report);

  t.match(html, /^<!DOCTYPE html>/);
  t.match(html, '1 (some documents failed)');
  t.match(html, '<tr><td>task barcode</td><td>FAILED</td><td>1</td></tr>', 'totals per task and status');
  t.match(html, '<tr><td>task link</td><td>PENDING_INPUT</td><td>1</td></tr>');
  t.match(html, '<tr><td>intake</td><td>errors</td><td>0</td></tr>', 'totals of the intake');
  const failed = rows(html, 'Failed documents (1)');
  t.match(failed, `<a href="${env.baseUrl}/ui/#!/doc/${bad}">`, 'the failed document links to it in the repository');
  t.match(failed, 'BAPI_BARCODE_SENDLIST: Bar code bad code! is not valid', 'with the reason');
  t.match(failed, '/ERP/Barcode/&lt;script&gt;alert(1)&lt;-script</a>', 'its name (as the repository cut it) is shown, escaped');
  const waitingRows = rows(html, 'Waiting documents');
  t.match(waitingRows, `/ui/#!/doc/${waiting}`);
  t.match(waitingRows, 'waiting for erpCreateALDocument:erpObjectId');
  t.notMatch(html, `/ui/#!/doc/${done}`, 'a document that went through is only counted');
  t.notMatch(html, /<script|<link|<img|src=|@import|url\(/i, 'self-contained: no script, no external style sheet, image or font');
});

t.test('an interrupted run shows why and what is still claimed; long lists are cut with a pointer to the JSON report', async (t) => {
  const report = newReport('run-1', false);
  report.repositoryUrl = 'https://nuxeo.example.com/nuxeo';
  const records = Array.from({ length: MAX_ROWS + 5 }, (_, i) => ({ uid: `u${i}`, path: `/d/${i}.pdf`, task: 'link', result: 'RETRY' as const, message: 'HTTP 503' }));
  recordTask(report, 'link', records);
  recordTask(report, 'barcode', []);
  report.interrupted = { reason: 'SIGTERM', graceExpired: true, leftClaimed: [{ uid: 'x1', path: '/d/x1.pdf', task: 'link' }] };
  const html = renderHtml(finish(report));
  t.match(html, '3 (interrupted)');
  t.match(html, 'SIGTERM: the grace period ran out with work in flight');
  t.match(html, `Waiting documents (${MAX_ROWS + 6})`);
  t.match(html, '… and 6 more: see the JSON report (--report).');
  t.match(html, '<tr><td>task barcode</td><td>nothing to do</td><td>0</td></tr>');
  t.notMatch(html, 'x1.pdf', 'the 1001st row and later are left out');
  t.match(renderReport(report), 'interrupted (SIGTERM): the grace period ran out; 1 document(s) still in flight stay claimed until their claims expire');
});

t.test('a dry run lists the ERP calls it would make', async (t) => {
  const env = await sandboxEnv(t);
  const scan = await env.upload('ERP/Barcode', 'scan.pdf');
  await env.run();
  env.fill(scan, { 'erpBarcode:barcode': 'BC-1' });
  const html = renderHtml(await env.run(true));
  t.match(html, 'dry run: nothing was written');
  t.match(html, '<h2>ERP calls that would be made (1)</h2>');
  t.match(html, /<td>S4H<\/td><td>BAPI_BARCODE_SENDLIST<\/td><td><code>\{&quot;/);
});

t.test('intake rows, notes, and a report without a repository address (the run stopped before reading storage.yaml)', async (t) => {
  const report = newReport('run-2', false);
  const intake = { mapping: '/m', useCase: 'link', facets: [], values: {}, missing: [] };
  report.intake.documents.push(
    { ...intake, uid: 'e1', path: '/d/broken.pdf', result: 'error', error: 'no value for erpHttpContent:docId = $id' },
    { ...intake, uid: 'p1', path: '/d/waiting.pdf', result: 'labelled', status: 'PENDING_INPUT', missing: ['erpCreateALDocument:erpObjectId'] },
    { ...intake, uid: 'r1', path: '/d/ready.pdf', result: 'labelled', status: 'READY' },
  );
  report.warnings.push('the mapping file can be read by <members>');
  report.problems.push('storage.yaml: url: Invalid URL');
  const html = renderHtml(finish(report));
  t.match(html, '2 (configuration error)');
  t.match(html, '<li class="bad">configuration problem: storage.yaml: url: Invalid URL</li><li class="warn">warning: the mapping file can be read by &lt;members&gt;</li>');
  t.match(rows(html, 'Failed documents (1)'), '<td>intake</td><td>/d/broken.pdf</td><td>error</td><td>no value for erpHttpContent:docId = $id</td>', 'no link without the repository address');
  t.match(rows(html, 'Waiting documents (1)'), '<td>/d/waiting.pdf</td><td>PENDING_INPUT</td><td>waiting for erpCreateALDocument:erpObjectId</td>');
  t.notMatch(html, 'ready.pdf', 'a READY document needs nobody');
});
