import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { templateYaml } from '../src/config/templates.js';
import { renderHtml } from '../src/job/report/html.js';
import { sandboxEnv, type Env } from './helpers/env.js';
import { configureReads, INVOICES, invoiceEnv } from './helpers/sap-data.js';
import { cli } from './helpers/run-cli.js';

// Dozens of runs and commands over real HTTP: 30 s on an idle 2-core machine, more beside another suite.
t.setTimeout(240_000);

/**
 * After a link: SAP's data about the business object read onto the document (a task's `read`) and
 * the address that opens it in SAP (a system's `openInSap`), both written with the DONE; a read
 * that fails leaves the document DONE with why.
 */

/** The run's HTML report, kept by `linked`. */
let lastPage = '';

async function linked(t: Test, env: Env, objectId: string): Promise<Record<string, unknown>> {
  const uid = await env.upload('ERP/Invoices', `invoice-${objectId}.pdf`);
  await env.job();
  env.fill(uid, { 'erpCreateALDocument:erpObjectId': objectId });
  const run = await env.job();
  t.equal(run.tasks.link.counts.DONE, 1, 'linked');
  lastPage = renderHtml(run);
  return env.props(uid);
}

for (const transport of ['RFC', 'Rest'] as const) {
  t.test(
    `${transport}: a linked supplier invoice carries the vendor, amount and dates SAP holds, and opens in SAP`,
    async (t) => {
      const env = await invoiceEnv(t, transport);
      const props = await linked(t, env, '51056001012026');
      t.equal(props['erpTaskStatus:status'], 'DONE');
      t.match(props, {
        // RFC answers the vendor in its internal form (ALPHA), OData in its external one.
        'erpData:vendor': transport === 'RFC' ? '0000100001' : '100001',
        'erpData:companyCode': '1000',
        'erpData:amount': 1190,
        'erpData:currency': 'EUR',
        'erpData:documentDate': '2026-11-20',
        'erpData:postingDate': '2026-11-23',
        'erpData:reference': 'RE-2026-4711',
      });
      t.match(props['erpData:readAt'], /^\d{4}-\d\d-\d\dT/);
      t.equal(
        props['erpTaskStatus:sapUrl'],
        'https://sap.example.com/sap/bc/gui/sap/its/webgui?~transaction=*MIR4%20RBKP-BELNR=5105600101;RBKP-GJAHR=2026;DYNP_OKCODE=/00',
      );
      t.equal(props['erpTaskStatus:message'] ?? null, null, 'nothing to tell');
      t.ok(
        lastPage.includes(
          '<a href="https://sap.example.com/sap/bc/gui/sap/its/webgui?~transaction=*MIR4%20RBKP-BELNR=5105600101;RBKP-GJAHR=2026;DYNP_OKCODE=/00">Open in SAP</a></td>',
        ),
        "the report's DONE list opens it in SAP",
      );
    },
  );

  t.test(
    `${transport}: an invoice SAP does not have is linked all the same, DONE with why its data is missing`,
    async (t) => {
      const env = await invoiceEnv(t, transport);
      const props = await linked(t, env, '51056001992026');
      t.equal(props['erpTaskStatus:status'], 'DONE', 'the read never undoes the link');
      t.match(
        props['erpTaskStatus:message'],
        transport === 'RFC'
          ? /^SAP's data could not be read: Invoice document 5105600199 2026 does not exist$/
          : /^SAP's data could not be read: GET .*A_SupplierInvoice.*Resource not found/,
      );
      t.equal(props['erpData:vendor'] ?? null, null, 'nothing written from SAP');
      t.match(lastPage, /Open in SAP<\/a><br>SAP&#39;s data could not be read/, 'the report says so beside the link');
      t.match(props['erpTaskStatus:sapUrl'], /RBKP-BELNR=5105600199;/, 'it still opens in SAP');
    },
  );
}

t.test('a read SAP fails to answer, and a value of the wrong type: DONE, told which', async (t) => {
  const env = await invoiceEnv(t);
  env.erp.faults.add({ functionName: 'BAPI_INCOMINGINVOICE_GETDETAIL', status: 500, body: 'ICM down', times: 1 });
  const first = await linked(t, env, '51056001012026');
  t.match(first['erpTaskStatus:message'], /^SAP's data could not be read: /);
  t.equal(first['erpTaskStatus:status'], 'DONE');

  env.erp.customizing.supplierInvoices[1].RMWWR = '12,50';
  const second = await linked(t, env, '51056001022026');
  t.match(second['erpTaskStatus:message'], /^erpData:amount: SAP's HEADERDATA.GROSS_AMNT = "12,50" is not a number$/);
  t.equal(second['erpData:vendor'], '0000100002', 'the other values are written');
  t.equal(second['erpData:amount'] ?? null, null);
});

/** The problems loadConfig finds, as `file|key|message`. */
async function problems(t: Test, env: Env): Promise<string[]> {
  const { loadConfig } = await import('../src/config/load.js');
  const error = t.throws(() => loadConfig(env.location)) as unknown as { problems: Array<Record<string, string>> };
  return error.problems.map((p) => `${p.file.replace(/^.*\//, '')}|${p.path}|${p.message}`);
}

t.test('validate names each mistake in a read and an "Open in SAP" template, by file and key', async (t) => {
  const env = await sandboxEnv(t);
  const task = join(env.location.jobsDir, 'link.yaml');
  const linkYaml = readFileSync(task, 'utf8');
  const read = (lines: string[]): void =>
    writeFileSync(task, `${linkYaml}read:\n${lines.map((l) => `  ${l}\n`).join('')}`);
  read([
    'function: BAPI_INCOMINGINVOICE_GETDETAIL',
    'parameters: { INVOICEDOCNUMBER: { property: erpCreateALDocument:erpObjectId } }',
    'properties:',
    '  erpTaskStatus:status: HEADERDATA.X',
    '  erpData:vendr: HEADERDATA.DIFF_INV',
    '  dc:subjects: HEADERDATA.COMP_CODE',
    '  myschema:vendor: HEADERDATA.DIFF_INV',
  ]);
  const erp = join(env.location.configDir, 'erpHttp.yaml');
  const open = `    openInSap:
      BUS2081: { url: 'https://sap.example.com/x?id={BELNR}&y={u:OTHER}', values: { BELNR: { constant: 'x' } } }
      BKPF: { url: '/relative/{u:A}', values: { A: { constant: 'x' } } }
      bkpf: { url: 'https://sap.example.com/', values: {} }
`;
  writeFileSync(erp, readFileSync(erp, 'utf8').replace(/^ *maxConcurrentCalls: 8\n/m, `$&${open}`));
  const seen = await problems(t, env);
  t.match(
    seen.filter((line) => line.startsWith('erpHttp.yaml')),
    [
      /^erpHttp.yaml\|systems.0.openInSap.BUS2081.url\|\{BELNR\} would put a value into the URL as it is/,
      /^erpHttp.yaml\|systems.0.openInSap.BUS2081.url\|\{OTHER\} is not one of the values$/,
      /^erpHttp.yaml\|systems.0.openInSap.BKPF.url\|an absolute http\(s\) address/,
      /^erpHttp.yaml\|systems.0.openInSap.bkpf\|an SAP object type/,
    ],
  );
  t.same(
    seen.filter((line) => line.startsWith('link.yaml')),
    [
      "link.yaml|read.properties.erpTaskStatus:status|the connector's own property: SAP's data goes to erpData or a schema of yours",
      'link.yaml|read.properties.erpData:vendr|schema erpData has no such field',
      'link.yaml|read.properties.dc:subjects|takes a list, a structure or a file: a read writes a single value',
    ],
    "a schema connect2erp does not know (the administrator's) is left to the repository",
  );

  read([
    'service: /sap/opu/odata/sap/API_SUPPLIERINVOICE_PROCESS_SRV',
    'path: /A_SupplierInvoice({q:NUMBER})',
    "parameters: { 'ROWS[].X': { property: erpCreateALDocument:erpObjectId } }",
    'properties: { erpData:vendor: InvoicingParty }',
  ]);
  t.same(
    (await problems(t, env)).filter((line) => line.startsWith('link.yaml')),
    [
      'link.yaml|read.function|an RFC task reads with a function module: name it',
      "link.yaml|read.service|the task's function is RFC: its read cannot use service",
      "link.yaml|read.path|the task's function is RFC: its read cannot use path",
      'link.yaml|read.path|{NUMBER} is not one of the parameters',
      'link.yaml|read.parameters.ROWS[].X|a read is made per document: no table columns',
    ],
  );

  writeFileSync(
    task,
    `${linkYaml.replace(/^function: RFC.*$/m, 'function: Rest')}read:\n  service: /sap/opu/odata/sap/API_SUPPLIERINVOICE_PROCESS_SRV\n  parameters: { INVOICE: { property: erpCreateALDocument:erpObjectId } }\n  properties: { erpData:vendor: InvoicingParty }\n`,
  );
  t.same(
    (await problems(t, env)).filter((line) => line.startsWith('link.yaml')),
    ['link.yaml|read.service|a Rest task reads with a GET: give its service and path'],
  );

  writeFileSync(task, linkYaml);
  const barcode = join(env.location.jobsDir, 'barcode.yaml');
  writeFileSync(barcode, `${readFileSync(barcode, 'utf8')}${templateYaml('read-purchase-order', 'RFC') as string}`);
  t.same(
    (await problems(t, env)).filter((line) => line.startsWith('barcode.yaml')),
    [
      `barcode.yaml|read|only a link names the business object whose data SAP gives: declare read in the link task's file`,
    ],
  );
});

/** Purchase orders (BUS2012, OAC3 with ZMMPO) in ERP/Invoices, read with the read-purchase-order template. */
const ORDERS = INVOICES.replace('"BUS2081"', '"BUS2012"').replace('"ZFIINVOICE"', '"ZMMPO"');

for (const transport of ['RFC', 'Rest'] as const) {
  t.test(
    `${transport}: a linked purchase order carries its vendor, company code and purchasing organisation`,
    async (t) => {
      const env = await invoiceEnv(t, transport, { mapping: ORDERS }, 'read-purchase-order');
      const props = await linked(t, env, '4500000001');
      t.match(props, {
        'erpTaskStatus:status': 'DONE',
        'erpData:vendor': transport === 'RFC' ? '0000100001' : '100001',
        'erpData:companyCode': '1000',
        'erpData:currency': 'EUR',
        'erpData:documentDate': '2026-11-01',
        'erpData:purchasingOrganization': '1000',
      });
      t.equal(props['erpTaskStatus:sapUrl'] ?? null, null, 'S4H has no "Open in SAP" for purchase orders');
      const missing = await linked(t, env, '4500000099');
      t.match(missing['erpTaskStatus:message'], /^SAP's data could not be read: .*(does not exist|Resource not found)/);
    },
  );
}

t.test('a link SAP refuses is not read; a read OData cannot answer is told', async (t) => {
  const env = await invoiceEnv(t, 'Rest');
  const uid = await env.upload('ERP/Invoices', 'refused.pdf');
  await env.job();
  // No object id of 14 characters: SAP refuses the attachment, and nothing is read.
  env.fill(uid, { 'erpCreateALDocument:erpObjectId': '', 'erpCreateALDocument:erpObject': 'NOSUCH' });
  env.fill(uid, { 'erpCreateALDocument:erpObjectId': '51056001012026' });
  const run = await env.job();
  t.equal(run.tasks.link.counts.FAILED, 1, String(env.props(uid)['erpTaskStatus:message']));
  t.equal(env.props(uid)['erpData:vendor'] ?? null, null);

  env.erp.faults.add({ path: 'A_SupplierInvoice', status: 503, body: 'Service unavailable', times: 1 });
  const props = await linked(t, env, '51056001022026');
  t.match(props['erpTaskStatus:message'], /^SAP's data could not be read: .*503/);
});

t.test('values the repository will not keep never cost the link', async (t) => {
  const env = await invoiceEnv(t);
  const task = join(env.location.jobsDir, 'link.yaml');
  const yaml = readFileSync(task, 'utf8');
  writeFileSync(
    task,
    yaml.replace('erpData:reference: HEADERDATA.REF_DOC_NO', 'myschema:reference: HEADERDATA.REF_DOC_NO'),
  );
  const dropped = await linked(t, env, '51056001012026');
  t.equal(dropped['erpTaskStatus:status'], 'DONE', 'a schema the document lacks: accepted, not stored');
  t.equal(dropped['erpTaskStatus:message'] ?? null, null, 'the DONE as written');
  t.match(
    lastPage,
    'SAP&#39;s data may not have been stored: myschema:reference (is its schema on the document, and the value of its type?)',
    'the report says which',
  );
  t.equal(dropped['erpData:vendor'], '0000100001', 'the values of its own schema are');
  t.match(dropped['erpTaskStatus:sapUrl'], /^https:/);

  writeFileSync(task, yaml);
  const uid = await env.upload('ERP/Invoices', 'refused.pdf');
  await env.job();
  env.fill(uid, { 'erpCreateALDocument:erpObjectId': '51056001022026' });
  const entity = JSON.stringify({ 'entity-type': 'exception', status: 400, message: 'Unknown property' });
  // The claim's write goes through; the DONE's, with SAP's data, is refused.
  env.sandbox.faults.add({ method: 'PUT', path: `/id/${uid}`, status: 400, body: entity, skip: 1, times: 1 });
  const run = await env.job();
  t.equal(run.tasks.link.counts.DONE, 1);
  const refused = env.props(uid);
  t.equal(refused['erpTaskStatus:status'], 'DONE', 'written again without them');
  t.match(refused['erpTaskStatus:message'], /^SAP's data was not written: .*Unknown property/);
  t.equal(refused['erpData:vendor'] ?? null, null);
  t.equal(refused['erpTaskStatus:sapUrl'] ?? null, null, 'the address went with them');
});

t.test("the ERP sandbox's business-document services answer reads only, as Gateway does", async (t) => {
  const env = await sandboxEnv(t);
  const { url, auth } = env.config.erp.systems[0].rest as { url: string; auth: { username: string; password: string } };
  const authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
  const root = `${url}/sap/opu/odata/sap/API_PURCHASEORDER_PROCESS_SRV`;
  const post = await fetch(`${root}/A_PurchaseOrder('4500000001')`, { method: 'POST', headers: { authorization } });
  t.equal(post.status, 405);
  const service = await fetch(`${root}/`, { headers: { authorization, accept: 'application/json' } });
  t.same(await service.json(), { d: { EntitySets: ['A_PurchaseOrder'] } });
  const invoices = await fetch(`${url}/sap/opu/odata/sap/API_SUPPLIERINVOICE_PROCESS_SRV/`, {
    headers: { authorization },
  });
  t.same(await invoices.json(), { d: { EntitySets: ['A_SupplierInvoice'] } });
  t.equal((await fetch(`${root}/A_Other('1')`, { headers: { authorization } })).status, 404, 'another entity set');
});

t.test('sap-data: documents linked before the read and "Open in SAP" were configured get them on demand', async (t) => {
  const env = await sandboxEnv(t, { mapping: INVOICES });
  const before = await linkedUid(env, '51056001012026');
  const unknown = await linkedUid(env, '51056001992026');
  t.equal(env.props(before)['erpData:vendor'] ?? null, null, 'linked with nothing configured');
  configureReads(env);
  const where = ['--config', env.location.configDir];

  const dry = await cli(['sap-data', '--dry-run', ...where]);
  t.equal(dry.code, 1, 'one document SAP has no data for');
  t.match(dry.stdout, `(${before}): would write erpTaskStatus:sapUrl, erpData:vendor`);
  t.match(
    dry.stdout,
    `(${unknown}): would write erpTaskStatus:sapUrl\n    SAP's data could not be read: Invoice document 5105600199 2026 does not exist`,
  );
  t.match(dry.stdout, "2 document(s): would write SAP's data; 1 with something SAP could not give");
  t.equal(env.props(before)['erpData:vendor'] ?? null, null, 'a dry run writes nothing');

  const live = await cli(['sap-data', ...where]);
  t.equal(live.code, 1);
  t.equal(env.props(before)['erpData:vendor'], '0000100001');
  t.match(env.props(before)['erpTaskStatus:sapUrl'], /RBKP-BELNR=5105600101;/);
  t.equal(env.props(before)['erpTaskStatus:status'], 'DONE', 'its status untouched');

  const rest = await cli(['sap-data', ...where]);
  t.notMatch(rest.stdout, before, 'read once: not again unless asked');
  t.match(rest.stdout, unknown, 'one without data is asked again');

  env.erp.customizing.supplierInvoices[0].RMWWR = '1200.00';
  const again = await cli(['sap-data', '--doc', before, '--again', ...where]);
  t.equal(again.code, 0, again.stderr);
  t.equal(env.props(before)['erpData:amount'], 1200, 'SAP changed it, read again');

  env.sandbox.faults.add({ method: 'PUT', path: `/id/${before}`, status: 409, body: '{}', times: 1 });
  const conflict = await cli(['sap-data', '--doc', before, '--again', ...where]);
  t.equal(conflict.code, 1);
  t.match(conflict.stdout, `(${before}): nothing written\n    not written: `);
  const other = await cli(['sap-data', '--doc', before, '--task', 'workflow', ...where]);
  t.equal(other.code, 2, 'a DONE document of another task');
  env.fill(before, { 'erpHttpContent:source': 'GONE' });
  const gone = await cli(['sap-data', '--doc', before, '--again', ...where]);
  t.match(gone.stdout, `(${before}): nothing written\n    no ERP system "GONE"`);
  const flow = await env.upload('ERP/Workflow', 'order.pdf');
  await env.job();
  t.equal(env.props(flow)['erpTaskStatus:status'], 'DONE');
  t.notMatch((await cli(['sap-data', ...where])).stdout, flow, 'a workflow start names no business object');

  const notDone = await env.upload('ERP/Invoices', 'waiting.pdf');
  await env.job();
  const refused = await cli(['sap-data', '--doc', notDone, ...where]);
  t.equal(refused.code, 2);
  t.match(refused.stderr, 'is not a DONE document of a task that reads');
  t.equal((await cli(['sap-data', '--doc', 'no-such-uid', ...where])).code, 2);
});

/** A supplier invoice linked by a run of the task as configured; its uid. */
async function linkedUid(env: Env, objectId: string): Promise<string> {
  const uid = await env.upload('ERP/Invoices', `invoice-${objectId}.pdf`);
  await env.job();
  env.fill(uid, { 'erpCreateALDocument:erpObjectId': objectId });
  await env.job();
  return uid;
}

t.test('sap-data with a system that opens nothing in SAP, and one without the connection the read needs', async (t) => {
  const env = await sandboxEnv(t, { mapping: INVOICES });
  const uid = await linkedUid(env, '51056001012026');
  configureReads(env);
  const task = join(env.location.jobsDir, 'link.yaml');
  for (const name of ['link', 'barcode', 'workflow']) {
    const file = join(env.location.jobsDir, `${name}.yaml`);
    writeFileSync(file, `${readFileSync(file, 'utf8')}systems: [S4H]\n`);
  }
  const erp = join(env.location.configDir, 'erpHttp.yaml');
  const rest = `  - name: S4R\n    client: '100'\n    rest:\n      url: ${env.config.erp.systems[0].rest?.url as string}\n      auth: { username: CONNECTOR, password: sandbox }\n`;
  writeFileSync(erp, `${readFileSync(erp, 'utf8')}${rest}`);
  env.fill(uid, { 'erpHttpContent:source': 'S4R' });
  const where = ['--config', env.location.configDir, '--doc', uid];
  const noRfc = await cli(['sap-data', ...where]);
  t.match(noRfc.stdout, `(${uid}): nothing written\n    SAP's data not read: S4R has no RFC connection`);

  const withRead = readFileSync(task, 'utf8');
  writeFileSync(task, withRead.replace(/^read:[\s\S]*?(?=^systems:)/m, ''));
  const nothing = await cli(['sap-data', ...where]);
  t.equal(nothing.code, 0, nothing.stderr);
  t.match(nothing.stdout, `(${uid}): nothing written\n0 document(s)`, 'S4R opens nothing and the task reads nothing');
  const all = ['--config', env.location.configDir];
  env.fill(uid, { 'erpHttpContent:source': 'S4H' });
  const addresses = await cli(['sap-data', ...all]);
  t.match(
    addresses.stdout,
    `(${uid}): wrote erpTaskStatus:sapUrl\n1 document(s)`,
    'without a read: those lacking an address',
  );

  // A read, and no system opening anything in SAP: those never read.
  writeFileSync(task, withRead);
  writeFileSync(erp, readFileSync(erp, 'utf8').replace(/^ *openInSap:\n(?: {6,}.*\n)*/m, ''));
  const read = await cli(['sap-data', ...all]);
  t.match(read.stdout, `(${uid}): wrote erpData:vendor`);
  t.match((await cli(['sap-data', ...all])).stdout, /^0 document\(s\)/m, 'read once');
  const again = await cli(['sap-data', '--again', ...all]);
  t.equal(again.code, 0, again.stderr);
  t.match(again.stdout, `(${uid}): wrote erpData:vendor`, 'every DONE document again');
});
