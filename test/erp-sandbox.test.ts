import t, { type Test } from 'tap';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { erpSchema } from '../src/config/erp-schema.js';
import { RfcClient, RfcFault } from '../src/erp/rfc-client.js';
import { parseAnswer, parseRequest, requestEnvelope, tableRows } from '../src/erp/soap.js';
import { ErpSandbox } from '../src/sandbox/erp/server.js';
import { startSandbox } from '../src/sandbox/start.js';
import { quietLog } from './helpers/env.js';

/** The ERP sandbox answers like SAP; checked through the job's own SOAP-RFC client. */
async function setUp(t: Test, system: Record<string, unknown> = {}) {
  const erp = new ErpSandbox();
  const url = await erp.start();
  t.teardown(() => erp.stop());
  const config = erpSchema.parse({ systems: [{ name: 'S4H', client: '100', rfc: { url: `${url}/sap/bc/soap/rfc`, auth: { username: 'CONNECTOR', password: 'sandbox' } }, ...system }] }).systems[0];
  const rfc = new RfcClient({ ...config, rfc: config.rfc! }, quietLog);
  const call = (functionName: string, params: Record<string, unknown>) => rfc.send({ functionName, params: params as never });
  const fault = (fn: string, params: Record<string, unknown>) => call(fn, params).then(() => undefined, (e: unknown) => e as RfcFault);
  return { erp, url, rfc, call, fault };
}

const LINK = { SAP_OBJECT: 'BKPF', OBJECT_ID: '1', ARCHIV_ID: 'Z1', ARC_DOC_ID: 'd1', AR_OBJECT: 'ZFIINVOICE' };

t.test('ARCHIV_CONNECTION_INSERT checks its customizing like SAP', async (t) => {
  const ca = join(import.meta.dirname, 'fixtures', 'tls', 'ca.pem');
  const { erp, call, fault } = await setUp(t, { language: 'EN', tls: { caFile: ca } });
  t.same(await call('RFC_PING', {}), {}, 'RFC_PING answers');
  await call('ARCHIV_CONNECTION_INSERT', { ...LINK, AR_DATE: '20240115' });
  t.equal(erp.tables.links[0].AR_DATE, '20240115');
  t.equal((await fault('ARCHIV_CONNECTION_INSERT', LINK))?.messageKey, 'OA403', 'a duplicate is OA403');
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ AR_OBJECT: 'ZBARCODE' }, /\(OA020\): Document type ZBARCODE is not linked to object type BKPF/],
    [{ ARCHIV_ID: 'Z9' }, /\(OA031\): Content repository Z9 is not defined/],
    [{ OBJECT_ID: '' }, /\(OA000\): OBJECT_ID and ARC_DOC_ID are required/],
    [{ DESCR: 'd'.repeat(61) }, /DESCR is longer than 60 characters/],
  ];
  for (const [change, message] of cases) t.match((await fault('ARCHIV_CONNECTION_INSERT', { ...LINK, ...change }))?.message, message);
  t.match((await fault('Z_UNKNOWN', {}))?.message, 'Z_UNKNOWN raised FU_NOT_FOUND: Function module Z_UNKNOWN not found');
  const found = await call('ARCHIV_GET_CONNECTIONS', { OBJECTTYPE: 'BKPF', OBJECT_ID: '1', CONNECTIONS: [] });
  t.same(tableRows(found.CONNECTIONS).map((r) => r.ARC_DOC_ID), ['d1'], 'links are read back');
  t.same(tableRows(undefined), [], 'an absent table has no rows');
});

