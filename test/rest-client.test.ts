import t, { type Test } from 'tap';
import got from 'got';
import { Readable } from 'node:stream';
import { erpSchema } from '../src/config/erp-schema.js';
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PermanentError, SystemRefusalError, SystemUnavailableError, UncertainError } from '../common/errors.js';
import { dryRunErp, type PlannedCall } from '../src/ports/erp-port.js';
import { RestClient, RestFault, type RestRequest } from '../src/erp/rest-client.js';
import { RfcClient } from '../src/erp/rfc-client.js';
import { ErpSandbox } from '../sandbox/erp/server.js';
import { restCall } from '../src/job/calls/rest-call.js';
import { restCallSchema } from '../src/config/call-schema.js';
import { quietLog } from './helpers/env.js';
import { trickleServer } from './helpers/trickle.js';

/** The Rest transport against the ERP sandbox over HTTP: CSRF, encodings, and how each failure is typed. */
const SERVICE = '/sap/opu/odata/sap/API_CV_ATTACHMENT_SRV';

async function setUp(t: Test, url?: string) {
  const erp = new ErpSandbox();
  const base = await erp.start();
  t.teardown(() => erp.stop());
  const config = erpSchema.parse({
    systems: [
      {
        name: 'S4H',
        client: '100',
        language: 'EN',
        rest: { url: url ?? base, auth: { username: 'CONNECTOR', password: 'sandbox' } },
      },
    ],
  }).systems[0];
  const rest = new RestClient({ ...config, rest: config.rest! }, quietLog);
  const upload = (headers: Record<string, string>, content = 'PDF'): RestRequest => ({
    method: 'POST',
    service: SERVICE,
    path: '/AttachmentContentSet',
    headers: { BusinessObjectTypeName: 'BKPF', LinkedSAPObjectKey: '1', ...headers },
    // Without a length: sent chunked, as a file whose size the repository did not say.
    body: { content: async () => ({ stream: Readable.from([Buffer.from(content)]) }) },
    csrf: true,
  });
  const look = (path = "/GetAllOriginals?BusinessObjectTypeName='BKPF'&LinkedSAPObjectKey='1'"): RestRequest => ({
    method: 'GET',
    service: SERVICE,
    path,
    headers: {},
    csrf: true,
  });
  return { erp, base, rest, upload, look };
}

t.test(
  'uploads after one handshake, with non-ASCII file names, and fetches a new token when the session expired',
  async (t) => {
    const { erp, rest, upload, look } = await setUp(t);
    t.same(await rest.send(look()), { results: [] });
    const created = await rest.send(upload({ Slug: 'Rechnung-ü.pdf', 'Content-Type': 'application/pdf' }));
    t.match(created, {
      FileName: 'Rechnung-ü.pdf',
      FileSize: '3',
      MimeType: 'application/pdf',
      DocumentInfoRecordDocNumber: '0000000001',
    });
    erp.csrf.expireSessions();
    t.match(
      await rest.send(upload({ Slug: 'b.pdf' })),
      { FileName: 'b.pdf', MimeType: 'application/octet-stream' },
      'a stale token is refreshed once',
    );
    t.match(await rest.send(look()), { results: [{ FileName: 'Rechnung-ü.pdf' }, { FileName: 'b.pdf' }] });
    t.match(
      await rest.send(look("/GetAllOriginals?BusinessObjectTypeName='O''Hara'")),
      { results: [] },
      'OData literals with quotes',
    );
  },
);

t.test('each failure is typed where it is raised', async (t) => {
  const { erp, rest, upload, look } = await setUp(t);
  const failure = (request: RestRequest) =>
    rest.send(request).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
  erp.faults.add({ functionName: '', drop: true });
  t.type(
    await failure(upload({ Slug: 'a' })),
    SystemUnavailableError,
    "a handshake that fails: nothing was written, the system's to answer",
  );
  erp.faults.add({ functionName: '', status: 200 });
  t.match(await failure(upload({ Slug: 'a' })), {
    constructor: PermanentError,
    message: /SAP sent no X-CSRF-Token \(HTTP 200\)/,
  });
  erp.faults.add({ functionName: 'GetAllOriginals', status: 200, body: 'hello' });
  t.match(await failure(look()), { message: /the answer is not JSON/ });
  erp.faults.add({ functionName: 'GetAllOriginals', status: 200, body: '{"results":[]}' });
  t.same(await rest.send(look()), { results: [] }, "JSON without OData's `d` is taken as it is");
  erp.faults.add({ functionName: 'GetAllOriginals', status: 400, body: '{"error":{"message":"plain"}}' });
  t.match(await failure(look()), { constructor: RestFault, message: /on S4H: plain$/ });
  erp.faults.add({ functionName: 'GetAllOriginals', status: 400, body: '{"error":{"code":"C1","message":{}}}' });
  t.match(
    await failure(look()),
    { constructor: PermanentError, message: /failed with HTTP 400$/ },
    'an error without a message',
  );
  erp.faults.add({ functionName: 'GetAllOriginals', status: 400, body: '{"other":1}' });
  t.match(await failure(look()), { message: /failed with HTTP 400$/ });
  erp.faults.add({
    functionName: 'GetAllOriginals',
    status: 503,
    body: '{"error":{"code":"X","message":{"value":"busy"}}}',
  });
  t.type(await failure(look()), SystemUnavailableError, 'a 503 is an outage even with a message');
  erp.faults.add({ functionName: 'GetAllOriginals', status: 500, body: 'boom' });
  t.type(await failure(look()), UncertainError, 'a bare 500 may come after the work');
  erp.faults.add({ functionName: 'AttachmentContentSet', drop: true });
  t.type(await failure(upload({ Slug: 'a' })), UncertainError, 'a connection lost after sending');
  t.equal(erp.tables.attachments.length, 0);
});

