import t from 'tap';
import { mkdtempSync, readFileSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { configLocation } from '../src/config/location.js';
import { loadConfig } from '../src/config/load.js';
import { taskSchema } from '../src/config/task-schema.js';
import { ConfigError } from '../common/errors.js';
import { type StoredDoc } from '../sandbox/repository/store.js';
import { buildParameters, fill, mapValues } from '../src/job/calls/values.js';
import { foundIn } from '../src/job/calls/execute.js';
import { callFor, TEMPLATE_NAMES, templateYaml } from '../src/config/templates.js';
import { sandboxEnv } from './helpers/env.js';

/** Declarative parameter mapping: transforms, targets, templates, and the checks made when a task is loaded. */
const doc = (properties: Record<string, unknown>) => ({
  uid: 'u1',
  path: '/ws/a.pdf',
  type: 'File',
  title: 'a',
  parentRef: 'p',
  changeToken: '1',
  facets: [],
  properties,
});

t.test('transforms turn repository values into ABAP values', async (t) => {
  const values = mapValues(
    {
      D: { property: 'dc:created', transform: ['date'] },
      F: { property: 'x:flag', transform: ['flag'] },
      N: { property: 'x:flag', transform: [] },
      U: { property: 'x:name', transform: ['trim', 'upper'] },
      P: { property: 'x:number', transform: [{ pad: { length: 10, with: '0', side: 'left' } }] },
      R: { property: 'x:number', transform: [{ pad: { length: 6, with: '_', side: 'right' } }] },
      E: { property: 'x:missing', transform: [{ pad: { length: 4, with: '0', side: 'left' } }, 'date'] },
      S: { property: 'x:name', transform: ['trim', { substring: { start: 2, length: 3 } }] },
      T: { property: 'x:name', transform: [{ substring: { start: 4 } }] },
      C: { constant: 42, transform: [] },
      B: { property: 'file:content.name', transform: [], length: 10 },
      Z: { property: 'file:nothing.name', transform: [] },
    },
    doc({
      'dc:created': '2024-01-15T10:00:00Z',
      'x:flag': true,
      'x:name': ' invoice ',
      'x:number': 4711,
      'file:content': { name: 'a.pdf' },
    }),
  );
  t.same(
    Object.fromEntries(values.map((v) => [v.target, v.value])),
    {
      D: '2024-01-15',
      F: 'X',
      N: 'true',
      U: 'INVOICE',
      P: '0000004711',
      R: '4711__',
      E: '',
      S: 'voi',
      T: 'oice ',
      C: '42',
      B: 'a.pdf',
      Z: '',
    },
    "a date as SAP's SOAP runtime reads it (asXML): YYYY-MM-DD",
  );
  t.same(
    mapValues(
      { D: { property: 'dc:created', transform: ['date'] } },
      doc({ 'dc:created': '2024-01-15T10:00:00Z' }),
      'YYYYMMDD',
    )[0].value,
    '20240115',
    'or YYYYMMDD, where a system is set so',
  );
  const classes = { M: { property: 'file:content.mime-type', transform: [{ map: { 'application/pdf': 'PDF' } }] } };
  t.same(
    mapValues(classes, doc({ 'file:content': { 'mime-type': 'application/pdf' } }))[0].value,
    'PDF',
    'a value mapped',
  );
  t.throws(() => mapValues(classes, doc({ 'file:content': { 'mime-type': 'text/plain' } })), {
    message: 'file:content.mime-type = "text/plain" has no entry in the map of SAP field M',
  });
  const address = { Url: { documentUrl: 'open' as const, transform: [], length: 60 } };
  t.throws(() => mapValues(address, doc({})), {
    message: 'its system has no documentLinks in erpHttp.yaml: no address to link it by',
    target: '/ws/a.pdf',
  });
  const long = {
    open: () => `https://cs.example.com/documents/x?expires=1&signature=${'S'.repeat(60)}`,
    stable: () => '',
  };
  t.throws(() => mapValues(address, doc({}), 'YYYY-MM-DD', long), {
    message:
      /^documentUrl Url = "https:\/\/cs\.example\.com\/documents\/x\?expires=1&signature=\*\*\*" is longer than the 60 characters of SAP field Url$/,
  });
  t.same(
    mapValues({ F: { property: 'x:flag', transform: ['flag'] } }, doc({ 'x:flag': false }))[0].value,
    '',
    'false is blank',
  );
  t.throws(
    () => mapValues({ AR_DATE: { property: 'dc:created', transform: ['date'] } }, doc({ 'dc:created': 'soon' })),
    {
      message: 'dc:created = "soon" is not a date (YYYY-MM-DD) for SAP field AR_DATE',
      target: '/ws/a.pdf',
    },
  );
  t.throws(
    () => mapValues({ ARCHIV_ID: { property: 'x:id', transform: ['upper'], length: 2 } }, doc({ 'x:id': 'abc' })),
    {
      message: 'x:id = "abc" is longer than the 2 characters of SAP field ARCHIV_ID',
    },
  );
  t.throws(() => mapValues({ K: { constant: 'too long', transform: [], length: 3 } }, doc({})), {
    message: 'constant K = "too long" is longer than the 3 characters of SAP field K',
  });
});

t.test('targets build scalars, structures, batch columns and fixed rows', async (t) => {
  const specs = {
    SCALAR: { property: 'x:a', transform: [] },
    BLANK: { property: 'x:none', transform: [] },
    'ENTRY.A': { property: 'x:a', transform: [] },
    'ENTRY.B': { property: 'x:none', transform: [] },
    'EMPTY.X': { property: 'x:none', transform: [] },
    'ROWS[].V': { property: 'x:a', transform: [] },
    'ROWS[].W': { property: 'x:none', transform: [] },
    'DATA[1].NAME': { constant: 'OBJID', transform: [] },
    'DATA[1].WERT': { property: 'x:a', transform: [] },
    'DATA[0].NAME': { constant: 'OTYPE', transform: [] },
    'DATA[0].WERT': { property: 'x:b', transform: [] },
    'NONE[0].NAME': { constant: 'K', transform: [] },
    'NONE[0].WERT': { property: 'x:none', transform: [] },
  };
  const one = mapValues(specs, doc({ 'x:a': 'A1', 'x:b': 'B1' }));
  const two = mapValues(specs, doc({ 'x:a': 'A2' }));
  t.same(
    buildParameters([one, two]),
    {
      SCALAR: 'A1',
      ENTRY: { A: 'A1' },
      EMPTY: {},
      ROWS: [
        { V: 'A1', W: '' },
        { V: 'A2', W: '' },
      ],
      DATA: [
        { NAME: 'OTYPE', WERT: 'B1' },
        { NAME: 'OBJID', WERT: 'A1' },
      ],
      NONE: [],
    },
    'blank scalars are left out, columns keep one row per document, fixed rows without a document value are dropped',
  );
  t.same(buildParameters([two]).DATA, [{ NAME: 'OBJID', WERT: 'A2' }]);
});

t.test('templates substitute and encode, never evaluate', async (t) => {
  const values = [
    { target: 'TYPE', value: "O'Brien & Co", fromDocument: true },
    { target: 'EMPTY', value: '', fromDocument: true },
  ];
  t.equal(fill('{TYPE}', values), "O'Brien & Co");
  t.equal(fill('x={q:TYPE}', values), "x='O''Brien%20%26%20Co'", 'an OData literal: quotes doubled, then URL-encoded');
  t.equal(fill('{u:TYPE}', values), "O'Brien%20%26%20Co");
  t.equal(fill('{EMPTY|TYPE}', values), "O'Brien & Co", 'the first value that is not blank');
  t.equal(fill('{response.d.n} {response.none} {UNKNOWN}', values, { d: { n: 7 } }), '7  ');
  t.equal(fill('{response.a.b}', values, { a: null }), '', 'a path through null is blank');
  t.equal(foundIn({}, { list: 'L' }, values), undefined, 'a lookup answer without the table finds nothing');
  t.same(foundIn({ L: [{ A: "O'Brien & Co" }, { A: 'x' }] }, { list: 'L', match: { A: '{TYPE}' } }, values), {
    A: "O'Brien & Co",
  });
  t.same(foundIn({ L: [{ A: 'x' }] }, { list: 'L' }, values), { A: 'x' }, 'without match any row counts');
  t.equal(fill('{constructor} ${TYPE}', values), ' $' + "O'Brien & Co", 'placeholders are names, nothing else');
  for (const value of ['.', '..'])
    t.throws(
      () => fill('/Set/{u:KEY}', [{ target: 'KEY', value, fromDocument: true }]),
      {
        name: 'DocumentError',
        message: `{u:KEY} = "${value}" cannot be placed into a URL: it would name another path`,
      },
      `${value} would move along the path however encoded: the document's error`,
    );
  t.equal(
    fill('/Set/{u:KEY}', [{ target: 'KEY', value: '../x/?a=b#c', fromDocument: true }]),
    '/Set/..%2Fx%2F%3Fa%3Db%23c',
  );
});

t.test(
  'the built-in templates parse, and print as YAML a task can use; bar codes and workflows have none over Rest',
  async (t) => {
    const base = { name: 't', function: 'RFC', schedule: '* * * * *' } as const;
    t.equal(
      (callFor(taskSchema.parse({ ...base, useCase: 'link' })).call as { function: string }).function,
      'ARCHIV_CONNECTION_INSERT',
    );
    t.equal(
      (callFor(taskSchema.parse({ ...base, useCase: 'link', function: 'Rest' })).call as { service: string }).service,
      '/sap/opu/odata/sap/API_CV_ATTACHMENT_SRV',
    );
    const { parse: parseYaml } = await import('yaml');
    for (const name of TEMPLATE_NAMES) {
      for (const transport of ['RFC', 'Rest'] as const) {
        const yaml = templateYaml(name, transport);
        // A read goes into a link task's file, as does the link by reference (over Rest only).
        const useCase =
          name === 'workflow-to-agent'
            ? 'workflow'
            : name.startsWith('read-') || name.startsWith('link')
              ? 'link'
              : name;
        if (yaml === undefined && name === 'link-by-reference') {
          t.equal(transport, 'RFC', 'the link by reference is an attachment service call: no RFC template');
          continue;
        }
        if (yaml === undefined) {
          t.ok(transport === 'Rest' && useCase !== 'link', `${name} ${transport}: no template`);
          const bare = taskSchema.safeParse({ ...base, useCase, function: transport });
          t.match(
            bare.error?.issues[0].message,
            /SAP offers no standard REST service for (bar codes|workflow starts): declare the call under rest/,
            'and a task without its own call is refused',
          );
          continue;
        }
        const task = taskSchema.safeParse({ ...base, useCase, function: transport, ...parseYaml(yaml) });
        t.ok(task.success, `${name} ${transport}: ${task.success ? '' : JSON.stringify(task.error.issues)}`);
      }
    }
  },
);

t.test('a broken call declaration is reported with every key path at load', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'c2e-mapping-'));
  const project = join(import.meta.dirname, '..');
  cpSync(join(project, 'config'), join(dir, 'config'), { recursive: true });
  cpSync(join(project, 'jobs'), join(dir, 'jobs'), { recursive: true });
  const task = (name: string, body: Record<string, unknown>) =>
    writeFileSync(join(dir, 'jobs', `${name}.yaml`), stringify({ name, schedule: '* * * * *', ...body }));
  task('link', {
    useCase: 'link',
    function: 'RFC',
    rfc: {
      function: 'ARCHIV_CONNECTION_INSERT',
      parameters: {
        'bad target!': { constant: 'x' },
        OBJECT_ID: { property: 'nocolon' },
        BOTH: { property: 'a:b', constant: 'c' },
        PADDED: { property: 'a:b', transform: [{ pad: { length: 4, with: '00' } }, 'lower'] },
      },
      result: { erpReference: '{OBJECT_ID} {NOPE} {response.X}' },
    },
    rest: { service: '/x' },
  });
  task('barcode', {
    useCase: 'barcode',
    function: 'Rest',
    rest: {
      service: '/sap/opu/odata/sap/ZBARCODE_SRV',
      method: 'POST',
      path: '/{MISSING}',
      body: 'content',
      headers: { 'X-A': '{u:ALSO_MISSING}' },
      parameters: { 'T[].A': { property: 'a:b' }, SINGLE: { property: 'a:c' }, CONST: { constant: 'k' } },
      lookup: { path: '/look?{MISSING}', found: { list: 'results', match: { A: '{GONE}' } } },
      result: { erpReference: '{T[].A}' },
    },
  });
  task('workflow', {
    useCase: 'workflow',
    function: 'RFC',
    rfc: {
      function: 'F',
      parameters: {},
      result: { erpReference: '{NOPE}' },
      lookup: { function: 'G', parameters: { P: '{Q}' }, found: { list: 'L' } },
    },
  });
  task('link-three', { useCase: 'link', function: 'RFC', ...parse(templateYaml('link', 'Rest') as string) });
  task('barcode-two', {
    useCase: 'barcode',
    function: 'RFC',
    rfc: {
      function: 'F',
      parameters: { 'T[].A': { property: 'a:b' } },
      result: { erpReference: '{T[].A}' },
      lookup: [
        { table: 'BDS_BAR_EX', where: { BARCODE: '{NOPE}' } },
        { function: 'G', parameters: { P: '{T[].A}' }, found: { list: 'L', startsWith: { X: '{GONE}' } } },
      ],
    },
  });
  task('link-two', {
    useCase: 'link',
    function: 'RFC',
    rfc: { function: 'F', parameters: { A: { constant: 'a' } }, result: { erpReference: '{A}' }, repeatable: true },
  });
  let thrown: unknown;
  t.throws(() => {
    try {
      loadConfig(configLocation({ config: join(dir, 'config') }));
    } catch (error) {
      thrown = error;
      throw error;
    }
  });
  {
    const lines = (thrown as ConfigError).problems.map((p) => `${p.file.slice(dir.length)}: ${p.path}: ${p.message}`);
    const expected = [
      /\/jobs\/link\.yaml: rfc\.parameters\.bad target!: NAME, STRUCT\.FIELD, TABLE\[\]\.FIELD or TABLE\[n\]\.FIELD/,
      /\/jobs\/link\.yaml: rfc\.parameters\.OBJECT_ID\.property: a repository property such as erpBarcode:barcode/,
      /\/jobs\/link\.yaml: rfc\.parameters\.BOTH: give exactly one of property, constant or documentUrl/,
      /\/jobs\/link\.yaml: rfc\.parameters\.PADDED\.transform\.0/,
      /\/jobs\/link\.yaml: rfc\.parameters\.PADDED\.transform\.1/,
      /\/jobs\/link\.yaml: rest\.method/,
      /\/jobs\/barcode\.yaml: rest\.path: \{MISSING\} is not one of the parameters/,
      /\/jobs\/barcode\.yaml: rest\.path: \{MISSING\} would put a value into the URL as it is, where it could change the request: write \{u:…\} for a path segment or query value \(percent-encoded\), \{q:…\} for an OData string literal/,
      /\/jobs\/barcode\.yaml: rest\.lookup\.path: \{MISSING\} would put a value into the URL as it is/,
      /\/jobs\/barcode\.yaml: rest\.lookup\.path: \{MISSING\} is not one of the parameters/,
      /\/jobs\/barcode\.yaml: rest\.headers\.X-A: \{ALSO_MISSING\} is not one of the parameters/,
      /\/jobs\/barcode\.yaml: rest\.lookup\.found\.match\.A: \{GONE\} is not one of the parameters/,
      /\/jobs\/barcode\.yaml: rest\.parameters\.SINGLE: in a call that batches documents \(TABLE\[\]\.FIELD\), values from the document go into table columns/,
      /\/jobs\/barcode-two\.yaml: rfc\.lookup\.0\.where\.BARCODE: \{NOPE\} is not one of the parameters/,
      /\/jobs\/barcode-two\.yaml: rfc\.lookup\.1\.found\.startsWith\.X: \{GONE\} is not one of the parameters/,
      /\/jobs\/barcode\.yaml: rest\.body: a call that batches documents \(TABLE\[\]\.FIELD\) sends body: parameters/,
      /\/jobs\/workflow\.yaml: rfc\.parameters: map at least one parameter/,
      /\/jobs\/workflow\.yaml: rfc\.result\.erpReference: \{NOPE\} is not one of the parameters/,
      /\/jobs\/link-three\.yaml: rest: function is RFC: declare the call under rfc/,
      /\/jobs\/link-two\.yaml: rfc\.repeatable: a link call sent again without a lookup links the document twice/,
    ];
    for (const pattern of expected)
      t.ok(
        lines.some((l) => pattern.test(l)),
        `${pattern}`,
      );
    t.notOk(
      lines.some((l) => l.includes('{response.X}')),
      'response fields are allowed in the result',
    );
  }
});

