import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { exceptionXml } from '../sandbox/erp/soap-codec.js';
import { NO_BLOBS, type StoredDoc } from '../sandbox/repository/store.js';
import { FIXTURE_AUTH_ID, fixture, servedEnv } from './helpers/content-server.js';
import { MAPPING, sandboxEnv, type Env } from './helpers/env.js';
import { cli, PROJECT } from './helpers/run-cli.js';
import { templateYaml } from '../src/config/templates.js';
import { FOLDER_CHAIN } from '../src/repository/client.js';
import { doctorChecks } from '../src/commands/doctor.js';

/** `connect2erp doctor` against the sandboxes: all well, then with each fault a landscape can have. */
t.setTimeout(300_000);

interface Check {
  section: string;
  outcome: 'pass' | 'fail' | 'skip';
  found: string;
  advice?: string;
}

const MAPPING_PATH = '/default-domain/workspaces/admin/Connect to ERP Feature Configuration';

/**
 * `doctor --json`'s checks and exit code, run in this process: the same checks, over HTTP against
 * the sandboxes, without a process of its own for each (about three seconds of CPU under the tests'
 * TypeScript and coverage). `vars` stand in the environment while it runs. The command's own
 * wiring, its text and JSON output and exit codes, is run as a process below (`doctorCli`).
 */
async function doctor(env: Env, vars: Record<string, string> = {}): Promise<{ code: number; checks: Check[] }> {
  const saved = Object.keys(vars).map((name) => [name, process.env[name]] as const);
  Object.assign(process.env, vars);
  try {
    const { code, checks } = await doctorChecks(env.location);
    return { code, checks: JSON.parse(JSON.stringify(checks)) as Check[] };
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/** `connect2erp doctor --json` as its own process: what it prints and its exit code, as an operator gets them. */
async function doctorCli(env: Env): Promise<{ code: number | null; checks: Check[] }> {
  const result = await cli(['doctor', '--json', '--config', env.location.configDir]);
  if (!result.stdout.startsWith('{')) throw new Error(`no JSON (exit ${String(result.code)}): ${result.stderr}`);
  const { ok, checks } = JSON.parse(result.stdout) as { ok: boolean; checks: Check[] };
  if (ok !== (result.code === 0)) throw new Error(`ok is ${String(ok)} with exit code ${String(result.code)}`);
  return { code: result.code, checks };
}

const failures = (checks: Check[]): string[] => checks.filter((c) => c.outcome === 'fail').map((c) => c.found);
const find = (checks: Check[], pattern: RegExp): Check | undefined => checks.find((c) => pattern.test(c.found));

function edit(env: Env, file: string, from: string | RegExp, to: string): void {
  const path = join(env.location.configDir, file);
  writeFileSync(path, readFileSync(path, 'utf8').replace(from, to));
}

const ace = (username: string, permission: string, granted = true) => ({
  username,
  permission,
  granted,
  creator: null,
  begin: null,
  end: null,
});

/** The mapping file the tests start from, with changes to its entries. */
function mappingWith(change: (entries: Array<{ path: string; properties: Record<string, unknown> }>) => void): string {
  const file = JSON.parse(MAPPING) as { mapping: Array<{ path: string; properties: Record<string, unknown> }> };
  change(file.mapping);
  return JSON.stringify(file);
}

/** What an older or foreign package would declare: a Nuxeo answer for `config/facets/{name}`. */
function declaredFacet(env: Env, facet: string, schemas: unknown[]): void {
  env.sandbox.faults.add({
    path: `/api/v1/config/facets/${facet}`,
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ 'entity-type': 'facet', name: facet, schemas }),
  });
}

