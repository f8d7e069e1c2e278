import t, { type Test } from 'tap';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { XMLParser } from 'fast-xml-parser';
import { erpSchema } from '../src/config/erp-schema.js';
import { FunctionRefusalError, SystemRefusalError, SystemUnavailableError, UncertainError } from '../common/errors.js';
import { RfcClient } from '../src/erp/rfc-client.js';
import { RfcFault } from '../src/erp/rfc-fault.js';
import { networkFailure } from '../src/erp/failure.js';
import { parseAnswer, requestEnvelope, tableRows } from '../src/erp/soap.js';
import { ErpSandbox } from '../sandbox/erp/server.js';
import { exceptionXml, readCall, responseXml } from '../sandbox/erp/soap-codec.js';
import { startSandbox } from '../sandbox/start.js';
import { loadSandboxSettings } from '../sandbox/settings.js';
import { quietLog } from './helpers/env.js';

/** The ERP sandbox answers as SAP documents it; checked over HTTP through the job's own client, and both codecs against golden envelopes. */

const GOLDEN = join(import.meta.dirname, 'fixtures', 'soap-rfc');
const golden = (name: string) => readFileSync(join(GOLDEN, name), 'utf8');
/** An envelope as a tree without namespace prefixes, for comparing two envelopes regardless of layout. */
const tree = (xml: string) =>
  new XMLParser({
    ignoreAttributes: true,
    removeNSPrefix: true,
    parseTagValue: false,
    isArray: (name) => name === 'item',
  }).parse(xml) as unknown;

async function setUp(t: Test, system: Record<string, unknown> = {}) {
  const erp = new ErpSandbox();
  const url = await erp.start();
  t.teardown(() => erp.stop());
  const config = erpSchema.parse({
    systems: [
      {
        name: 'S4H',
        client: '100',
        rfc: { url: `${url}/sap/bc/soap/rfc`, auth: { username: 'CONNECTOR', password: 'sandbox' } },
        ...system,
      },
    ],
  }).systems[0];
  const rfc = new RfcClient({ ...config, rfc: config.rfc! }, quietLog);
  const call = (functionName: string, params: Record<string, unknown>) =>
    rfc.send({ functionName, params: params as never });
  const fault = (fn: string, params: Record<string, unknown>) =>
    call(fn, params).then(
      () => undefined,
      (e: unknown) => e as RfcFault,
    );
  const raw = (body: string) =>
    fetch(`${url}/sap/bc/soap/rfc`, {
      method: 'POST',
      body,
      headers: { Authorization: `Basic ${Buffer.from('CONNECTOR:sandbox').toString('base64')}` },
    });
  return { erp, url, rfc, call, fault, raw };
}

const LINK = { SAP_OBJECT: 'BKPF', OBJECT_ID: '1', ARCHIV_ID: 'Z1', ARC_DOC_ID: 'd1', AR_OBJECT: 'ZFIINVOICE' };