t.test('a task with its own mapping: transforms reach SAP, the result template is written back', async (t) => {
  const env = await sandboxEnv(t);
  const yaml = (templateYaml('link', 'RFC') as string)
    .replace(
      /OBJECT_ID:\n(\s+)property: erpCreateALDocument:erpObjectId\n\s+length: 50/,
      'OBJECT_ID:\n$1property: erpCreateALDocument:erpObjectId\n$1length: 50\n$1transform: [trim, upper, { pad: { length: 18 } }]',
    )
    .replace(
      'erpReference: "{SAP_OBJECT} {OBJECT_ID}"',
      'erpReference: "{SAP_OBJECT}/{OBJECT_ID}"\n    message: "linked as {AR_OBJECT}"',
    );
  t.match(yaml, 'pad: { length: 18 }', 'the template was adapted');
  const file = join(env.location.jobsDir, 'link.yaml');
  writeFileSync(file, `${readFileSync(file, 'utf8')}${yaml}`);
  const uid = await env.upload('ERP/Invoices', 'invoice-9.pdf');
  await env.job({ task: 'barcode' });
  env.fill(uid, { 'erpCreateALDocument:erpObjectId': ' 12ab ' });
  const report = await env.run();
  t.same(report.tasks.link.counts, { DONE: 1 });
  t.match(
    env.erp.tables.links,
    [{ OBJECT_ID: '0000000000000012AB', SAP_OBJECT: 'BKPF' }],
    'trimmed, upper-cased and padded to 18',
  );
  const props = (env.sandbox.store.get(uid) as StoredDoc).properties;
  t.equal(props['erpTaskStatus:erpReference'], 'BKPF/0000000000000012AB');
  t.equal(props['erpTaskStatus:message'], 'linked as ZFIINVOICE');
});