t.test('on a landscape set up as the guides say, every check passes: exit 0, and nothing is written', async (t) => {
  const env = await servedEnv(t);
  await env.trust('dsa.crt');
  edit(env, 'contentServer.yaml', /^pathPrefix:/m, `publicUrl: ${env.origin}\npathPrefix:`);
  copyFileSync(join(PROJECT, 'crontab'), join(env.location.configDir, '..', 'crontab'));
  const before = env.snapshot();
  const { code, checks } = await doctorCli(env);
  t.equal(code, 0);
  t.same(failures(checks), []);
  for (const expected of [
    /^valid: 3 task\(s\), 1 ERP system\(s\), 3 schedule\(s\)/,
    /^reachable, signed in as Administrator$/,
    /^Nuxeo LTS 2023\.0: checked against its source \(docs\/nuxeo-setup\.md, "Which LTS, checked how"\)$/,
    /^adminPath \/default-domain\/workspaces\/admin found$/,
    /^facet fct_erp_barcode deployed \(erp_barcode\)$/,
    /^facet fct_erp_config_file_connect2erp deployed \(no schema\)$/,
    /^the Automation chain connect2erp\.PlaceInArchiveLinkFolder deployed, and run for this user$/,
    /^mapping file .*Connect to ERP Feature Configuration valid: 3 folder\(s\) mapped$/,
    /^mapping file readable by administrators only$/,
    /^may write in \/default-domain\/workspaces\/ERP\/Invoices$/,
    /^SOAP-RFC service active, logon accepted \(user CONNECTOR, client 100, RFC_PING\)$/,
    /^ARCHIV_GET_CONNECTIONS may be called \(NOTHING_FOUND\)$/,
    /^BAPI_BARCODE_SENDLIST may be called$/,
    /^BDS_BAR_EX may be read \(a lost answer is looked up there\)$/,
    /^task link: ARCHIV_CONNECTION_INSERT's interface takes what the task sends$/,
    /^task barcode: BAPI_BARCODE_SENDLIST's interface takes what the task sends — BARCODETABLE \(BAPIBARC\): BARCODE, CONTREP, DOCID, ARDATE, DOCTYPE; left empty: none$/,
    /^task workflow: ARCHIV_PROCESS_RFCINPUT's interface takes what the task sends — DOCUMENT_ENTRY \(OARFCIN\): ARCHIV_ID, ARC_DOC_ID, AR_OBJECT, DOC_TYPE, BARCODE, LATE; left empty: none$/,
    /^dates accepted as YYYY-MM-DD/,
    /^content repository Z1 defined \(OAC0\)$/,
    /^document type ZFIINVOICE defined \(OAC2, class PDF\)$/,
    /^document type ZINVWF defined \(OAC2, class PDF\)$/,
    /^link BKPF – ZFIINVOICE maintained \(OAC3, content repository Z1\)$/,
    /^connection S4H answers serverInfo at http:\/\/127\.0\.0\.1:\d+\/archivelink\/S4H$/,
    /^connection S4H signs in to the repository as Administrator \(repositoryAuth\)$/,
    /^content repository Z1: storagePath \/default-domain\/workspaces\/sap-archive\/Z1 found$/,
    /^content repository Z1: 1 approved certificate\(s\)$/,
  ])
    t.equal(find(checks, expected)?.outcome, 'pass', String(expected));
  t.same(
    checks.filter((c) => c.outcome === 'skip').map((c) => c.found.split(':')[0]),
    ['ARCHIV_CONNECTION_INSERT', 'ARCHIV_PROCESS_RFCINPUT'],
    'only the function modules with no harmless call are left unchecked',
  );
  t.equal(env.snapshot(), before, 'nothing was written to the repository or SAP');

  const text = await cli(['doctor', '--config', env.location.configDir]);
  t.equal(text.code, 0);
  t.match(text.stdout, /^configuration\n {2}✔ valid: /);
  t.match(
    text.stdout,
    /\n\nERP system S4H http:\/\/127\.0\.0\.1:\d+\/sap\/bc\/soap\/rfc\n {2}✔ SOAP-RFC service active/,
  );
  t.match(text.stdout, /\n {2}– ARCHIV_CONNECTION_INSERT: no call that changes nothing exists/);
  t.match(text.stdout, /\n\d+ passed, 0 failed, 2 not checked\n$/);
});

