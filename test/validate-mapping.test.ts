import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { ConfigError } from '../common/errors.js';
import { featureRegistry } from '../common/nuxeo/schemas.js';
import { parseMapping } from '../src/job/intake/mapping-file.js';
import { cli, PROJECT } from './helpers/run-cli.js';
import { MAPPING, sandboxEnv } from './helpers/env.js';
import { setUpRepository } from '../sandbox/demo.js';

/** `validate --mapping FILE`: a mapping file checked before it is uploaded, with what a run would say of it. */
t.setTimeout(360_000);

const CONFIG = join(PROJECT, 'config');
const SHIPPED = join(CONFIG, 'connector_configuration_connect_to_erp.json');
const dir = mkdtempSync(join(tmpdir(), 'c2e-mapping-'));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** The problems a command printed, each without the file it names (a local path here, the repository's in a run). */
const withoutFile = (lines: string[]): string[] => lines.map((line) => line.slice(line.indexOf(': ') + 2));

t.test('the shipped mapping file is valid', async (t) => {
  const result = await cli(['validate', '--config', CONFIG, '--mapping', SHIPPED]);
  t.equal(result.code, 0, result.stderr);
  t.match(result.stdout, /mapping file .*connector_configuration_connect_to_erp\.json is valid: 3 folder\(s\) mapped/);
});

t.test('a mapping with the mistakes a run reports is refused with the messages a run gives', async (t) => {
  const mapping = JSON.parse(MAPPING) as { mapping: Array<Record<string, any>> };
  const [barcode, invoices, workflow] = mapping.mapping;
  barcode.path = '/elsewhere';
  barcode.properties['erpHttpContent:created'] = '$dc:creatd';
  invoices.facets = ['fct_erp_http_content'];
  workflow.properties['erpStartWorkflow:erpObjId'] = '$name';
  invoices.properties['erpHttpContent:source'] = 'S5H';
  const text = JSON.stringify(mapping, null, 2);

  const local = await cli(['validate', '--config', CONFIG, '--mapping', file('bad.json', text)]);
  t.equal(local.code, 2);
  const printed = local.stderr.split('\n').filter((line) => line.startsWith(dir));
  t.ok(printed.length >= 5, local.stderr);
  const env = await sandboxEnv(t, { mapping: text });
  const run = await env.run();
  t.equal(run.exitCode, 2);
  t.same(withoutFile(printed).sort(), withoutFile(run.problems).sort(), 'the same problems, word for word');
  for (const expected of [
    'mapping[/elsewhere].path: must be a folder path under',
    'mapping[/elsewhere].properties.erpHttpContent:created: $dc:creatd: schema dublincore has no field creatd',
    'mapping[/default-domain/workspaces/ERP/Workflow].properties.erpStartWorkflow:erpObjId: $name: a $ value is $id or $<prefix:field>',
    'mapping[/default-domain/workspaces/ERP/Invoices].properties.erpHttpContent:source: "S5H" is not an ERP system of erpHttp.yaml',
  ])
    t.ok(
      printed.some((line) => line.includes(expected)),
      expected,
    );
});

t.test('a JSON syntax error is located by line and column; a file that cannot be read is named', async (t) => {
  const broken = file('broken.json', '{\n  "mapping": [\n    { "path" "/default-domain/workspaces/x" }\n  ]\n}\n');
  const syntax = await cli(['validate', '--config', CONFIG, '--mapping', broken]);
  t.equal(syntax.code, 2);
  t.match(syntax.stderr, `${broken}: not valid JSON at line 3, column 14: colon expected`);
  const bom = await cli(['validate', '--config', CONFIG, '--mapping', file('bom.json', `\uFEFF${MAPPING}`)]);
  t.equal(bom.code, 0, 'a byte order mark is not an error');
  const bomBroken = file('bom-broken.json', `\uFEFF{\n  "mapping": [\n    { "path" "/x" }\n  ]\n}\n`);
  const located = await cli(['validate', '--config', CONFIG, '--mapping', bomBroken]);
  t.match(located.stderr, 'not valid JSON at line 3, column 14: colon expected', 'located after a byte order mark too');
  const missing = await cli(['validate', '--config', CONFIG, '--mapping', join(dir, 'nowhere.json')]);
  t.equal(missing.code, 2);
  t.match(missing.stderr, /nowhere\.json: cannot read the file \(ENOENT/);
  const folder = await cli(['validate', '--config', CONFIG, '--mapping', dir]);
  t.equal(folder.code, 2, 'a folder given as the mapping file');
  t.match(folder.stderr, /: cannot read the file \(EISDIR/);
});

t.test(
  'a mapping file holding null: validate --mapping and mapping upload say what is expected, exit 2; a run says so and its tasks run',
  async (t) => {
    const nothing = file('null.json', 'null\n');
    const expected = `${nothing}: must be a JSON object with a list of entries: {"mapping": [{"path": …, "facets": …, …}]}`;
    const local = await cli(['validate', '--config', CONFIG, '--mapping', nothing]);
    t.equal(local.code, 2);
    t.match(local.stderr, expected);
    const env = await sandboxEnv(t);
    await env.upload('ERP/Workflow', 'approval.pdf');
    await env.run();
    await env.upload('ERP/Workflow', 'later.pdf');
    const upload = await cli(['mapping', 'upload', nothing, '--config', env.location.configDir]);
    t.equal(upload.code, 2);
    t.match(upload.stderr, expected);
    await setUpRepository(env.baseUrl, 'null');
    const run = await env.job();
    t.equal(run.exitCode, 2);
    t.match(run.problems, [/Connect to ERP Feature Configuration: must be a JSON object with a list of entries/]);
    t.equal(run.intake.counts.labelled, 0, 'no document labelled from it');
    t.same(
      Object.values(run.tasks).map((task) => task.state),
      ['finished', 'finished', 'finished'],
      'the tasks ran (over what was labelled before)',
    );
  },
);

t.test("a $ value naming a schema of the customer's own passes: only the server knows its fields", async (t) => {
  const mapping = JSON.parse(MAPPING) as { mapping: Array<Record<string, any>> };
  mapping.mapping[0].properties['erpBarcode:barcode'] = '$invoice:barcode';
  mapping.mapping[1].properties['erpCreateALDocument:erpFilename'] = '$file:content.name';
  const parsed = parseMapping(JSON.stringify(mapping), 'm.json', {
    registry: featureRegistry(),
    systems: ['S4H'],
    limits: new Map(),
  });
  t.equal(parsed.mapping[0].properties['erpBarcode:barcode'], '$invoice:barcode');
});

t.test('a file that is not a mapping file at all is refused as a whole, naming what is wrong', async (t) => {
  const problems = (text: string): string[] => {
    try {
      parseMapping(text, 'm.json', { registry: featureRegistry(), systems: ['S4H'], limits: new Map() });
      return [];
    } catch (error) {
      return (error as ConfigError).problems.map((p) => `${p.path}: ${p.message}`);
    }
  };
  const expected = 'must be a JSON object with a list of entries: {"mapping": [{"path": …, "facets": …, …}]}';
  for (const text of ['null', '[]', '"mapping"', '42', 'true', '{"mapping": null}', '{"mapping": {}}'])
    t.same(problems(text), [`${text.startsWith('{') ? 'mapping' : ''}: ${expected}`], text);
  t.match(problems('{"mapping": []}'), [/^mapping: /]);
  const entry = (JSON.parse(MAPPING) as { mapping: unknown[] }).mapping[0];
  t.match(
    problems(JSON.stringify({ mapping: [42, entry, entry] })),
    [/^mapping\[0\]: /, /^mapping\[1\]\.path: .* is mapped 2 times/, /^mapping\[2\]\.path: .* is mapped 2 times/],
    'a path mapped twice beside a broken entry: all three named, none used',
  );
  t.match(problems('{"mapping": "x"}'), [/^mapping: /]);
  t.match(problems('{"maping": []}'), [/maping|mapping/]);
});

t.test(
  'a value longer than the SAP field it goes to is refused by validate --mapping and a run, quoted cut to a readable length',
  async (t) => {
    const mapping = JSON.parse(MAPPING) as { mapping: Array<Record<string, any>> };
    const invoices = mapping.mapping[1];
    invoices.properties['erpCreateALDocument:erpDescription'] = 'x'.repeat(3 * 1024 * 1024);
    invoices.properties['erpCreateALDocument:erpCreator'] = 'A-USER-OF-THIRTEEN';
    mapping.mapping[0].properties['erpBarcode:docTyp'] = 'd'.repeat(2000);
    const local = await cli(['validate', '--config', CONFIG, '--mapping', file('long.json', JSON.stringify(mapping))]);
    t.equal(local.code, 2);
    t.match(
      local.stderr,
      `mapping[/default-domain/workspaces/ERP/Invoices].properties.erpCreateALDocument:erpDescription: "${'x'.repeat(80)}… (3145728 characters)" is longer than the 60 characters of SAP field DESCR (task link)`,
    );
    t.match(
      local.stderr,
      'mapping[/default-domain/workspaces/ERP/Invoices].properties.erpCreateALDocument:erpCreator: "A-USER-OF-THIRTEEN" is longer than the 12 characters of SAP field CREATOR (task link)',
    );
    t.match(
      local.stderr,
      `mapping[/default-domain/workspaces/ERP/Barcode].properties.erpBarcode:docTyp: "${'d'.repeat(80)}… (2000 characters)" is longer than the 1000 characters a mapping value may have`,
      'a property no SAP field takes has a length too',
    );
    t.ok(local.stderr.length < 4000, `said in ${local.stderr.length} characters`);

    invoices.properties['erpCreateALDocument:erpDescription'] = 'y'.repeat(61);
    invoices.properties['erpCreateALDocument:erpCreator'] = 'CONNECTOR';
    mapping.mapping[0].properties['erpBarcode:docTyp'] = 'ZBARCODE';
    const env = await sandboxEnv(t, { mapping: JSON.stringify(mapping) });
    const uid = await env.upload('ERP/Invoices', 'invoice.pdf');
    const run = await env.job();
    t.equal(run.exitCode, 2);
    t.match(run.problems, [
      /erpDescription: "y{61}" is longer than the 60 characters of SAP field DESCR \(task link\)/,
    ]);
    t.notOk(env.props(uid)['erpHttpContent:docId'], 'its folder is not labelled from it');
  },
);

t.test("a document's value too long for its SAP field is that document's intake error, quoted cut", async (t) => {
  const mapping = JSON.parse(MAPPING) as { mapping: Array<Record<string, any>> };
  mapping.mapping[1].properties['erpCreateALDocument:erpDescription'] = '$dc:description';
  const env = await sandboxEnv(t, { mapping: JSON.stringify(mapping) });
  const long = await env.upload('ERP/Invoices', 'long.pdf');
  const short = await env.upload('ERP/Invoices', 'short.pdf');
  env.fill(long, { 'dc:description': 'z'.repeat(100_000) });
  env.fill(short, { 'dc:description': 'A short one' });
  const run = await env.job();
  t.equal(run.exitCode, 1);
  const record = run.intake.documents.find((d) => d.uid === long);
  t.equal(
    record?.error,
    `erpCreateALDocument:erpDescription = $dc:description: "${'z'.repeat(80)}… (100000 characters)" is longer than the 60 characters of SAP field DESCR (task link)`,
  );
  t.notOk(env.props(long)['erpHttpContent:docId'], 'nothing written on it');
  t.equal(env.props(short)['erpCreateALDocument:erpDescription'], 'A short one', 'its neighbour is labelled');
  const huge = await env.upload('ERP/Invoices', 'huge.pdf');
  env.fill(huge, { 'dc:description': 'h'.repeat(5 * 1024 * 1024) });
  const later = await env.upload('ERP/Invoices', 'later.pdf');
  env.fill(later, { 'dc:description': 'Later' });
  const next = await env.job();
  t.equal(
    next.intake.documents.find((d) => d.uid === huge)?.error,
    'its values as the intake reads them are larger than 4 MiB together; it is left out until its large value is made smaller',
    "a document too large to read at all: its own error, found by the search's smaller pages",
  );
  t.equal(env.props(later)['erpCreateALDocument:erpDescription'], 'Later', 'the documents after it are labelled');
});

t.test(
  'a mapping file larger than 4 MiB is refused whole, by validate --mapping and by a run (whose tasks run)',
  async (t) => {
    const mapping = JSON.parse(MAPPING) as { mapping: Array<Record<string, any>> };
    mapping.mapping[0].properties['dc:description'] = 'm'.repeat(9 * 1024 * 1024);
    const text = JSON.stringify(mapping);
    const local = await cli(['validate', '--config', CONFIG, '--mapping', file('huge.json', text)]);
    t.equal(local.code, 2);
    t.match(local.stderr, 'huge.json: larger than 4 MiB: a mapping file takes about a kilobyte per folder mapped');
    const env = await sandboxEnv(t, { mapping: text });
    const run = await env.job();
    t.equal(run.exitCode, 2);
    t.match(run.problems, [/Connect to ERP Feature Configuration: larger than 4 MiB/]);
    t.same(
      Object.values(run.tasks).map((task) => task.state),
      ['finished', 'finished', 'finished'],
    );
  },
);

t.test(
  "userInput: the values users may change are the entry's use case's, and with the entry's they make a document ready",
  async (t) => {
    const rules = { registry: featureRegistry(), systems: ['S4H'], limits: new Map() };
    const mapping = JSON.parse(MAPPING) as { mapping: Array<Record<string, any>> };
    const [barcode, invoices, workflow] = mapping.mapping;
    barcode.userInput = ['erpBarcode:barcode', 'erpCreateALDocument:erpObjectId', 'erpBarcode:barcod'];
    delete invoices.properties['erpCreateALDocument:erpArchiveObject'];
    invoices.userInput = ['erpCreateALDocument:erpObjectId'];
    workflow.properties['erpStartWorkflow:erpStartWorkflow'] = false;
    workflow.userInput = ['erpStartWorkflow:erpStartWorkflow', 'erpStartWorkflow:erpOTyp'];
    const error = t.throws(() => parseMapping(JSON.stringify(mapping), 'm.json', rules)) as ConfigError;
    t.same(
      error.problems.map((p) => `${p.path}: ${p.message}`),
      [
        'mapping[/default-domain/workspaces/ERP/Barcode].userInput.1: not a value of fct_erp_barcode; users may change erpBarcode:barcode, erpBarcode:docTyp',
        'mapping[/default-domain/workspaces/ERP/Barcode].userInput.2: not a value of fct_erp_barcode (did you mean erpBarcode:barcode?); users may change erpBarcode:barcode, erpBarcode:docTyp',
        'mapping[/default-domain/workspaces/ERP/Invoices].userInput: its documents would wait for erpCreateALDocument:erpArchiveObject, which this entry neither sets nor lets users enter: give a value or list it here',
      ],
      'a workflow started by a user who may switch it on is fine',
    );
  },
);