t.test('a server that is not there: the request was never sent', async (t) => {
  const { rest } = await setUp(t, 'http://127.0.0.1:1');
  const error = await rest
    .send({ method: 'GET', service: SERVICE, path: '/x', headers: {}, csrf: true })
    .catch((e: unknown) => e);
  t.type(error, SystemUnavailableError, 'the system is unavailable, not the document');
  t.notOk(error instanceof UncertainError);
});

t.test(
  'an answer that pauses longer than the time-out may have reached SAP; one that keeps coming is not cut off',
  async (t) => {
    // The OData answer in eight pieces 100 ms apart (700 ms in all, against a time-out of 300 ms)
    // to /slow; its first piece, then silence, to /stalled.
    const url = await trickleServer(t, ['{"d"', ':', '{"re', 'sults"', ':', '[]', '}', '}'], 'application/json');
    const config = erpSchema.parse({
      systems: [
        {
          name: 'S4H',
          client: '100',
          timeouts: { connectMs: 1000, requestMs: 300 },
          rest: { url, auth: { username: 'CONNECTOR', password: 'sandbox' } },
        },
      ],
    }).systems[0];
    const rest = new RestClient({ ...config, rest: config.rest! }, quietLog);
    t.same(
      await rest.send({ method: 'GET', service: SERVICE, path: '/slow', headers: {}, csrf: true }),
      { results: [] },
      'a long answer on a slow link arrives whole',
    );
    const stalled = await rest
      .send({ method: 'GET', service: SERVICE, path: '/stalled', headers: {}, csrf: true })
      .catch((e: unknown) => e);
    t.type(stalled, UncertainError, 'the request went out: SAP may have done the work');
    t.match(
      (stalled as Error).message,
      /^GET \/sap\/opu\/odata\/sap\/API_CV_ATTACHMENT_SRV\/stalled on S4H failed \(ETIMEDOUT\)/,
    );
  },
);

t.test('the sandbox refuses what Gateway refuses', async (t) => {
  const { base } = await setUp(t);
  const http = got.extend({
    prefixUrl: base,
    username: 'CONNECTOR',
    password: 'sandbox',
    throwHttpErrors: false,
    retry: { limit: 0 },
  });
  const refused = await http.post(`${SERVICE.slice(1)}/AttachmentContentSet`, { body: 'x' });
  t.equal(refused.statusCode, 403);
  t.equal(refused.headers['x-csrf-token'], 'Required', 'no token');
  const fetched = await http.head(`${SERVICE.slice(1)}/`, { headers: { 'X-CSRF-Token': 'Fetch' } });
  const token = fetched.headers['x-csrf-token'] as string;
  const cookie = (fetched.headers['set-cookie'] as string[]).map((c) => c.split(';')[0]).join('; ');
  const write = (path: string, headers: Record<string, string>, body = 'x') =>
    http.post(path, { body, headers: { 'X-CSRF-Token': token, cookie, ...headers } });
  t.equal(
    (await http.post(`${SERVICE.slice(1)}/AttachmentContentSet`, { body: 'x', headers: { 'X-CSRF-Token': token } }))
      .statusCode,
    403,
    'a token without its session',
  );
  t.match(
    JSON.parse((await write(`${SERVICE.slice(1)}/AttachmentContentSet`, { BusinessObjectTypeName: 'BKPF' })).body),
    { error: { message: { value: 'User has no authorization for operation 03 on object BKPF ' } } },
    'no object key',
  );
  t.equal(
    (
      await write(`${SERVICE.slice(1)}/AttachmentContentSet`, {
        BusinessObjectTypeName: 'BKPF',
        LinkedSAPObjectKey: '1',
      })
    ).statusCode,
    400,
    'no Slug',
  );
  t.equal((await http.get(`${SERVICE.slice(1)}/Nothing`)).statusCode, 404);
  t.same(JSON.parse((await http.get(`${SERVICE.slice(1)}/GetAllOriginals`)).body), { d: { results: [] } });
  t.equal(
    (await http.get('sap/bc/fmcall/RFC_PING')).statusCode,
    404,
    'no function-module gateway: a standard SAP has none',
  );
});