t.test('BAPI_BARCODE_SENDLIST answers in RETURN and is harmless to repeat', async (t) => {
  const { erp, call } = await setUp(t);
  const row = { BARCODE: 'B1', CONTREP: 'Z1', DOCID: 'd1', ARDATE: '20240101', DOCTYPE: 'PDF' };
  const ok = await call('BAPI_BARCODE_SENDLIST', { BARCODETABLE: [row], RETURN: {} });
  t.equal((ok.RETURN as Record<string, string>).TYPE, '', 'an empty TYPE: no error');
  await call('BAPI_BARCODE_SENDLIST', { BARCODETABLE: [row] });
  t.equal(erp.tables.barcodes.length, 1, 'the same bar code for the same document is stored once');
  t.equal(erp.tables.barcodes[0].ARDATE, '20240101');
  for (const [change, message] of [[{ CONTREP: 'Z9' }, 'Content repository Z9 is not defined'], [{ DOCTYPE: 'TIFF' }, 'Document class TIFF is not defined']] as const) {
    const answer = await call('BAPI_BARCODE_SENDLIST', { BARCODETABLE: [{ ...row, BARCODE: 'B2', ...change }] });
    t.same(answer.RETURN, { TYPE: 'E', ID: 'OA', NUMBER: '100', MESSAGE: message, MESSAGE_V1: 'B2' });
  }
  await call('BAPI_BARCODE_SENDLIST', { BARCODETABLE: [{ BARCODE: 'B3', CONTREP: 'Z1', DOCID: 'd3', DOCTYPE: 'PDF' }] });
  t.match(erp.tables.barcodes[1].ARDATE, /^\d{8}$/, 'no date: today');
  t.same((await call('BAPI_BARCODE_SENDLIST', {})).RETURN, { TYPE: '', ID: '', NUMBER: '000', MESSAGE: '', MESSAGE_V1: '' }, 'an empty list is no error');
});

t.test('links and bar codes are found through their indexes, rows added by hand included; a row edited by hand is not found under the value it lost', async (t) => {
  const { erp, call } = await setUp(t);
  const byDocument = async (docId: string) => tableRows((await call('ARCHIV_GET_CONNECTIONS', { ARC_DOC_ID: docId, CONNECTIONS: [] })).CONNECTIONS).map((r) => r.OBJECT_ID);
  await call('ARCHIV_CONNECTION_INSERT', LINK);
  await call('ARCHIV_CONNECTION_INSERT', { ...LINK, OBJECT_ID: '2' });
  t.same(await byDocument('d1'), ['1', '2'], 'one document linked to two objects: both links');
  erp.tables.links.push({ ...erp.tables.links[0], ARC_DOC_ID: 'd9' });
  t.same(await byDocument('d9'), ['1'], 'a row added by hand');
  erp.tables.links[0].ARC_DOC_ID = 'd5';
  t.same(await byDocument('d1'), ['2'], 'a row edited by hand is not found under the value it lost');

  const row = { BARCODE: 'B1', CONTREP: 'Z1', DOCID: 'd1', DOCTYPE: 'PDF' };
  erp.tables.barcodes.push({ ...row, client: '200', DOCID: 'd2', ARDATE: '20240101' });
  t.match((await call('BAPI_BARCODE_SENDLIST', { BARCODETABLE: [row] })).RETURN, { TYPE: '' }, 'the same bar code in another client is no duplicate');
  const duplicate = await call('BAPI_BARCODE_SENDLIST', { BARCODETABLE: [{ ...row, BARCODE: 'B2', DOCID: 'd3' }, { ...row, DOCID: 'd4' }] });
  t.match(duplicate.RETURN, { TYPE: 'E', MESSAGE: 'Bar code B1 is already assigned to another document' });
  t.equal(erp.tables.barcodes.length, 2, 'a list with an error stores none of its rows');
});