t.test(
  "golden envelopes: the sandbox reads SAP's request form and answers in SAP's; the job reads SAP's answers",
  async (t) => {
    const { erp, raw } = await setUp(t);
    const insert = await raw(golden('ARCHIV_CONNECTION_INSERT.request.xml'));
    t.equal(insert.status, 200);
    t.match(
      erp.tables.links,
      [{ SAP_OBJECT: 'BKPF', OBJECT_ID: '100019000000222023', AR_DATE: '20240115' }],
      'a date read from YYYY-MM-DD, kept as ABAP keeps it',
    );
    const again = await raw(golden('ARCHIV_CONNECTION_INSERT.request.xml'));
    t.equal(again.status, 500);
    t.same(
      tree(await again.text()),
      tree(golden('ARCHIV_CONNECTION_INSERT.fault.xml')),
      'the duplicate: the golden fault, OA403',
    );
    const found = await raw(
      requestEnvelope('ARCHIV_GET_CONNECTIONS', {
        ARC_DOC_ID: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
        CONNECTIONS: [],
      }),
    );
    t.same(
      tree(await found.text()),
      tree(golden('ARCHIV_GET_CONNECTIONS.response.xml')),
      'the lookup: the golden response',
    );
    t.equal((await raw(golden('BAPI_BARCODE_SENDLIST.request.xml'))).status, 200);
    t.same(
      erp.tables.barcodes.map((b) => [b.BARCODE, b.ARDATE, b.DOCTYPE]),
      [
        ['BC-0001', '20240115', 'PDF'],
        ['BC-0002', '20240116', 'TIF'],
      ],
      'a table of two rows',
    );

    t.match(parseAnswer('ARCHIV_GET_CONNECTIONS', golden('ARCHIV_GET_CONNECTIONS.response.xml')), {
      kind: 'response',
      values: {
        CONNECTIONS: [{ ARC_DOC_ID: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', AR_DATE: '2024-01-15' }],
        COUNT: '1',
      },
    });
    t.same(parseAnswer('ARCHIV_CONNECTION_INSERT', golden('ARCHIV_CONNECTION_INSERT.fault.xml')), {
      kind: 'fault',
      fault: {
        exception: 'ERROR_CONNECTIONTABLE',
        text: 'SAP ArchiveLink (double entry in link table not permitted)',
        messageId: 'OA',
        messageNumber: '403',
      },
    });
    t.same(
      readCall(requestEnvelope('ARCHIV_CONNECTION_INSERT', { ...LINK, AR_DATE: '2024-01-15' })),
      readCall(
        golden('ARCHIV_CONNECTION_INSERT.request.xml')
          .replace('3f2504e0-4f89-41d3-9a0c-0305e82c3301', 'd1')
          .replace('100019000000222023', '1'),
      ),
      'the job writes a call as SAP reads it',
    );
    t.same(
      tree(responseXml('F', { A: '1', T: [{ B: '2' }] })),
      tree(
        '<?xml version="1.0"?><Envelope><Body><F.Response><A>1</A><T><item><B>2</B></item></T></F.Response></Body></Envelope>',
      ),
    );
    t.match(
      exceptionXml('F', { name: 'X', text: 't' }),
      /<Name>X<\/Name><Text>t<\/Text><\/rfc:F.Exception>/,
      'no Message without a message number',
    );
  },
);

t.test(
  "ARCHIV_CONNECTION_INSERT checks its customizing as OAC3 does, with SAP's own messages where they are known",
  async (t) => {
    const { erp, call, fault } = await setUp(t, {
      language: 'EN',
      tls: { caFile: join(import.meta.dirname, 'fixtures', 'tls', 'ca.pem') },
    });
    t.same(await call('RFC_PING', {}), {}, 'RFC_PING answers');
    await call('ARCHIV_CONNECTION_INSERT', { ...LINK, AR_DATE: '2024-01-15' });
    t.equal(erp.tables.links[0].AR_DATE, '20240115');
    t.equal((await fault('ARCHIV_CONNECTION_INSERT', LINK))?.messageKey, 'OA403', 'a duplicate is OA403');
    const cases: Array<[Record<string, string>, RegExp]> = [
      [
        { AR_OBJECT: 'ZBARCODE' },
        /\(OA806\): Combination of object type BKPF and document type ZBARCODE not maintained \(->Cust\)/,
      ],
      [
        { ARCHIV_ID: 'Z9' },
        /ERROR_CONNECTIONTABLE: Content repository Z9 is not the one of object type BKPF and document type ZFIINVOICE \(OAC3\)/,
      ],
      [{ OBJECT_ID: '' }, /ERROR_CONNECTIONTABLE: OBJECT_ID and ARC_DOC_ID are required/],
    ];
    for (const [change, message] of cases)
      t.match((await fault('ARCHIV_CONNECTION_INSERT', { ...LINK, ...change }))?.message, message);
    const found = await call('ARCHIV_GET_CONNECTIONS', { OBJECTTYPE: 'BKPF', OBJECT_ID: '1', CONNECTIONS: [] });
    t.same(
      tableRows(found.CONNECTIONS).map((r) => [r.ARC_DOC_ID, r.AR_DATE]),
      [['d1', '2024-01-15']],
      'links are read back, dates as YYYY-MM-DD',
    );
    t.same(tableRows(undefined), [], 'an absent table has no rows');
  },
);

t.test(
  'the SOAP runtime refuses what it cannot read before the function runs: a YYYYMMDD date, a long value, a name not in the interface',
  async (t) => {
    const { erp, fault, call } = await setUp(t);
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      [
        'ARCHIV_CONNECTION_INSERT',
        { ...LINK, AR_DATE: '20240115' },
        /Error during deserialization: value "20240115" of AR_DATE is not a date \(YYYY-MM-DD\)/,
      ],
      ['ARCHIV_CONNECTION_INSERT', { ...LINK, AR_DATE: '2024-02-30' }, /value "2024-02-30" of AR_DATE is not a date/],
      [
        'ARCHIV_CONNECTION_INSERT',
        { ...LINK, DESCR: 'd'.repeat(61) },
        /value of DESCR is longer than its 60 characters/,
      ],
      ['ARCHIV_CONNECTION_INSERT', { ...LINK, COLOUR: 'red' }, /COLOUR is not a parameter of ARCHIV_CONNECTION_INSERT/],
      ['ARCHIV_CONNECTION_INSERT', { ...LINK, ARCHIV_ID: { A: '1' } }, /ARCHIV_ID is a CHAR field, not a structure/],
      [
        'ARCHIV_PROCESS_RFCINPUT',
        { DOCUMENT_ENTRY: { ARC_DOC_ID: 'd1', OTYPE: 'US' } },
        /DOCUMENT_ENTRY has no field OTYPE/,
      ],
      ['ARCHIV_PROCESS_RFCINPUT', { DOCUMENT_ENTRY: 'flat' }, /DOCUMENT_ENTRY is a structure/],
      [
        'ARCHIV_PROCESS_RFCINPUT',
        { DOCUMENT_DATA: { NAME: 'A', WERT: 'B' } },
        /DOCUMENT_DATA is a table: its rows are <item> elements/,
      ],
    ];
    for (const [fn, params, message] of cases) t.match((await fault(fn, params))?.message, message, String(message));
    t.equal(erp.tables.links.length, 0, 'nothing stored');
    t.same(
      await call('ARCHIV_CONNECTION_INSERT', { ...LINK, DEL_DATE: '0000-00-00' }),
      {},
      'the initial date is a date',
    );
    t.same(
      await call('ARCHIV_CONNECTION_INSERT', { ...LINK, ARC_DOC_ID: 'd2', AR_DATE: ' 2024-01-15 ' }),
      {},
      "blanks around a date are not part of it (XML Schema's date collapses white space)",
    );
    t.equal(erp.tables.links.at(-1)?.AR_DATE, '20240115');
  },
);

t.test(
  'BAPI_BARCODE_SENDLIST: document classes, the bar-code check, one row per bar code and document; a list with an error stores none',
  async (t) => {
    const { erp, call } = await setUp(t);
    const row = { BARCODE: 'B1', CONTREP: 'Z1', DOCID: 'd1', ARDATE: '2024-01-01', DOCTYPE: 'PDF' };
    const ok = await call('BAPI_BARCODE_SENDLIST', { BARCODETABLE: [row], RETURN: '' });
    t.equal((ok.RETURN as Record<string, string>).TYPE, '', 'an empty TYPE: no error');
    t.equal(erp.tables.barcodes[0].ARDATE, '20240101');
    const refusals: Array<[Record<string, string>[], RegExp, string?]> = [
      [[row], /Bar code B1 is already stored for document d1/],
      [
        [
          { ...row, BARCODE: 'B2', DOCID: 'd2' },
          { ...row, BARCODE: 'B2', DOCID: 'd2' },
        ],
        /Bar code B2 is in the list twice for document d2/,
      ],
      [[{ ...row, BARCODE: 'B3', DOCTYPE: 'ZBARCODE' }], /Document class ZBARCODE is not defined/],
      [[{ ...row, BARCODE: 'B3', CONTREP: 'Z9' }], /Content repository Z9 is not defined/],
      [[{ ...row, BARCODE: 'bad code!' }], /Enter a permitted bar code \(bar code check\): bad code!/, 'OA409'],
      [
        [
          { ...row, BARCODE: 'B4', DOCID: 'd4' },
          { ...row, DOCID: 'd5' },
        ],
        /Bar code B1 is already assigned to another document/,
      ],
    ];
    for (const [list, message, key] of refusals) {
      const answer = (await call('BAPI_BARCODE_SENDLIST', { BARCODETABLE: list })).RETURN as Record<string, string>;
      t.match(answer, { TYPE: 'E', MESSAGE: message }, String(message));
      t.equal(`${answer.ID}${answer.NUMBER}`, key ?? '000', "a message number only where SAP's is known");
    }
    t.equal(erp.tables.barcodes.length, 1, 'none of those lists stored a row');
    await call('BAPI_BARCODE_SENDLIST', {
      BARCODETABLE: [
        { BARCODE: 'B5', CONTREP: 'Z1', DOCID: 'd5', DOCTYPE: 'TIF' },
        { BARCODE: 'B6', CONTREP: 'Z1', DOCID: 'd6', ARDATE: '', DOCTYPE: 'TIF' },
      ],
    });
    t.match(
      erp.tables.barcodes.slice(1).map((b) => b.ARDATE),
      [/^\d{8}$/, /^\d{8}$/],
      'no date, or an empty one: today',
    );
    t.match((await call('BAPI_BARCODE_SENDLIST', {})).RETURN, { TYPE: '', NUMBER: '000' }, 'an empty list is no error');
  },
);

t.test(
  'links and bar codes are found through their indexes, rows added by hand included; a row edited by hand is not found under the value it lost',
  async (t) => {
    const { erp, call } = await setUp(t);
    const byDocument = async (docId: string) =>
      tableRows((await call('ARCHIV_GET_CONNECTIONS', { ARC_DOC_ID: docId, CONNECTIONS: [] })).CONNECTIONS).map(
        (r) => r.OBJECT_ID,
      );
    await call('ARCHIV_CONNECTION_INSERT', LINK);
    await call('ARCHIV_CONNECTION_INSERT', { ...LINK, OBJECT_ID: '2' });
    t.same(await byDocument('d1'), ['1', '2'], 'one document linked to two objects: both links');
    erp.tables.links.push({ ...erp.tables.links[0], ARC_DOC_ID: 'd9' });
    t.same(await byDocument('d9'), ['1'], 'a row added by hand');
    erp.tables.links[0].ARC_DOC_ID = 'd5';
    t.same(await byDocument('d1'), ['2'], 'a row edited by hand is not found under the value it lost');
    const row = { BARCODE: 'B1', CONTREP: 'Z1', DOCID: 'd1', DOCTYPE: 'PDF' };
    erp.tables.barcodes.push({ ...row, client: '200', DOCID: 'd2', ARDATE: '20240101' });
    t.match(
      (await call('BAPI_BARCODE_SENDLIST', { BARCODETABLE: [row] })).RETURN,
      { TYPE: '' },
      'the same bar code in another client is no duplicate',
    );
  },
);

t.test(
  "storing for subsequent entry: the work item goes to the agents of the document type's presetting; SAP_WAPI_START_WORKFLOW takes its own",
  async (t) => {
    const { erp, call, fault } = await setUp(t);
    const entry = { ARCHIV_ID: 'Z1', ARC_DOC_ID: 'd1', AR_OBJECT: 'ZINVWF', DOC_TYPE: 'PDF' };
    await call('ARCHIV_PROCESS_RFCINPUT', {
      DOCUMENT_ENTRY: entry,
      DOCUMENT_DATA: [
        { NAME: 'OTYPE', WERT: 'US' },
        { NAME: 'OBJID', WERT: 'JDOE' },
      ],
    });
    t.match(
      erp.tables.inbox[0],
      { agents: [{ OTYPE: 'US', OBJID: 'APPROVER1' }], container: { OTYPE: 'US', OBJID: 'JDOE' } },
      'rows naming an agent in DOCUMENT_DATA are container data: they route nothing',
    );
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ DOCUMENT_ENTRY: { ...entry, ARCHIV_ID: 'Z9' } }, 'ERROR_PARAMETER: Content repository Z9 is not defined'],
      [{ DOCUMENT_ENTRY: { ...entry, AR_OBJECT: 'ZNOPE' } }, 'ERROR_PARAMETER: Document type ZNOPE is not defined'],
      [{ DOCUMENT_ENTRY: { ...entry, ARC_DOC_ID: '' } }, 'ERROR_PARAMETER: ARC_DOC_ID is required without a bar code'],
      [
        { DOCUMENT_ENTRY: { ...entry, AR_OBJECT: 'ZFIINVOICE' } },
        'NO_WORKITEM_CREATED: No presetting names the agents for document type ZFIINVOICE',
      ],
      [{ DOCUMENT_ENTRY: { BARCODE: 'WF-1' } }, 'ERROR_PARAMETER: Document type  is not defined'],
      [{}, 'ERROR_PARAMETER: Content repository  is not defined'],
      [{ DOCUMENT_ENTRY: '' }, 'ERROR_PARAMETER: Content repository  is not defined'],
    ];
    for (const [params, message] of cases) t.match((await fault('ARCHIV_PROCESS_RFCINPUT', params))?.message, message);

    const start = (task: string, agents: Array<Record<string, string>>) =>
      call('SAP_WAPI_START_WORKFLOW', {
        TASK: task,
        AGENTS: agents,
        INPUT_CONTAINER: [{ ELEMENT: 'ARC_DOC_ID', VALUE: 'd2' }],
      });
    t.match(
      await call('SAP_WAPI_START_WORKFLOW', { TASK: 'WS90000001', AGENTS: [{ OTYPE: 'US', OBJID: 'JDOE' }] }),
      { RETURN_CODE: '0' },
      'an empty container',
    );
    t.match(await start('WS90000001', [{ OTYPE: 'US', OBJID: 'JDOE' }]), {
      RETURN_CODE: '0',
      WORKITEM_ID: '000000000003',
      NEW_STATUS: 'READY',
    });
    t.match(erp.tables.inbox[2], {
      startedBy: 'SAP_WAPI_START_WORKFLOW',
      task: 'WS90000001',
      ARC_DOC_ID: 'd2',
      agents: [{ OTYPE: 'US', OBJID: 'JDOE' }],
    });
    t.match(await start('WS00000000', [{ OTYPE: 'US', OBJID: 'JDOE' }]), {
      RETURN_CODE: '1',
      MESSAGE_LINES: [{ LINE: 'Task WS00000000 does not exist' }],
    });
    t.match(await start('WS90000001', [{ OTYPE: 'US', OBJID: 'NOBODY' }]), {
      RETURN_CODE: '4',
      MESSAGE_LINES: [{ LINE: 'Agent US NOBODY does not exist' }],
    });
    t.match(await start('WS90000001', []), { RETURN_CODE: '4', MESSAGE_LINES: [{ LINE: 'No agent given' }] });
    t.match(
      await start('WS90000001', [{ OTYPE: 'S', OBJID: '50000002' }]),
      { RETURN_CODE: '4', MESSAGE_LINES: [{ LINE: 'Agent S 50000002 does not exist' }] },
      'a type of agent with none',
    );
    t.equal(erp.tables.inbox.length, 3);
  },
);