t.test(
  'a declared call: a dry run plans it with its JSON body; one without a body sends its headers; one without CSRF makes no handshake',
  async (t) => {
    const { rest, erp } = await setUp(t);
    const planned: PlannedCall[] = [];
    const port = dryRunErp(rest, planned);
    const doc = {
      uid: 'u',
      path: '/p',
      type: 'File',
      title: 't',
      parentRef: 'r',
      changeToken: '1',
      facets: [],
      properties: { 'erpBarcode:barcode': 'B1', 'erpHttpContent:archiveId': 'Z1' },
    };
    const declared = restCallSchema.parse({
      service: '/sap/opu/odata/sap/ZBARCODE_SRV',
      method: 'POST',
      path: '/Barcodes',
      body: 'parameters',
      parameters: { 'BARCODETABLE[].BARCODE': { property: 'erpBarcode:barcode' } },
      result: { erpReference: '{BARCODETABLE[].BARCODE}' },
    });
    const barcode = restCall(declared, port, async () => ({ stream: Readable.from([]) }));
    await barcode.send([{ doc, values: [{ target: 'BARCODETABLE[].BARCODE', value: 'B1', fromDocument: true }] }]);
    t.same(planned[0], {
      system: 'S4H',
      call: 'POST /sap/opu/odata/sap/ZBARCODE_SRV/Barcodes',
      params: { BARCODETABLE: [{ BARCODE: 'B1' }] },
    });
    const none = restCall(
      { ...declared, body: 'none', headers: { 'X-Code': '{BARCODETABLE[].BARCODE}', 'X-Blank': '{NOTHING}' } },
      port,
      async () => ({ stream: Readable.from([]) }),
    );
    await none.send([{ doc, values: [{ target: 'BARCODETABLE[].BARCODE', value: 'B1', fromDocument: true }] }]);
    t.same(planned[1].params, { 'X-Code': 'B1' }, 'no body: the headers are the plan, blank headers left out');
    const sessions = erp.csrf.sessions.size;
    const plain = await rest
      .send({
        method: 'POST',
        service: SERVICE,
        path: '/AttachmentContentSet',
        headers: {},
        body: { json: {} },
        csrf: false,
      })
      .catch((e: unknown) => e as Error);
    t.match(plain, { status: 403 }, 'sent without a token: the service wants one');
    t.equal(erp.csrf.sessions.size, sessions, 'no handshake was made');
  },
);

t.test(
  "an SAP server whose TLS certificate is not trusted stops that system's work, over RFC and Rest, naming the setting",
  async (t) => {
    const tls = join(import.meta.dirname, 'fixtures', 'tls');
    const server = createHttpsServer(
      { key: readFileSync(join(tls, 'server.key')), cert: readFileSync(join(tls, 'server.pem')) },
      (_req, res) => res.end(),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(() => server.close());
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const auth = { username: 'CONNECTOR', password: 'sandbox' };
    const config = erpSchema.parse({
      systems: [{ name: 'S4H', client: '100', rfc: { url: `${url}/sap/bc/soap/rfc`, auth }, rest: { url, auth } }],
    }).systems[0];
    const rfc = new RfcClient({ ...config, rfc: config.rfc! }, quietLog);
    const rest = new RestClient({ ...config, rest: config.rest! }, quietLog);
    const failures = [
      await rfc.send({ functionName: 'RFC_PING', params: {} }).catch((e: unknown) => e),
      await rest
        .send({ method: 'GET', service: SERVICE, path: '/x', headers: {}, csrf: true })
        .catch((e: unknown) => e),
      await rest
        .send({ method: 'POST', service: SERVICE, path: '/x', headers: {}, body: { json: {} }, csrf: true })
        .catch((e: unknown) => e),
    ];
    for (const [i, failure] of failures.entries()) {
      t.type(failure, SystemRefusalError, `call ${i}: the system's refusal (its lanes stop), not a document's`);
      t.match(
        (failure as Error).message,
        /TLS certificate is not trusted \(\w+: .+\); check tls\.caFile of system S4H in erpHttp\.yaml$/,
      );
    }
    t.match((failures[2] as Error).message, /^CSRF token for /, 'a write fails at its handshake');
  },
);

t.test(
  "a login page answering 200 where SAP's JSON belongs is the system's refusal, named, not the document's",
  async (t) => {
    const { erp, rest, look } = await setUp(t);
    erp.faults.add({ status: 200, body: '<!DOCTYPE html>\n<html><body>Sign in</body></html>', headers: {}, times: 5 });
    const error = await rest.send(look()).catch((e: unknown) => e);
    t.type(error, SystemRefusalError);
    t.match(
      (error as Error).message,
      /: the server answered a web page \(a login page\?\) — check the URL and the credentials \(rest\.url and rest\.auth of system S4H in erpHttp\.yaml\)$/,
    );
  },
);

t.test(
  "an SAP answer larger than 4 MiB is cut off as it comes: the call's outcome is uncertain, to be looked up",
  async (t) => {
    const { erp, rest, look } = await setUp(t);
    erp.faults.add({
      status: 200,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ d: { results: [{ FileName: 'x'.repeat(5 * 1024 * 1024) }] } }),
    });
    const error = await rest.send(look()).catch((e: unknown) => e);
    t.type(error, UncertainError);
    t.match(
      (error as Error).message,
      /: SAP's answer is larger than 4 MiB, not read; the call may have done its work$/,
    );
  },
);
