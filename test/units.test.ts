import t from 'tap';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { errorMessage } from '../common/errors.js';
import { resolveValue } from '../src/job/intake/substitute.js';
import { createLogger, registerSecret } from '../src/log.js';
import { SchemaRegistry } from '../common/nuxeo/schemas.js';
import { projectRoot } from '../common/project.js';
import { parseCondition, parseQuery } from '../common/nxql/parse.js';
import { newReport } from '../src/job/report/report.js';
import { renderReport } from '../src/job/report/table.js';
import type { RepositoryDocument } from '../src/repository/document.js';
import { pathSegment, uniqueName } from '../sandbox/repository/naming.js';
import { missingValues, READINESS_KEYS } from '../src/status/readiness.js';

/** Pure functions whose every branch a user meets somewhere; checked here without a server. */

t.test('workflow readiness: start flag, agent type, and a barcode standing in for the archive fields', async (t) => {
  const base = {
    'erpHttpContent:archiveId': 'A1',
    'erpHttpContent:docId': 'd',
    'erpStartWorkflow:erpDocumentTyp': 'ZINV',
    'erpStartWorkflow:erpArchiveObject': 'ZOBJ',
  };
  t.same(missingValues('workflow', { ...base, 'erpStartWorkflow:erpStartWorkflow': true }), [], 'ready');
  t.same(
    missingValues('workflow', { ...base, 'erpStartWorkflow:erpStartWorkflow': false }),
    ['erpStartWorkflow:erpStartWorkflow'],
    'waits while the flag is off',
  );
  t.same(
    missingValues('workflow', { ...base, 'erpStartWorkflow:erpStartWorkflow': true, 'erpStartWorkflow:erpOTyp': 'XX' }),
    ['erpStartWorkflow:erpOTyp'],
    'an unknown agent type',
  );
  t.same(
    missingValues('workflow', { ...base, 'erpStartWorkflow:erpStartWorkflow': true, 'erpStartWorkflow:erpOTyp': 'US' }),
    [],
    'a user agent',
  );
  t.same(
    missingValues('workflow', { 'erpStartWorkflow:erpStartWorkflow': true, 'erpStartWorkflow:erpBarcode': 'B1' }),
    [],
    'a barcode alone is enough (spec §2.3)',
  );
  t.same(
    missingValues('barcode', {
      'erpHttpContent:archiveId': 'A1',
      'erpHttpContent:docId': 'd',
      'erpBarcode:barcode': '',
    }),
    ['erpBarcode:barcode', 'erpBarcode:docTyp'],
  );
});

t.test('readiness reads no property beyond READINESS_KEYS, which a search asks back for it', async (t) => {
  const cases: Array<[keyof typeof READINESS_KEYS, Record<string, unknown>]> = [
    ['link', {}],
    ['barcode', {}],
    ['workflow', { 'erpStartWorkflow:erpOTyp': 'XX' }],
    ['workflow', { 'erpStartWorkflow:erpBarcode': 'B1' }],
  ];
  for (const [useCase, values] of cases) {
    const read = new Set<string>();
    const properties = new Proxy(values, { get: (target, key: string) => (read.add(key), target[key]) });
    missingValues(useCase, properties);
    t.same(
      [...read].filter((key) => !READINESS_KEYS[useCase].includes(key)),
      [],
      `${useCase} ${JSON.stringify(values)}`,
    );
  }
});

t.test('$ references', async (t) => {
  const doc = {
    uid: 'u1',
    path: '/p',
    properties: { 'dc:title': 'T', 'file:content': { name: 'a.pdf' }, 'dc:description': '' },
  } as unknown as RepositoryDocument;
  t.same(resolveValue('$id', doc), { ok: true, value: 'u1' });
  t.same(resolveValue('$file:content.name', doc), { ok: true, value: 'a.pdf' });
  t.same(resolveValue('$file:content/name', doc), { ok: true, value: 'a.pdf' });
  t.same(
    resolveValue('$dc:title.name', doc),
    { ok: false, reference: '$dc:title.name' },
    'into a plain value: missing',
  );
  t.same(resolveValue('$dc:description', doc), { ok: false, reference: '$dc:description' }, 'empty counts as missing');
  t.same(resolveValue('$$5', doc), { ok: true, value: '$5' });
  t.same(resolveValue(false, doc), { ok: true, value: false });
});

t.test('NXQL parser details', async (t) => {
  const where = (text: string) => parseQuery(`SELECT * FROM File WHERE ${text}`).where;
  t.same(
    where("dc:title = 'a\\nb\\tc\\q'"),
    { kind: 'compare', property: 'dc:title', op: '=', value: { kind: 'string', value: 'a\nb\tc\\q' } },
    'escapes',
  );
  t.same(
    where("dc:valid = TIMESTAMP '2024-01-15T08:00:00'"),
    { kind: 'compare', property: 'dc:valid', op: '=', value: { kind: 'date', value: '2024-01-15T08:00:00.000Z' } },
    'no zone is UTC',
  );
  t.throws(() => where('dc:title IS NOT 1'), /expected NULL/);
  t.throws(() => parseCondition('dc:title IS NULL)'), /expected end of condition/);
  t.same(parseCondition('NOT dc:title IS NULL'), {
    kind: 'not',
    operand: { kind: 'null', property: 'dc:title', negated: false },
  });
});