t.test(
  "what is not the document's fault: a missing S_RFC authorisation, the service inactive in SICF, an unknown function module",
  async (t) => {
    const { erp, fault, call, raw } = await setUp(t);
    erp.customizing.users.CONNECTOR.rfc = ['RFC_PING'];
    t.same(await call('RFC_PING', {}), {}, 'authorised');
    const refused = await fault('ARCHIV_CONNECTION_INSERT', LINK);
    t.type(refused, FunctionRefusalError, "the task's calls to the system stop instead of failing the document");
    t.match(
      refused?.message,
      /ARCHIV_CONNECTION_INSERT raised SYSTEM_FAILURE \(00341\): No RFC authorization for function module ARCHIV_CONNECTION_INSERT\./,
    );
    t.same(
      tree(await (await raw(requestEnvelope('ARCHIV_CONNECTION_INSERT', LINK))).text()),
      tree(golden('RFC_NO_AUTHORITY.fault.xml')),
      'the golden fault',
    );
    erp.customizing.users.CONNECTOR.rfc = '*';
    t.type(await fault('Z_UNKNOWN', {}), FunctionRefusalError, 'FU_NOT_FOUND');
    erp.soapRfcActive = false;
    const inactive = await fault('RFC_PING', {});
    t.type(inactive, SystemRefusalError, "the system's: its lanes stop");
    t.match(
      inactive?.message,
      /HTTP 403, not a SOAP answer: is the service \/sap\/bc\/soap\/rfc active in SICF, and may the user call it\?/,
    );
    t.match(
      await (await raw(requestEnvelope('RFC_PING', {}))).text(),
      'check whether service /sap/bc/soap/rfc is active in transaction SICF',
    );
  },
);

