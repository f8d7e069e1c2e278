import t from 'tap';
import { sandboxEnv } from './helpers/env.js';
import { MAX_ROWS, renderHtml } from '../src/job/report/html.js';
import { lstatSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { LISTED_MAX, newReport, recordTask, finish, taskSummary } from '../src/job/report/report.js';
import { ReportFile, taskPhase } from '../src/job/report/report-file.js';
import { renderReport } from '../src/job/report/table.js';

/** The HTML run report: what a person opening it sees, and that nothing on it can run or fetch anything; the JSON report file. */

const rows = (html: string, section: string): string => html.slice(html.indexOf(`<h2>${section}`)).split('</table>')[0];

t.test('totals per phase, task and status; failed and waiting documents with reasons and links to them', async (t) => {
  const env = await sandboxEnv(t);
  const bad = await env.upload('ERP/Barcode', '<script>alert(1)</script>.pdf');
  const waiting = await env.upload('ERP/Invoices', 'invoice-9.pdf');
  const done = await env.upload('ERP/Workflow', 'approval.pdf');
  const first = renderHtml(await env.run());
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
  t.match(failed, 'BAPI_BARCODE_SENDLIST: Enter a permitted bar code (bar code check): bad code!', 'with the reason');
  t.match(
    failed,
    '/ERP/Barcode/&lt;script&gt;alert(1)&lt;-script</a>',
    'its name (as the repository cut it) is shown, escaped',
  );
  t.match(failed, `<td><code>${bad}</code></td>`, 'its uid, which retry --doc takes');
  t.match(failed, `<td>fix what the reason says, then: connect2erp retry --doc ${bad}</td>`, 'and what to do');
  const waitingRows = rows(html, 'Waiting documents');
  t.match(waitingRows, `/ui/#!/doc/${waiting}`);
  t.match(waitingRows, 'waiting for erpCreateALDocument:erpObjectId');
  t.match(waitingRows, '<td>fill in the values in the document&#39;s ERP tab; the next run checks them</td>');
  const took = rows(html, 'Time per phase');
  for (const phase of ['intake', 'task barcode', 'task link', 'task workflow'])
    t.match(took, new RegExp(`<tr><td>${phase}</td><td>\\d+\\.\\d s</td></tr>`), `${phase}: how long it took`);
  t.match(
    rows(first, 'Documents in SAP now (1)'),
    new RegExp(
      `<td>task workflow</td><td><a href="${env.baseUrl}/ui/#!/doc/${done}">[^<]*approval\\.pdf</a></td><td><code>${done}</code></td><td>DONE</td><td>SAP: ${done}</td><td>nothing</td>`,
    ),
    'what went through, with the reference SAP gave it',
  );
  t.match(html, `<dt>repository</dt><dd>${env.baseUrl}</dd>`, 'the repository it ran against');
  t.match(html, /<dt>SAP<\/dt><dd>S4H \(client 100, http:\/\/127\.0\.0\.1:\d+\/sap\/bc\/soap\/rfc\)<\/dd>/, 'and SAP');
  t.notMatch(
    html,
    /<script|<link|<img|src=|@import|url\(/i,
    'self-contained: no script, no external style sheet, image or font',
  );
});

t.test(
  'an interrupted run shows why and what is still claimed; long lists are cut with a pointer to the JSON report',
  async (t) => {
    const report = newReport('run-1', false);
    report.repositoryUrl = 'https://nuxeo.example.com/nuxeo';
    const records = Array.from({ length: MAX_ROWS + 5 }, (_, i) => ({
      uid: `u${i}`,
      path: `/d/${i}.pdf`,
      task: 'link',
      result: 'RETRY' as const,
      message: 'HTTP 503',
    }));
    report.intake.state = 'finished';
    recordTask(report, { uid: 'e1', path: '/d/e1.pdf', task: 'barcode', result: 'ERROR', message: 'HTTP 500' });
    for (const record of records) recordTask(report, record);
    report.tasks.link.state = 'stopped';
    report.tasks.barcode.state = 'finished';
    taskSummary(report, 'workflow');
    report.interrupted = {
      reason: 'SIGTERM',
      graceExpired: true,
      leftClaimed: [{ uid: 'x1', path: '/d/x1.pdf', task: 'link' }],
    };
    const html = renderHtml(finish(report, 'SIGTERM; the grace period ran out'));
    t.match(html, '3 (interrupted)');
    t.match(html, 'SIGTERM: the grace period ran out with work in flight');
    t.match(
      html,
      `Waiting documents (${MAX_ROWS + 1})`,
      'the report keeps the first 1000 records of a phase, plus what is still claimed',
    );
    t.match(html, '… and 1 more: see the JSON report (--report).');
    t.match(html, 'the lists below come from the first 1000 documents of each phase; 5 more are counted in the totals');
    t.match(html, '<tr><td>task link</td><td>RETRY</td><td>1005</td></tr>');
    t.match(
      rows(html, 'Failed documents'),
      '<td><code>e1</code></td><td>ERROR</td><td>HTTP 500</td><td>fix what the reason says; the next run tries again</td>',
      'a task error is listed with the failures',
    );
    t.match(
      rows(html, 'Time per phase'),
      '<tr><td>task workflow</td><td>not run</td></tr>',
      'a phase that did not run',
    );
    t.match(
      html,
      '<tr><td>task link</td><td>stopped early (SIGTERM; the grace period ran out); the rest of its backlog waits for the next run</td><td></td></tr>',
      'a task cut short says so and why',
    );
    t.match(
      html,
      '<tr><td>task workflow</td><td>not run: the run ended before it (SIGTERM; the grace period ran out)</td><td></td></tr>',
      'a task that never began says so and why',
    );
    t.notMatch(html, '<tr><td>intake</td><td>not run', 'the intake finished');
    t.notMatch(html, 'x1.pdf', 'the 1001st row and later are left out');
    t.match(
      renderReport(report),
      'interrupted (SIGTERM): the grace period ran out; 1 document(s) still in flight stay claimed until their claims expire',
    );
  },
);

t.test('a dry run lists the ERP calls it would make; links go to the Web UI address users open', async (t) => {
  const env = await sandboxEnv(t, { storage: { webUiUrl: 'https://ecm.example.com/nuxeo/ui' } });
  const scan = await env.upload('ERP/Barcode', 'scan.pdf');
  await env.run();
  env.fill(scan, { 'erpBarcode:barcode': 'BC-1' });
  const html = renderHtml(await env.run(true));
  t.match(html, 'dry run: nothing was written');
  t.match(html, '<h2>ERP calls that would be made (1)</h2>');
  t.match(html, /<td>S4H<\/td><td>BAPI_BARCODE_SENDLIST<\/td><td><code>\{&quot;/);
  t.match(html, `<a href="https://ecm.example.com/nuxeo/ui/#!/doc/${scan}">`, "storage.yaml's webUiUrl");
});

t.test(
  'intake rows, notes, and a report without a repository address (the run stopped before reading storage.yaml)',
  async (t) => {
    const report = newReport('run-2', false);
    const intake = { mapping: '/m', useCase: 'link' as const, facets: [], values: {}, missing: [] };
    report.intake.documents.push(
      {
        ...intake,
        uid: 'e1',
        path: '/d/broken.pdf',
        result: 'error',
        error: 'no value for erpHttpContent:docId = $id',
      },
      {
        ...intake,
        uid: 'p1',
        path: '/d/waiting.pdf',
        result: 'labelled',
        status: 'PENDING_INPUT',
        missing: ['erpCreateALDocument:erpObjectId'],
      },
      { ...intake, uid: 'r1', path: '/d/ready.pdf', result: 'labelled', status: 'READY' },
    );
    report.warnings.push('the mapping file can be read by <members>');
    report.problems.push('storage.yaml: url: Invalid URL');
    const html = renderHtml(finish(report, 'a configuration problem'));
    t.match(html, '2 (configuration error)');
    t.match(
      html,
      '<li class="bad">configuration problem: storage.yaml: url: Invalid URL</li><li class="warn">warning: the mapping file can be read by &lt;members&gt;</li>',
    );
    t.match(
      rows(html, 'Failed documents (1)'),
      '<td>intake</td><td>/d/broken.pdf</td><td><code>e1</code></td><td>error</td><td>no value for erpHttpContent:docId = $id</td><td>fix what the reason says; the next run tries again</td>',
      'no link without the repository address',
    );
    t.match(
      rows(html, 'Waiting documents (1)'),
      '<td>/d/waiting.pdf</td><td><code>p1</code></td><td>PENDING_INPUT</td><td>waiting for erpCreateALDocument:erpObjectId</td>',
    );
    t.notMatch(html, 'ready.pdf', 'a READY document needs nobody');
  },
);

t.test(
  'the JSON report file lists every document, however many, one per line, while the report in memory keeps the first 1000',
  async (t) => {
    const dir = t.testdir();
    const path = join(dir, 'run.json');
    const file = new ReportFile(path);
    const report = newReport('run-big', false);
    taskSummary(report, 'idle');
    for (let i = 0; i < LISTED_MAX + 500; i++) {
      const record = {
        uid: `u${i}`,
        path: `/d/${i}.pdf`,
        task: 'link',
        result: 'DONE' as const,
        reference: `BKPF ${i}`,
      };
      recordTask(report, record);
      file.add(taskPhase('link'), record);
    }
    t.equal(report.tasks.link.documents.length, LISTED_MAX);
    t.equal(report.tasks.link.unlisted, 500);
    file.write(finish(report, undefined));
    const text = readFileSync(path, 'utf8');
    const written = JSON.parse(text);
    t.equal(written.runId, 'run-big');
    t.same(written.tasks.link.counts, { DONE: LISTED_MAX + 500 });
    t.equal(written.tasks.link.documents.length, LISTED_MAX + 500, 'all of them in the file');
    t.same(written.tasks.link.documents[LISTED_MAX + 499], {
      uid: `u${LISTED_MAX + 499}`,
      path: `/d/${LISTED_MAX + 499}.pdf`,
      task: 'link',
      result: 'DONE',
      reference: `BKPF ${LISTED_MAX + 499}`,
    });
    t.equal(written.tasks.link.unlisted, undefined, 'nothing is left out of the file');
    t.same(written.tasks.idle.documents, [], 'a task with nothing to do has an empty list');
    t.same(written.intake.documents, []);
    t.match(text, /\n {4}\{"uid":"u7","path":"\/d\/7\.pdf"/, 'one document per line');
    t.same(readdirSync(dir), ['run.json'], 'the spool files are gone');
  },
);

t.test(
  'a spool that cannot be written (a full disk) stops nothing: the records go on, write says which file and why, the last good report stays',
  async (t) => {
    const dir = t.testdir({ 'run.json': 'the last good one', 'run.json.0.part': {} });
    const path = join(dir, 'run.json');
    const file = new ReportFile(path);
    const report = newReport('run-full', false);
    const record = { uid: 'u1', path: '/d/1.pdf', task: 'link', result: 'DONE' as const, reference: 'BKPF 1' };
    file.add(taskPhase('link'), record);
    file.add(taskPhase('link'), record);
    t.throws(() => file.write(finish(report, undefined)), {
      name: 'ReportNotWritten',
      file: path,
      reason: /EISDIR/,
      message: `the report ${path} was not written (EISDIR`,
    });
    t.equal(readFileSync(path, 'utf8'), 'the last good one');
  },
);

t.test('a report path that is a symbolic link: the file it names is replaced, the link stays', async (t) => {
  const dir = t.testdir({ 'elsewhere.json': 'the last one' });
  const link = join(dir, 'run.json');
  symlinkSync(join(dir, 'elsewhere.json'), link);
  new ReportFile(link).write(finish(newReport('run-linked', false), undefined));
  t.ok(lstatSync(link).isSymbolicLink(), 'still a link');
  t.match(JSON.parse(readFileSync(join(dir, 'elsewhere.json'), 'utf8')), { runId: 'run-linked' });
  t.same(readdirSync(dir).sort(), ['elsewhere.json', 'run.json'], 'no temporary file left');
});