t.test('schema declarations: what a broken contribution says', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'c2e-xsd-'));
  mkdirSync(join(dir, 'OSGI-INF'));
  mkdirSync(join(dir, 'schemas'));
  const contribution = (schema: string) =>
    `<component name="t"><extension target="org.nuxeo.ecm.core.schema.TypeService" point="schema">${schema}</extension></component>`;
  writeFileSync(
    join(dir, 'schemas', 'ok.xsd'),
    '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="flag" type="xs:boolean"/></xs:schema>',
  );
  writeFileSync(join(dir, 'OSGI-INF', 'ok.xml'), contribution('<schema name="noprefix" src="schemas/ok.xsd"/>'));
  const registry = new SchemaRegistry();
  registry.loadContribution(join(dir, 'OSGI-INF', 'ok.xml'));
  t.equal(
    registry.property('noprefix:flag')?.field.type,
    'boolean',
    'a schema without prefix is addressed by its name',
  );
  t.equal(registry.property('flag'), undefined, 'a key without prefix is no property');
  writeFileSync(
    join(dir, 'schemas', 'bad.xsd'),
    '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="when" type="xs:duration"/></xs:schema>',
  );
  writeFileSync(
    join(dir, 'OSGI-INF', 'bad.xml'),
    contribution('<schema name="bad" prefix="bad" src="schemas/bad.xsd"/>'),
  );
  t.throws(() => new SchemaRegistry().loadContribution(join(dir, 'OSGI-INF', 'bad.xml')), {
    name: 'ConfigError',
    message: /bad\.xsd: element when: unsupported type xs:duration/,
  });
  writeFileSync(
    join(dir, 'OSGI-INF', 'lost.xml'),
    contribution('<schema name="lost" prefix="lost" src="schemas/lost.xsd"/>'),
  );
  t.throws(
    () => new SchemaRegistry().loadContribution(join(dir, 'OSGI-INF', 'lost.xml')),
    { name: 'ConfigError', message: /lost\.xsd: cannot read the file; it ships with connect2erp/ },
    'a missing declaration names its file',
  );
});

t.test('the project folder is found from the sources and from compiled code alike, and its absence said', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'c2e-root-'));
  mkdirSync(join(root, 'dist', 'src', 'commands'), { recursive: true });
  writeFileSync(join(root, 'package.json'), '{}');
  t.equal(projectRoot(join(root, 'dist', 'src', 'commands')), root);
  t.equal(projectRoot(root), root);
  t.throws(() => projectRoot('/'), /no package\.json in \/ or above it/);
});

t.test('path segments as the real server makes them', async (t) => {
  t.match(pathSegment(' ... '), /^[0-9a-f]{24}$/, 'only punctuation: a random id');
  t.equal(pathSegment('a/b\\c'), 'a-b-c');
  const now = Date.now();
  // 'x' and every 'x.<millis>' up to 3 ms ahead are taken, as after many clashes in a row.
  const name = uniqueName('x', (n) => n === 'x' || Number(n.slice(2)) < now + 3);
  t.ok(Number(name.slice(2)) >= now + 3, 'clashes in the same millisecond still get different names');
});

t.test('logging: readable on a terminal, JSON elsewhere, secrets masked', async (t) => {
  const lines = (json: boolean, write: (log: ReturnType<typeof createLogger>) => void): string => {
    const stream = new PassThrough();
    let out = '';
    stream.on('data', (d) => (out += d));
    write(createLogger({ json, stream, level: 'info' }));
    return out;
  };
  registerSecret('hunter2-secret');
  const readable = lines(false, (log) =>
    log.info('request sent', {
      url: 'http://x/?p=hunter2-secret',
      attempt: 2,
      headers: { Authorization: 'Basic abc' },
      ids: ['a'],
    }),
  );
  t.match(
    readable,
    /^\S+ info request sent url=http:\/\/x\/\?p=\*\*\* attempt=2 headers=\{"Authorization":"\*\*\*"\} ids=\["a"\]\n$/,
  );
  t.match(
    lines(false, (log) => log.info('bare')),
    /^\S+ info bare\n$/,
    'no fields, no trailing space',
  );
  const json = JSON.parse(lines(true, (log) => log.warn('w', { password: null, token: 'tok' })));
  t.same(
    [json.message, json.level, json.password, json.token],
    ['w', 'warn', null, '***'],
    'a null secret stays null; a set one is masked',
  );
  t.equal(errorMessage('plain'), 'plain', 'a thrown non-Error is shown as text');
});

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