t.test(
  'a call SAP has and does not answer in time may have reached it; one to a system that is down never did',
  async (t) => {
    const { erp, fault } = await setUp(t, { timeouts: { requestMs: 200 } });
    erp.faults.hold(); // SAP has the call and never answers
    const late = await fault('RFC_PING', {});
    erp.faults.release();
    t.type(late, UncertainError, 'uncertain: a link is looked up and a workflow start goes to an operator');
    t.match(late?.message, /^RFC_PING on S4H failed \(ETIMEDOUT\): /);
    await erp.stop();
    const down = await fault('RFC_PING', {});
    t.type(down, SystemUnavailableError, 'not sent: the system is unavailable, not the document');
    t.match(down?.message, /^RFC_PING on S4H failed \(ECONNREFUSED\): /);
  },
);

t.test(
  'a redirect is the address, not the document: the task stops, nothing is followed with the credentials',
  async (t) => {
    const server = createHttpServer((req, res) => {
      res.writeHead(
        req.url?.includes('there') ? 307 : 302,
        req.url?.includes('there') ? {} : { Location: 'https://sap.example.com/sap/bc/soap/rfc' },
      );
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(() => server.close());
    const { port } = server.address() as AddressInfo;
    const client = (path: string) => {
      const config = erpSchema.parse({
        systems: [
          {
            name: 'S4H',
            client: '100',
            rfc: { url: `http://127.0.0.1:${port}${path}`, auth: { username: 'U', password: 'p' } },
          },
        ],
      }).systems[0];
      return new RfcClient({ ...config, rfc: config.rfc! }, quietLog);
    };
    const moved = await client('/sap/bc/soap/rfc')
      .send({ functionName: 'RFC_PING', params: {} })
      .catch((e: unknown) => e as Error);
    t.type(moved, SystemRefusalError);
    t.match(
      moved.message,
      'RFC_PING on S4H: HTTP 302, redirected to https://sap.example.com/sap/bc/soap/rfc: set rfc.url of system S4H',
    );
    const nowhere = await client('/there')
      .send({ functionName: 'RFC_PING', params: {} })
      .catch((e: unknown) => e as Error);
    t.match(nowhere.message, 'HTTP 307, redirected to no address');
  },
);

t.test('a host refused on each of its addresses says so for each', async (t) => {
  const refused = (address: string) =>
    Object.assign(new Error(`connect ECONNREFUSED ${address}`), { code: 'ECONNREFUSED' });
  const both = Object.assign(new AggregateError([refused('::1:8081'), refused('127.0.0.1:8081')], ''), {
    code: 'ECONNREFUSED',
  });
  const failure = networkFailure(both, 'RFC_PING on S4H', 'S4H');
  t.type(failure, SystemUnavailableError);
  t.equal(
    failure.message,
    'RFC_PING on S4H failed (ECONNREFUSED): connect ECONNREFUSED ::1:8081; connect ECONNREFUSED 127.0.0.1:8081',
  );
  const worded = Object.assign(new AggregateError([], 'all addresses refused'), { code: 'ECONNREFUSED' });
  t.equal(
    networkFailure(worded, 'RFC_PING on S4H', 'S4H').message,
    'RFC_PING on S4H failed (ECONNREFUSED): all addresses refused',
  );
});

t.test('HTTP answers of the service: logon, client, paths, bodies', async (t) => {
  const { url, erp, raw } = await setUp(t);
  const auth = { Authorization: `Basic ${Buffer.from('CONNECTOR:sandbox').toString('base64')}` };
  const post = (path: string, body: string, headers: Record<string, string> = auth) =>
    fetch(`${url}${path}`, { method: 'POST', body, headers });
  t.equal((await post('/sap/bc/soap/rfc', requestEnvelope('RFC_PING', {}), {})).status, 401, 'no credentials: 401');
  t.equal(
    (await post('/sap/bc/soap/rfc?sap-client=999', requestEnvelope('RFC_PING', {}))).status,
    401,
    'an unknown client: 401',
  );
  t.equal((await raw(requestEnvelope('RFC_PING', {}))).status, 200, 'no client: the default one');
  const notSoap = await raw('<x/>');
  t.equal(notSoap.status, 500, 'not SOAP');
  t.match(
    await notSoap.text(),
    '<faultstring>The request is not a SOAP 1.1 envelope (http://schemas.xmlsoap.org/soap/envelope/)</faultstring>',
  );
  const notXml = await raw('<<<');
  t.equal(notXml.status, 500, 'not XML');
  t.match(
    await notXml.text(),
    /<faultcode>soap-env:Client<\/faultcode><faultstring>The request is not well-formed XML: /,
  );
  const before = JSON.stringify(erp.tables);
  const unescaped = await raw(requestEnvelope('ARCHIV_CONNECTION_INSERT', LINK).replace('ZFIINVOICE', 'ZFI&INVOICE'));
  t.equal(unescaped.status, 500, 'a value with an unescaped & is refused, as an XML parser refuses it');
  t.equal(JSON.stringify(erp.tables), before, 'and nothing was linked');
  t.equal((await post('/elsewhere', '')).status, 404);
  t.same(await (await fetch(`${url}/sandbox/tables`)).json(), erp.tables, 'tables can be read over HTTP');

  const [system] = erpSchema.parse({
    systems: [
      {
        name: 'S4H',
        client: '100',
        rfc: { url: `${url}/sap/bc/soap/rfx`, auth: { username: 'CONNECTOR', password: 'sandbox' } },
      },
    ],
  }).systems;
  const wrongPath = await new RfcClient({ ...system, rfc: system.rfc! }, quietLog)
    .send({ functionName: 'RFC_PING', params: {} })
    .catch((e: unknown) => e as Error);
  t.type(wrongPath, SystemRefusalError, "no service at rfc.url: the system's refusal, not each document's failure");
  t.match(wrongPath.message, /HTTP 404, not a SOAP answer: set rfc\.url of system S4H in erpHttp\.yaml/);
});

t.test("the job's codec reads what SAP may send", async (t) => {
  t.same(parseAnswer('F', '<<<'), { kind: 'unreadable' }, 'broken XML');
  const bare =
    '<e:Envelope xmlns:e="http://schemas.xmlsoap.org/soap/envelope/"><e:Body><e:Fault><faultcode>e:Server</faultcode><faultstring>SYSTEM_FAILURE</faultstring></e:Fault></e:Body></e:Envelope>';
  t.same(
    parseAnswer('F', bare),
    {
      kind: 'fault',
      fault: {
        exception: 'SYSTEM_FAILURE',
        text: 'SYSTEM_FAILURE',
        messageId: undefined,
        messageNumber: undefined,
        runtime: true,
      },
    },
    'a fault without detail',
  );
  t.same(
    readCall(requestEnvelope('/BIC/Z_FM', { '/BIC/P': 'x', S: { A: '1' }, T: [{ B: '2' }] })),
    { functionName: '/BIC/Z_FM', params: { '/BIC/P': 'x', S: { A: '1' }, T: [{ B: '2' }] } },
    'names with / survive as _-',
  );
  t.same(
    readCall('<e:Envelope xmlns:e="http://schemas.xmlsoap.org/soap/envelope/"><e:Body/></e:Envelope>'),
    { refused: 'The request is not a SOAP envelope with a function module' },
    'a request without a function',
  );
  t.same(
    readCall(requestEnvelope('F', { A: 'x & y < z > "q"', B: 'é' })),
    { functionName: 'F', params: { A: 'x & y < z > "q"', B: 'é' } },
    "the job's escaping read back by a conforming parser",
  );
  t.same(
    readCall(requestEnvelope('F', { OBJECT_ID: ' 4711', DESCR: 'scan  ', T: [{ B: ' 2 ' }] })),
    { functionName: 'F', params: { OBJECT_ID: ' 4711', DESCR: 'scan', T: [{ B: ' 2' }] } },
    'a CHAR value keeps its leading blanks, another key than without them, and drops its trailing ones',
  );
  const soap = (body: string): string =>
    `<?xml version="1.0" encoding="utf-8"?><e:Envelope xmlns:e="http://schemas.xmlsoap.org/soap/envelope/"><e:Body>${body}</e:Body></e:Envelope>`;
  const rfc = (
    fields: string,
    attributes = ' xmlns:f="urn:sap-com:document:sap:rfc:functions"',
    name = 'f:F',
  ): string => soap(`<${name}${attributes}>${fields}</${name}>`);
  t.same(
    readCall(rfc('<A>1 &amp; 2 &#233;</A>', ' xmlns="urn:sap-com:document:sap:rfc:functions"', 'F')),
    { functionName: 'F', params: { A: '1 & 2 é' } },
    'the namespace as a default one, references read as their characters',
  );
  for (const [what, xml, refusal] of [
    ['an unescaped &', rfc('<A>x & y</A>'), /^The request is not well-formed XML: /],
    ['an HTML entity, undefined in XML', rfc('<A>x&nbsp;y</A>'), /^The request is not well-formed XML: /],
    ['a tag left open', rfc('<A>1</A><B>'), /^The request is not well-formed XML: /],
    ['two root elements', `${rfc('<A>1</A>')}<x/>`, /^The request is not well-formed XML: /],
    [
      'a function outside the RFC namespace',
      rfc('<A>1</A>', '', 'F'),
      /^The body's element F is not in the namespace /,
    ],
    [
      'a SOAP 1.2 envelope',
      rfc('<A>1</A>').replace('http://schemas.xmlsoap.org/soap/envelope/', 'http://www.w3.org/2003/05/soap-envelope'),
      /^The request is not a SOAP 1.1 envelope /,
    ],
    ['a field given twice', rfc('<A>1</A><A>2</A>'), /^F has the field A twice$/],
    ['a field twice in a structure', rfc('<S><B>1</B><B>2</B></S>'), /^S has the field B twice$/],
    [
      'an envelope without a body',
      '<e:Envelope xmlns:e="http://schemas.xmlsoap.org/soap/envelope/"><e:Header/></e:Envelope>',
      /^The request is not a SOAP envelope with a function module$/,
    ],
  ] as const) {
    const read = readCall(xml);
    t.match('refused' in read ? read.refused : read, refusal, `refused: ${what}`);
  }
  const fault = new RfcFault('F', { exception: 'X', text: 't' });
  t.equal(fault.messageKey, '', 'no message id');
  t.equal(fault.message, 'F raised X: t');
});

t.test('the sandbox command releases the repository port when the ERP port is taken', async (t) => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.teardown(() => blocker.close());
  await t.rejects(
    startSandbox(
      { port: 0, erpPort: (blocker.address() as AddressInfo).port, settings: loadSandboxSettings(undefined) },
      () => undefined,
      new Promise(() => undefined),
    ),
    /EADDRINUSE/,
  );
});

t.test('RFC_READ_TABLE reads the customizing tables, and refuses what it cannot read as SAP does', async (t) => {
  const { erp, call, fault } = await setUp(t);
  const answer = await call('RFC_READ_TABLE', {
    QUERY_TABLE: 'TOAOM',
    DELIMITER: '|',
    OPTIONS: [{ TEXT: "SAP_OBJECT EQ 'BKPF'" }],
    DATA: [],
  });
  t.same(
    (answer.DATA as Array<{ WA: string }>).map((row) => row.WA),
    ['BKPF      |ZFIINVOICE|X|Z1|TOA01'],
    'every column when FIELDS is empty, each padded to its length',
  );
  t.match(answer.FIELDS, [
    { FIELDNAME: 'SAP_OBJECT', OFFSET: '000000', LENGTH: '000010' },
    { FIELDNAME: 'AR_OBJECT', OFFSET: '000011' },
  ]);
  const refused = async (params: Record<string, unknown>) => (await fault('RFC_READ_TABLE', params))?.fault.exception;
  t.equal(await refused({ QUERY_TABLE: 'BKPF' }), 'NOT_AUTHORIZED', 'S_TABU_NAM: a table the user may not read');
  erp.customizing.users.CONNECTOR.tables = '*';
  t.equal(await refused({ QUERY_TABLE: 'BKPF' }), 'TABLE_NOT_AVAILABLE');
  t.equal(await refused({ QUERY_TABLE: 'TOAAR', FIELDS: [{ FIELDNAME: 'NOPE' }] }), 'FIELD_NOT_VALID');
  t.equal(await refused({ QUERY_TABLE: 'TOAAR', OPTIONS: [{ TEXT: "ARCHIV_ID LIKE 'Z%'" }] }), 'OPTION_NOT_VALID');
  t.equal(await refused({ QUERY_TABLE: 'TOAAR', OPTIONS: [{ TEXT: "NOPE = 'Z1'" }] }), 'OPTION_NOT_VALID');
  const quoted = await call('RFC_READ_TABLE', {
    QUERY_TABLE: 'TOAAR',
    OPTIONS: [{ TEXT: "ARCHIV_ID = 'Z''1'" }],
    DATA: [],
  });
  t.same(quoted.DATA, '', "a quote doubled inside a literal is one quote: nothing is called Z'1");
});

t.test('ARCHIV_GET_CONNECTIONS finds links stored within FROM_AR_DATE and UNTIL_AR_DATE', async (t) => {
  const { erp, call, fault } = await setUp(t);
  erp.tables.links.push({
    client: '100',
    SAP_OBJECT: 'BKPF',
    OBJECT_ID: '1',
    ARCHIV_ID: 'Z1',
    ARC_DOC_ID: 'D1',
    AR_OBJECT: 'ZFIINVOICE',
    AR_DATE: '20240115',
    FILENAME: '',
    DESCR: '',
    CREATOR: '',
  });
  const found = (range: Record<string, string>) =>
    call('ARCHIV_GET_CONNECTIONS', { ARC_DOC_ID: 'D1', CONNECTIONS: [], ...range });
  t.match(await found({ FROM_AR_DATE: '2024-01-15', UNTIL_AR_DATE: '2024-01-15' }), { COUNT: '1' });
  t.equal(
    (await fault('ARCHIV_GET_CONNECTIONS', { ARC_DOC_ID: 'D1', FROM_AR_DATE: '2024-01-16' }))?.fault.exception,
    'NOTHING_FOUND',
  );
  t.equal(
    (await fault('ARCHIV_GET_CONNECTIONS', { ARC_DOC_ID: 'D1', UNTIL_AR_DATE: '2024-01-14' }))?.fault.exception,
    'NOTHING_FOUND',
  );
});

t.test(
  'RFC_READ_TABLE reads OPTIONS rows as if a blank separated them: a literal cut across two rows is not the value',
  async (t) => {
    const { call } = await setUp(t);
    const read = (options: string[]) =>
      call('RFC_READ_TABLE', { QUERY_TABLE: 'TOAAR', OPTIONS: options.map((TEXT) => ({ TEXT })), DATA: [] });
    t.match(await read(["ARCHIV_ID = 'Z1'   "]), { DATA: [{ WA: 'Z1' }] }, 'trailing blanks of a row are dropped');
    t.same((await read(["ARCHIV_ID = 'Z", "1'"])).DATA, '');
  },
);

t.test("an SAP answer larger than 4 MiB is not read: the call's outcome is uncertain, to be looked up", async (t) => {
  const { erp, call } = await setUp(t);
  erp.faults.add({
    functionName: 'RFC_PING',
    status: 200,
    headers: { 'Content-Type': 'text/xml' },
    body: `<x>${'y'.repeat(9 * 1024 * 1024)}</x>`,
  });
  const error = await call('RFC_PING', {}).catch((e: unknown) => e);
  t.type(error, UncertainError);
  t.equal(
    (error as Error).message,
    "RFC_PING on S4H: SAP's answer is larger than 4 MiB, not read; the call may have done its work",
  );
});

t.test(
  'the sandbox describes its interfaces as SAP does: lengths in bytes of a Unicode system unless asked without',
  async (t) => {
    const { call, fault } = await setUp(t);
    const read = async (extra: Record<string, unknown>) =>
      tableRows(
        (await call('RFC_GET_FUNCTION_INTERFACE', { FUNCNAME: 'ARCHIV_CONNECTION_INSERT', PARAMS: [], ...extra }))
          .PARAMS,
      );
    const unicode = (await read({})).find((row) => row.PARAMETER === 'OBJECT_ID');
    t.match(
      unicode,
      { PARAMCLASS: 'I', EXID: 'C', INTLENGTH: '100', OPTIONAL: '' },
      'OBJECT_ID: 50 characters, 100 bytes, mandatory',
    );
    const plain = (await read({ NONE_UNICODE_LENGTH: 'X' })).find((row) => row.PARAMETER === 'AR_DATE');
    t.match(plain, { EXID: 'D', INTLENGTH: '8', OPTIONAL: 'X' });
    t.match(await fault('RFC_GET_FUNCTION_INTERFACE', { FUNCNAME: 'Z_NOTHING', PARAMS: [] }), {
      message: /FU_NOT_FOUND/,
    });
    t.match(await fault('ARCHIV_CONNECTION_INSERT', { SAP_OBJECT: 'BKPF', OBJECT_ID: '1', ARC_DOC_ID: 'd1' }), {
      message: /AR_OBJECT is a mandatory parameter of ARCHIV_CONNECTION_INSERT/,
    });
  },
);