t.test(
  'each fault of the repository, the mapping and the SAP customizing is its own failed line, with what to do',
  async (t) => {
    const mapping = mappingWith((entries) => {
      const [barcode, invoices, workflow] = entries;
      barcode.path = '/default-domain/workspaces/ERP/Scans';
      barcode.properties['erpHttpContent:archiveId'] = 'ZX';
      invoices.properties['erpCreateALDocument:erpDescription'] = '$inv:summary';
      invoices.properties['erpCreateALDocument:erpCreator'] = '$inv:clerk';
      invoices.properties['erpCreateALDocument:erpFilename'] = '$zz:name';
      invoices.properties['erpCreateALDocument:erpClient'] = '$notes:text';
      workflow.properties['erpStartWorkflow:erpArchiveObject'] = 'ZUNKNOWN';
      entries.push({
        ...workflow,
        path: '/default-domain/workspaces/ERP/Broken',
        properties: { ...workflow.properties, 'erpStartWorkflow:erpOTyp': 'XX' },
      });
    });
    const env = await sandboxEnv(t, {
      mapping,
      undeployedFacets: ['fct_erp_barcode'],
      undeployedChains: [FOLDER_CHAIN],
    });
    env.sandbox.store.setAcls(env.sandbox.actor(), env.sandbox.store.getByPath(MAPPING_PATH) as StoredDoc, [
      { name: 'local', aces: [ace('Everyone', 'Read')] },
    ]);
    declaredFacet(env, 'fct_erp_start_workflow', [
      {
        'entity-type': 'schema',
        name: 'erp_start_workflow',
        prefix: 'erpStartWorkflow',
        '@prefix': 'erpStartWorkflow',
        fields: { erpArchiveObject: 'string' },
      },
    ]);
    declaredFacet(env, 'fct_erp_sap_document', []);
    declaredFacet(env, 'fct_erp_task_status', [
      { 'entity-type': 'schema', name: 'erp_task_status', prefix: 'ts', '@prefix': 'ts', fields: {} },
    ]);
    env.sandbox.faults.add({ path: '/api/v1/config/facets/fct_erp_certificate', status: 500, body: '{}' });
    // The customer's own schema `invoice`, deployed with a field `summary` and none called `clerk`.
    env.sandbox.faults.add({
      path: '/api/v1/config/schemas',
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([
        { name: 'invoice', '@prefix': 'inv', fields: { summary: 'string' } },
        // A schema declared without a prefix is referred to by its name.
        { name: 'notes', '@prefix': '', fields: { text: 'string' } },
      ]),
    });
    edit(env, 'erpHttp.yaml', 'dateFormat: YYYY-MM-DD', 'dateFormat: YYYYMMDD');
    env.erp.customizing.users.CONNECTOR.rfc = ['RFC_PING', 'ARCHIV_GET_CONNECTIONS', 'RFC_READ_TABLE'];
    env.erp.customizing.links[0].contentRepository = 'Z2';
    edit(env, 'contentServer.yaml', /^pathPrefix:/m, 'publicUrl: http://127.0.0.1:9\npathPrefix:');
    const { code, checks } = await doctorCli(env);
    t.equal(code, 2);
    const expectations: Array<[RegExp, RegExp]> = [
      [/^facet fct_erp_barcode is not deployed$/, /install this version's Nuxeo package/],
      [
        /^the Automation chain connect2erp\.PlaceInArchiveLinkFolder is not deployed: the package is older than this version/,
        /install this version's Nuxeo package/,
      ],
      [
        /^facet fct_erp_start_workflow: schema erp_start_workflow lacks erpBarcode, erpDocumentTyp, erpLateArchiving, erpOTyp, erpObjId, erpStartWorkflow$/,
        /install this version's Nuxeo package/,
      ],
      [/^facet fct_erp_sap_document: schema erp_sap_document missing$/, /Nuxeo package/],
      [/^facet fct_erp_task_status: schema erp_task_status has prefix ts, not erpTaskStatus$/, /Nuxeo package/],
      [/^facet fct_erp_certificate: .*HTTP 500/, /Nuxeo package/],
      [
        /^mapping file .*: 1 problem\(s\): .*mapping\[\/default-domain\/workspaces\/ERP\/Broken\]\.properties\.erpStartWorkflow:erpOTyp: must be one of/,
        /connect2erp validate --mapping FILE/,
      ],
      [/^mapping file readable by Everyone/, /block inheritance on adminPath/],
      [
        /^\$inv:clerk: schema invoice has no field clerk$/,
        /fix the reference in the mapping file, or deploy the schema/,
      ],
      [/^\$zz:name: no schema with prefix zz$/, /fix the reference/],
      [
        /^mapped folder \/default-domain\/workspaces\/ERP\/Scans: .*HTTP 404/,
        /create it, or fix its path in the mapping file/,
      ],
      [/^BAPI_BARCODE_SENDLIST: .*No RFC authorization/, /give the user S_RFC for BAPI_BARCODE_SENDLIST/],
      [
        /^dates refused as YYYYMMDD \(ARCHIV_GET_CONNECTIONS: SAP's SOAP runtime refused the call: .*\), accepted as YYYY-MM-DD$/,
        /^set rfc\.dateFormat: YYYY-MM-DD for S4H in erpHttp\.yaml$/,
      ],
      [/^content repository ZX not defined$/, /OAC0/],
      [/^document type ZUNKNOWN not defined$/, /OAC2/],
      [
        /^link BKPF – ZFIINVOICE stores in Z2, not Z1$/,
        /make OAC3 and erpHttpContent:archiveId name the same content repository/,
      ],
      [
        /^connection S4H not reachable at http:\/\/127\.0\.0\.1:9\/archivelink\/S4H/,
        /start connect2erp serve there, or fix publicUrl/,
      ],
    ];
    for (const [found, advice] of expectations) {
      const check = find(checks, found);
      t.equal(check?.outcome, 'fail', String(found));
      t.match(check?.advice, advice, String(found));
    }
    t.equal(find(checks, /^\$inv:summary is a property of schema invoice$/)?.outcome, 'pass');
    t.equal(find(checks, /^\$notes:text is a property of schema notes$/)?.outcome, 'pass');
    t.equal(failures(checks).length, expectations.length, failures(checks).join('\n'));
  },
);

t.test(
  'SICF off and a repository that does not answer: one line each, the rest of their section not checked',
  async (t) => {
    const env = await sandboxEnv(t);
    env.erp.soapRfcActive = false;
    edit(env, 'storage.yaml', /^url: .*$/m, 'url: http://127.0.0.1:9/nuxeo');
    // Something answers there, but not serve: the repository's server.
    edit(env, 'contentServer.yaml', /^pathPrefix:/m, `publicUrl: ${new URL(env.baseUrl).origin}\npathPrefix:`);
    const { code, checks } = await doctor(env);
    t.equal(code, 2);
    t.equal(failures(checks).length, 3, failures(checks).join('\n'));
    t.match(find(checks, /^not reachable/), {
      section: 'repository http://127.0.0.1:9/nuxeo',
      advice: /check url and apiPath in storage\.yaml/,
    });
    t.match(find(checks, /^RFC_PING: .*HTTP 403/), {
      advice: /activate default_host\/sap\/bc\/soap\/rfc in transaction SICF/,
    });
    t.match(find(checks, /^connection S4H answered serverInfo with HTTP 404$/), { advice: /publicUrl reaches it/ });
    t.ok(find(checks, /^the other checks of S4H: they need a logon$/));
    t.ok(find(checks, /^the other repository checks: they need the repository$/));

    const text = await cli(['doctor', '--config', env.location.configDir]);
    t.equal(text.code, 2);
    t.match(text.stdout, /\n {2}✘ RFC_PING: .*\n {4}→ activate default_host\/sap\/bc\/soap\/rfc in transaction SICF/);
    t.match(text.stdout, /\n\d+ passed, 3 failed, \d+ not checked\n$/);
  },
);

t.test(
  "SAP's interfaces settle what the tasks send: a structure without a field the task fills, a shorter field, an unknown module",
  async (t) => {
    const env = await sandboxEnv(t);
    // Another release: OARFCIN without BARCODE and with an agent's user name, OBJECT_ID of 30 characters.
    const entry = env.erp.interfaces.ARCHIV_PROCESS_RFCINPUT.imports.DOCUMENT_ENTRY as Record<string, unknown>;
    delete entry.BARCODE;
    entry.USERNAME = { kind: 'CHAR', length: 12 };
    env.erp.interfaces.ARCHIV_CONNECTION_INSERT.imports.OBJECT_ID = { kind: 'CHAR', length: 30 };
    (env.erp.interfaces.ARCHIV_PROCESS_RFCINPUT.imports.DOCUMENT_ENTRY as Record<string, unknown>).DOC_TYPE = {
      kind: 'CHAR',
      length: 10,
    };
    const { code, checks } = await doctor(env);
    t.equal(code, 2);
    const workflow = find(checks, /^task workflow: /);
    t.equal(workflow?.outcome, 'fail');
    t.match(
      workflow?.found,
      "DOCUMENT_ENTRY (OARFCIN) has no field BARCODE; SAP's fields: ARCHIV_ID, ARC_DOC_ID, AR_OBJECT, DOC_TYPE, LATE, USERNAME",
    );
    t.match(
      workflow?.found,
      'DOCUMENT_ENTRY-DOC_TYPE takes 10 characters, the task lets 20 through: set its length to 10',
    );
    t.match(workflow?.advice, /connect2erp template workflow RFC/);
    t.match(workflow?.found, 'left empty: USERNAME', "SAP's field the task does not fill: where an agent could go");
    t.match(find(checks, /^task link: /), {
      outcome: 'fail',
      found: /OBJECT_ID takes 30 characters, the task lets 50 through: set its length to 30/,
    });
    t.equal(find(checks, /^task barcode: /)?.outcome, 'pass', 'the other task unaffected');

    // A task whose call names a module SAP does not have.
    const job = join(env.location.jobsDir, 'link.yaml');
    writeFileSync(
      job,
      `${readFileSync(job, 'utf8')}rfc:\n  function: Z_CONNECT2ERP_LINK\n  parameters:\n    OBJECT_ID: { property: 'erpCreateALDocument:erpObjectId', length: 50 }\n  result: { erpReference: '{OBJECT_ID}' }\n`,
    );
    const unknown = find((await doctor(env)).checks, /^task link: /);
    t.match(unknown, { outcome: 'fail', found: /Z_CONNECT2ERP_LINK.*FU_NOT_FOUND/, advice: /not remote-enabled/ });
  },
);

t.test(
  'each kind of difference between a task and SAP is named; a user who may not read interfaces is told how',
  async (t) => {
    const env = await sandboxEnv(t);
    const job = join(env.location.jobsDir, 'link.yaml');
    const call = [
      'rfc:',
      '  function: ARCHIV_CONNECTION_INSERT',
      '  parameters:',
      "    NOPE: { constant: 'x' }",
      "    'SAP_OBJECT.FIELD': { constant: 'BKPF' }",
      "    OBJECT_ID: { property: 'erpCreateALDocument:erpObjectId', length: 50 }",
      "    ARC_DOC_ID: { property: 'erpHttpContent:docId', length: 40 }",
      '  lookup:',
      '    - function: ARCHIV_GET_CONNECTIONS',
      "      parameters: { 'CONNECTIONS.ARC_DOC_ID': '{ARC_DOC_ID}' }",
      '      found: { list: COUNT }',
      '    - function: ARCHIV_PROCESS_RFCINPUT',
      "      parameters: { DOCUMENT_ENTRY: '{ARC_DOC_ID}' }",
      '      found: { list: DOCUMENT_DATA }',
      '    - table: ZNOTATABLE',
      "      where: { ARC_DOC_ID: '{ARC_DOC_ID}' }",
      '    - table: BDS_BAR_EX',
      "      where: { ARC_DOC_ID: '{ARC_DOC_ID}' }",
      "  result: { erpReference: '{OBJECT_ID}' }",
    ];
    writeFileSync(job, `${readFileSync(job, 'utf8')}${call.join('\n')}\n`);
    // A release whose bar-code list has no dictionary structure of that name.
    delete env.erp.interfaces.BAPI_BARCODE_SENDLIST.types;
    const { checks } = await doctor(env);
    const link = find(checks, /^task link: /)?.found ?? '';
    for (const difference of [
      "NOPE is not a parameter of ARCHIV_CONNECTION_INSERT (SAP's: ARCHIV_ID, ARC_DOC_ID,",
      'SAP_OBJECT.FIELD: SAP_OBJECT is a single value in SAP',
      'AR_OBJECT is a mandatory parameter of ARCHIV_CONNECTION_INSERT the task leaves out',
      'lookup ARCHIV_GET_CONNECTIONS: CONNECTIONS.ARC_DOC_ID: CONNECTIONS is a table in SAP',
      'lookup ARCHIV_PROCESS_RFCINPUT: DOCUMENT_ENTRY: DOCUMENT_ENTRY is a structure in SAP',
      'lookup ARCHIV_GET_CONNECTIONS: COUNT, where the lookup reads its answer, is not a table of ARCHIV_GET_CONNECTIONS',
      "table ZNOTATABLE, read by the lookup, is not in SAP's dictionary",
      'table BDS_BAR_EX has no field ARC_DOC_ID',
    ])
      t.match(link, difference);
    t.match(find(checks, /^task barcode: /)?.found, "BARCODETABLE's structure  is not in SAP's dictionary");

    // The dictionary stops answering half-way: that task's line fails with the cause, the others go on.
    env.erp.faults.add({ functionName: 'DDIF_FIELDINFO_GET', skip: 1, drop: true });
    const dropped = await doctor(env);
    t.equal(dropped.checks.filter((c) => /^task \w+: .*interface: /.test(c.found) && c.outcome === 'fail').length, 1);

    // No S_RFC for the description modules: not checked, with the authorisation to give.
    env.erp.faults.clear();
    env.erp.customizing.users.CONNECTOR.rfc = [
      'RFC_PING',
      'ARCHIV_GET_CONNECTIONS',
      'BAPI_BARCODE_SENDLIST',
      'RFC_READ_TABLE',
    ];
    const refused = find((await doctor(env)).checks, /^the interfaces of the tasks' function modules/);
    t.match(refused, {
      outcome: 'skip',
      advice: /S_RFC for RFC_GET_FUNCTION_INTERFACE \(function group RFC1\) and DDIF_FIELDINFO_GET/,
    });
  },
);

t.test(
  'a task over Rest: the service answers, issues a CSRF token and may be read; each refusal with what to do',
  async (t) => {
    const env = await sandboxEnv(t);
    const job = join(env.location.jobsDir, 'link.yaml');
    writeFileSync(job, readFileSync(job, 'utf8').replace(/^function: RFC/m, 'function: Rest'));
    const service = '/sap/opu/odata/sap/API_CV_ATTACHMENT_SRV';
    const rest = (checks: Check[]) => checks.filter((c) => c.section.endsWith('(Rest)'));
    const { code, checks } = await doctor(env);
    t.equal(code, 0);
    t.same(
      rest(checks).map((c) => [c.outcome, c.found]),
      [
        ['pass', `${service} answers (its service document), as user CONNECTOR`],
        ['pass', `${service} issues a CSRF token (X-CSRF-Token: Fetch), as a write needs`],
        [
          'pass',
          `${service}/GetAllOriginals?BusinessObjectTypeName='BKPF'&LinkedSAPObjectKey='CONNECT2ERP-DOCTOR' may be read (a lost answer is looked up there)`,
        ],
      ],
    );
    t.notOk(find(checks, /^task link: /), 'the SOAP-RFC section checks only the tasks over SOAP-RFC');
    // Without the mapping file, the object type is one no object has either: the read still proves the service.
    env.sandbox.faults.add({ path: '/@blob/file:content', status: 500, body: '{}' });
    t.match(rest((await doctor(env)).checks)[2], {
      outcome: 'pass',
      found: /BusinessObjectTypeName='CONNECT2ERP-DOCTOR'/,
    });

    // SAP Gateway's error body for a GET whose URL holds `path`.
    const refuse = (path: string, status: number, code: string, text: string) =>
      env.erp.faults.add({
        method: 'GET',
        path,
        status,
        body: JSON.stringify({ error: { code, message: { value: text } } }),
      });
    env.erp.faults.add({ method: 'HEAD', status: 200, body: '' });
    refuse('GetAllOriginals', 403, 'CV_ATTACHMENT_SRV/003', 'No authorization');
    const refused = rest((await doctor(env)).checks);
    t.match(refused, [
      { outcome: 'pass' },
      { outcome: 'fail', found: /CSRF token .*SAP sent no X-CSRF-Token/, advice: /csrf: false/ },
      { outcome: 'fail', found: /GetAllOriginals.*No authorization/, advice: /communication arrangement/ },
    ]);

    refuse('API_CV_ATTACHMENT_SRV/?', 404, '/IWFND/MED/170', 'No service found');
    const missing = rest((await doctor(env)).checks);
    t.match(missing, [
      { outcome: 'fail', found: /its service document/, advice: /\/IWFND\/MAINT_SERVICE/ },
      { outcome: 'skip', found: /the other checks of / },
    ]);
    env.erp.faults.add({ method: 'GET', path: 'API_CV_ATTACHMENT_SRV/?', status: 401, body: '' });
    t.match(rest((await doctor(env)).checks)[0], { outcome: 'fail', advice: /check rest\.auth of S4H/ });
    env.erp.faults.add({ method: 'GET', path: 'API_CV_ATTACHMENT_SRV/?', drop: true });
    t.match(rest((await doctor(env)).checks)[0], { outcome: 'fail', advice: /check rest\.url of S4H/ });
    env.erp.faults.add({
      method: 'GET',
      path: 'API_CV_ATTACHMENT_SRV/?',
      status: 200,
      headers: { 'Content-Type': 'text/html' },
      body: '<html>logon</html>',
    });
    t.match(rest((await doctor(env)).checks)[0], { outcome: 'fail', advice: /check rest\.url and rest\.auth of S4H/ });
  },
);

t.test(
  "the server's LTS: 2025 is said to be checked against its documentation only; another server fails",
  async (t) => {
    const lts2025 = await sandboxEnv(t, { sandbox: { repository: { version: '2025.15' } } });
    t.match(find((await doctor(lts2025)).checks, /^Nuxeo /), {
      outcome: 'pass',
      found: /^Nuxeo LTS 2025\.15: checked against its documentation only \(its new search service/,
    });
    const old = await sandboxEnv(t, { sandbox: { repository: { version: '10.10' } } });
    const { code, checks } = await doctor(old);
    t.equal(code, 2);
    t.match(find(checks, /^Nuxeo /), {
      outcome: 'fail',
      found: 'Nuxeo lts 10.10: not an LTS this version supports',
      advice: /supports Nuxeo LTS 2021, 2023 and 2025/,
    });
    // A server without the endpoint (before 11.5): the failed request is the line.
    old.sandbox.faults.add({ path: '/api/v1/capabilities', status: 404, body: '{}' });
    t.match(find((await doctor(old)).checks, /^the server version/), {
      outcome: 'fail',
      advice: /from Nuxeo 11\.5 on/,
    });
  },
);

t.test('a wrong client is a refused logon naming the client; two labelled mapping files are named', async (t) => {
  const env = await sandboxEnv(t);
  edit(env, 'erpHttp.yaml', "client: '100'", "client: '200'");
  const { store, index } = env.sandbox;
  const admin = store.getByPath('/default-domain/workspaces/admin') as StoredDoc;
  index.sync(() => {
    const copy = store.create(env.sandbox.actor(), admin, { type: 'File', name: 'copy', properties: {} }, NO_BLOBS);
    store.addFacet(env.sandbox.actor(), copy, 'fct_erp_config_file_connect2erp');
  });
  const { code, checks } = await doctor(env);
  t.equal(code, 2);
  t.equal(failures(checks).length, 2, failures(checks).join('\n'));
  t.match(find(checks, /^logon: /)?.advice, /check rfc\.auth and client "200" in erpHttp\.yaml/);
  t.match(find(checks, /^several mapping files: /), { found: /admin\/copy/, advice: /keep one/ });
});

t.test('no adminPath, and a user who may not call RFC_PING', async (t) => {
  const env = await sandboxEnv(t);
  edit(env, 'storage.yaml', /^adminPath: .*$/m, 'adminPath: /default-domain/workspaces/nowhere');
  env.erp.customizing.users.CONNECTOR.rfc = ['ARCHIV_GET_CONNECTIONS'];
  const { checks } = await doctor(env);
  t.same(
    failures(checks).map((found) => found.split(':')[0]),
    [
      'adminPath /default-domain/workspaces/nowhere',
      'no mapping file under /default-domain/workspaces/nowhere',
      'RFC_PING',
    ],
  );
  t.match(find(checks, /^RFC_PING: /)?.advice, /give the user S_RFC for RFC_PING/);
});

t.test('an SOAP-RFC address that redirects: the advice is to set rfc.url', async (t) => {
  const env = await sandboxEnv(t);
  env.erp.faults.add({
    functionName: 'RFC_PING',
    status: 302,
    headers: { Location: 'https://sap.example.com/sap/bc/soap/rfc' },
  });
  const { checks } = await doctor(env);
  t.match(find(checks, /^RFC_PING: /), {
    outcome: 'fail',
    found: /HTTP 302, redirected to https:\/\/sap\.example\.com\/sap\/bc\/soap\/rfc/,
    advice: /set rfc\.url to the SOAP-RFC service's own address/,
  });
});

t.test('a user who may not read the customizing tables leaves them unchecked, not failed: exit 0', async (t) => {
  const env = await sandboxEnv(t);
  // BDS_BAR_EX only: what the bar-code task's lookup needs.
  env.erp.customizing.users.CONNECTOR.tables = ['BDS_BAR_EX'];
  // A link the harmless lookup finds: an answer with rows reads as well as NOTHING_FOUND.
  env.erp.tables.links.push({
    client: '100',
    SAP_OBJECT: 'BKPF',
    OBJECT_ID: '1',
    ARCHIV_ID: 'Z1',
    ARC_DOC_ID: 'CONNECT2ERP-DOCTOR',
    AR_OBJECT: 'ZFIINVOICE',
    AR_DATE: '20200101',
    FILENAME: '',
    DESCR: '',
    CREATOR: '',
  });
  const { code, checks } = await doctor(env);
  t.equal(code, 0);
  t.equal(find(checks, /^ARCHIV_GET_CONNECTIONS may be called$/)?.outcome, 'pass');
  t.equal(find(checks, /^dates accepted as YYYY-MM-DD/)?.outcome, 'pass');
  t.match(find(checks, /^the ArchiveLink customizing: RFC_READ_TABLE refused/), {
    outcome: 'skip',
    advice: /S_TABU_NAM for TOAAR, TOADV, TOAOM/,
  });

  env.erp.customizing.users.CONNECTOR.tables = [];
  const without = await doctor(env);
  t.equal(without.code, 2, "the bar-code task's lookup needs BDS_BAR_EX");
  t.match(find(without.checks, /^BDS_BAR_EX cannot be read: /), {
    outcome: 'fail',
    found: /NOT_AUTHORIZED/,
    advice: /S_TABU_NAM \(ACTVT 03\) for BDS_BAR_EX .*a document whose answer was lost waits for an operator/,
  });
});

t.test("the folder chain refused to the job's user by a REST binding is a failed line", async (t) => {
  const env = await sandboxEnv(t, { refusedChains: [FOLDER_CHAIN] });
  const before = env.snapshot();
  const { checks } = await doctor(env);
  t.match(find(checks, /^the Automation chain connect2erp\.PlaceInArchiveLinkFolder/), {
    outcome: 'fail',
    found: /is deployed but refused to this user \(a call is answered an empty 404\)/,
    advice: /a REST binding of Automation .* allow the chain to the job's user/,
  });
  t.equal(env.snapshot(), before, 'the call that tells writes nothing');
});

t.test('a mapping file that cannot be downloaded is a failed line', async (t) => {
  const env = await sandboxEnv(t);
  env.sandbox.faults.add({ path: '/@blob/file:content', status: 500, body: '{}' });
  const { checks } = await doctor(env);
  t.match(find(checks, /^the ArchiveLink customizing: it is checked against the mapping file/), { outcome: 'skip' });
  t.match(find(checks, /^mapping file: /), {
    outcome: 'fail',
    found: /HTTP 500/,
    advice: /connect2erp mapping upload FILE, then run doctor again/,
  });
});

t.test('an account that may only read a mapped folder; SAP without the link, refusing every date', async (t) => {
  const mapping = mappingWith(
    ([, invoices]) => (invoices.properties['erpCreateALDocument:erpDescription'] = '$inv:summary'),
  );
  const env = await sandboxEnv(t, { mapping, users: { reader: { password: 'r', groups: ['members'] } } });
  const { store } = env.sandbox;
  const at = (path: string): StoredDoc => store.getByPath(path) as StoredDoc;
  // The job's account may read adminPath and is listed among the administrators, as the guide says; it may only read Invoices.
  store.setAcls(env.sandbox.actor(), at('/default-domain/workspaces/admin'), [
    {
      name: 'local',
      aces: [ace('reader', 'Read'), ace('Administrator', 'Everything'), ace('Everyone', 'Everything', false)],
    },
  ]);
  store.setAcls(env.sandbox.actor(), at('/default-domain/workspaces/ERP'), [
    { name: 'local', aces: [ace('reader', 'ReadWrite')] },
  ]);
  store.setAcls(env.sandbox.actor(), at('/default-domain/workspaces/ERP/Invoices'), [
    { name: 'local', aces: [ace('reader', 'Read'), ace('reader', 'Everything', false)] },
  ]);
  edit(env, 'storage.yaml', 'username: Administrator', 'username: reader');
  edit(env, 'storage.yaml', /^administrators: .*$/m, 'administrators: [Administrator, administrators, reader]');
  env.sandbox.faults.add({ path: '/api/v1/config/schemas', status: 503, body: '{}' });
  env.erp.customizing.links = [];
  const runtimeFault =
    '<soap-env:Envelope xmlns:soap-env="http://schemas.xmlsoap.org/soap/envelope/"><soap-env:Body><soap-env:Fault><faultcode>soap-env:Client</faultcode><faultstring>Error during deserialization</faultstring></soap-env:Fault></soap-env:Body></soap-env:Envelope>';
  env.erp.faults.add({
    functionName: 'ARCHIV_GET_CONNECTIONS',
    times: 3,
    status: 500,
    headers: { 'content-type': 'text/xml' },
    body: runtimeFault,
  });
  const { code, checks } = await doctor(env, { NUXEO_PASSWORD: 'r' });
  t.equal(code, 2);
  t.same(
    failures(checks).map((found) => found.replace(/: .*/, '')),
    [
      'the declared schemas',
      'may not write in /default-domain/workspaces/ERP/Invoices',
      'ARCHIV_GET_CONNECTIONS',
      'the date form',
      'link BKPF – ZFIINVOICE not maintained (OAC3)',
    ],
  );
  t.match(
    find(checks, /^may not write in/)?.advice,
    /give the account of storage\.yaml ReadWrite on \/default-domain\/workspaces\/ERP\/Invoices/,
  );
  t.equal(find(checks, /^may write in \/default-domain\/workspaces\/ERP\/Barcode$/)?.outcome, 'pass');
  t.match(find(checks, /^the date form: /)?.advice, /give the user S_RFC for it/);
  t.match(find(checks, /^link BKPF – ZFIINVOICE not maintained/)?.advice, /add it in OAC3 with content repository Z1/);
});

t.test('an SAP system that does not answer', async (t) => {
  const env = await sandboxEnv(t);
  edit(
    env,
    'erpHttp.yaml',
    /url: http:\/\/127\.0\.0\.1:\d+\/sap\/bc\/soap\/rfc/,
    'url: http://127.0.0.1:9/sap/bc/soap/rfc',
  );
  const { checks } = await doctor(env, { NUXEO_PASSWORD: 'wrong' });
  t.same(
    failures(checks).map((found) => found.split(':')[0]),
    ['sign-in', 'not reachable'],
  );
  t.match(find(checks, /^sign-in: /)?.advice, /check auth in storage\.yaml/);
  t.match(find(checks, /^not reachable: /)?.advice, /check rfc\.url in erpHttp\.yaml \(host, port from SMICM\)/);
});

t.test(
  'a task limited to one system is checked on it alone; a query SAP refuses fails the customizing check with its cause',
  async (t) => {
    const env = await sandboxEnv(t);
    const erp = readFileSync(join(env.location.configDir, 'erpHttp.yaml'), 'utf8');
    const second = erp.slice(erp.indexOf('  - name: S4H')).replace('name: S4H', 'name: S4X');
    writeFileSync(join(env.location.configDir, 'erpHttp.yaml'), `${erp}${second}`);
    writeFileSync(
      join(env.location.jobsDir, 'barcode.yaml'),
      `${readFileSync(join(env.location.jobsDir, 'barcode.yaml'), 'utf8')}systems: [S4H]\n`,
    );
    env.erp.faults.add({
      functionName: 'RFC_READ_TABLE',
      skip: 1, // the bar-code task's BDS_BAR_EX: the customizing's query is refused
      status: 500,
      headers: { 'content-type': 'text/xml; charset=utf-8' },
      body: exceptionXml('RFC_READ_TABLE', { name: 'OPTION_NOT_VALID', text: 'Selection criterion not valid' }),
    });
    const { code, checks } = await doctor(env);
    t.equal(code, 2);
    const bySystem = (name: string) =>
      checks.filter((c) => c.section.startsWith(`ERP system ${name} `)).map((c) => c.found);
    t.ok(bySystem('S4H').includes('BAPI_BARCODE_SENDLIST may be called'));
    t.notOk(
      bySystem('S4X').some((found) => found.startsWith('BAPI_BARCODE_SENDLIST')),
      'the bar-code task never calls S4X',
    );
    t.same(
      failures(checks).map((found) => found.split(':')[0]),
      ['the ArchiveLink customizing'],
    );
    t.match(
      find(checks, /^the ArchiveLink customizing: .*OPTION_NOT_VALID/)?.advice,
      /refused the query, not the customizing/,
    );
  },
);

t.test(
  "the content server's side of the repository: its own account, each storagePath, SAP's certificates",
  async (t) => {
    const env = await servedEnv(t);
    await env.call('PUT', `putCert&pVersion=0047&contRep=Z1&authId=${FIXTURE_AUTH_ID}`, fixture('dsa.crt'));
    const [pending] = await env.certificates.list();
    edit(
      env,
      'contentServer.yaml',
      /storagePath: \/default-domain\/workspaces\/sap-archive\/Z1/,
      'storagePath: /default-domain/workspaces/nowhere',
    );
    const missing = await doctor(env);
    t.equal(missing.code, 2);
    t.match(
      find(missing.checks, /^content repository Z1: storagePath \/default-domain\/workspaces\/nowhere not readable/),
      {
        outcome: 'fail',
        advice: /create that folder and give S4H's account ReadWrite on it/,
      },
    );
    t.match(find(missing.checks, /^content repository Z1: no approved certificate yet/), {
      outcome: 'skip',
      found: new RegExp(`waiting for approval: ${pending.name}$`),
      advice: new RegExp(
        `check the fingerprint with SAP's \\(STRUST\\), then connect2erp certs approve ${pending.name}`,
      ),
    });
    // Approved once, expired since: it signs nothing, so it is not counted (as serve would not use it).
    await env.certificates.setStatus(pending, 'approved');
    env.fill(pending.uid, { 'erpCertificate:notAfter': '2020-01-01T00:00:00.000Z' });
    t.equal(find((await doctor(env)).checks, /^content repository Z1: no approved certificate yet/)?.outcome, 'skip');
    await env.certificates.setStatus(pending, 'pending');
    env.fill(pending.uid, { 'erpCertificate:notAfter': pending.notAfter });

    edit(env, 'contentServer.yaml', /^( *)- name: S4H\n/m, '$1- name: S4H\n$1  signatures: off\n');
    const unsigned = await doctor(env);
    t.equal(
      find(unsigned.checks, /^content repository Z1: 0 approved certificate\(s\); waiting for approval: /)?.outcome,
      'pass',
      'signatures off: no certificate needed',
    );

    edit(env, 'contentServer.yaml', /password: .*/, 'password: wrong');
    const refused = await doctor(env);
    t.match(find(refused.checks, /^connection S4H cannot sign in with repositoryAuth/), {
      outcome: 'fail',
      advice: /fix repositoryAuth in contentServer\.yaml/,
    });
    t.notOk(
      find(refused.checks, /^content repository Z1: storagePath/),
      'nothing more is asked with an account refused',
    );

    env.sandbox.faults.add({ path: 'sap-certificates', status: 500, times: 10 });
    const unreadable = await doctor(env);
    t.match(find(unreadable.checks, /^certificates not readable/), {
      outcome: 'fail',
      advice: /Read on \/default-domain\/workspaces\/admin/,
    });
  },
);

t.test(
  'a mapping file the search index has not caught up with is found by its path, by doctor and by a run',
  async (t) => {
    const env = await sandboxEnv(t);
    const path = '/default-domain/workspaces/admin/Connect to ERP Feature Configuration';
    const doc = env.sandbox.store.getByPath(path) as StoredDoc;
    // Uploaded a moment ago: in the repository, not yet in its search index.
    env.sandbox.index.indexed.mirror(doc.uid, undefined);
    const { checks } = await doctor(env);
    t.equal(find(checks, /^mapping file .*Configuration valid: 3 folder\(s\) mapped$/)?.outcome, 'pass');
    const dry = await cli(['run', '--dry-run', '--config', env.location.configDir]);
    t.equal(dry.code, 0, dry.stderr.slice(-500));

    // A document at that path that is not labelled is no mapping file.
    env.sandbox.store.mirror(doc.uid, { ...doc, facets: [] });
    t.ok(find((await doctor(env)).checks, /^no mapping file under \/default-domain\/workspaces\/admin$/));
    // Anything but "not there" from that read is the repository's failure, said as it is.
    env.sandbox.faults.add({ path: 'Feature%20Configuration', status: 500, times: 10 });
    t.match(find((await doctor(env)).checks, /HTTP 500/), { outcome: 'fail' });
  },
);

t.test("a task's read of SAP's data: callable, and its interface compared like the call's", async (t) => {
  const env = await sandboxEnv(t);
  const job = join(env.location.jobsDir, 'link.yaml');
  const linkYaml = readFileSync(job, 'utf8');
  writeFileSync(job, `${linkYaml}${templateYaml('read-supplier-invoice', 'RFC') as string}`);
  const { checks } = await doctor(env);
  t.match(find(checks, /^BAPI_INCOMINGINVOICE_GETDETAIL may be called/), { outcome: 'pass' });
  t.match(find(checks, /^task link: /), { outcome: 'pass' });

  writeFileSync(
    job,
    `${linkYaml}${(templateYaml('read-supplier-invoice', 'RFC') as string).replace('INVOICEDOCNUMBER:', 'INVOICENUMBER:').replace('- RETURN', '- RESULTS')}`,
  );
  const broken = find((await doctor(env)).checks, /^task link: /);
  t.equal(broken?.outcome, 'fail');
  t.match(
    broken?.found,
    'read BAPI_INCOMINGINVOICE_GETDETAIL: INVOICENUMBER is not a parameter of BAPI_INCOMINGINVOICE_GETDETAIL',
  );
  t.match(broken?.found, 'read BAPI_INCOMINGINVOICE_GETDETAIL: INVOICEDOCNUMBER is a mandatory parameter');
  t.match(
    broken?.found,
    'read BAPI_INCOMINGINVOICE_GETDETAIL: RESULTS, where the read reads its answer, is not a table',
  );
});