t.test('ARCHIV_PROCESS_RFCINPUT checks what it needs without a bar code', async (t) => {
  const { fault } = await setUp(t);
  const entry = { ARCHIV_ID: 'Z1', ARC_DOC_ID: 'd1', AR_OBJECT: 'ZINVWF', DOC_TYPE: 'PDF' };
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ DOCUMENT_ENTRY: { ...entry, ARCHIV_ID: 'Z9' } }, 'ERROR_PARAMETER: Content repository Z9 is not defined'],
    [{ DOCUMENT_ENTRY: { ...entry, AR_OBJECT: 'ZNOPE' } }, 'ERROR_PARAMETER: Document type ZNOPE is not defined'],
    [{ DOCUMENT_ENTRY: { ...entry, ARC_DOC_ID: '' } }, 'ERROR_PARAMETER: ARC_DOC_ID is required without a bar code'],
    [{ DOCUMENT_ENTRY: entry, DOCUMENT_DATA: [{ NAME: 'OTYPE', WERT: 'A' }, { NAME: 'OBJID', WERT: '1' }] }, 'NO_WORKITEM_CREATED: Agent A 1 does not exist'],
  ];
  for (const [params, message] of cases) t.match((await fault('ARCHIV_PROCESS_RFCINPUT', params))?.message, message);
});

t.test('HTTP answers of the service: logon, client, paths, bodies', async (t) => {
  const { url, erp } = await setUp(t);
  const auth = { Authorization: `Basic ${Buffer.from('CONNECTOR:sandbox').toString('base64')}` };
  const post = (path: string, body: string, headers: Record<string, string> = auth) => fetch(`${url}${path}`, { method: 'POST', body, headers });
  t.equal((await post('/sap/bc/soap/rfc', requestEnvelope('RFC_PING', {}), {})).status, 401, 'no credentials: 401');
  t.equal((await post('/sap/bc/soap/rfc?sap-client=999', requestEnvelope('RFC_PING', {}))).status, 401, 'an unknown client: 401');
  t.equal((await post('/sap/bc/soap/rfc', requestEnvelope('RFC_PING', {}))).status, 200, 'no client: the default one');
  t.equal((await post('/sap/bc/soap/rfc', '<x/>')).status, 500, 'not SOAP');
  t.equal((await post('/elsewhere', '')).status, 404);
  const tables = await (await fetch(`${url}/sandbox/tables`)).json();
  t.same(tables, erp.tables, 'tables can be read over HTTP');
});

t.test('the SOAP codec reads what SAP may send', async (t) => {
  t.same(parseAnswer('F', '<<<'), { kind: 'unreadable' }, 'broken XML');
  const bare = '<e:Envelope xmlns:e="http://schemas.xmlsoap.org/soap/envelope/"><e:Body><e:Fault><faultcode>e:Server</faultcode><faultstring>SYSTEM_FAILURE</faultstring></e:Fault></e:Body></e:Envelope>';
  t.same(parseAnswer('F', bare), { kind: 'fault', fault: { exception: 'SYSTEM_FAILURE', text: 'SYSTEM_FAILURE', messageId: undefined, messageNumber: undefined } }, 'a fault without detail');
  t.equal(parseRequest('<e:Envelope xmlns:e="http://schemas.xmlsoap.org/soap/envelope/"><e:Body/></e:Envelope>'), undefined, 'a request without a function');
  const roundTrip = parseRequest(requestEnvelope('/BIC/Z_FM', { '/BIC/P': 'x', S: { A: '1' }, T: [{ B: '2' }] }));
  t.same(roundTrip, { functionName: '/BIC/Z_FM', params: { '/BIC/P': 'x', S: { A: '1' }, T: [{ B: '2' }] } }, 'names with / survive as _-');
  const fault = new RfcFault('F', { exception: 'X', text: 't' });
  t.equal(fault.messageKey, '', 'no message id');
  t.equal(fault.message, 'F raised X: t');
});

t.test('the sandbox command releases the repository port when the ERP port is taken', async (t) => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.teardown(() => blocker.close());
  await t.rejects(startSandbox({ port: 0, erpPort: (blocker.address() as AddressInfo).port }, () => undefined, new Promise(() => undefined)), /EADDRINUSE/);
});
