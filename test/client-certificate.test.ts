import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { stringify } from 'yaml';
import { ErpSandbox } from '../sandbox/erp/server.js';
import { CertificateCheck, sentWithCertificate } from '../src/erp/certificate-check.js';
import type { ErpSystemConfig } from '../src/config/erp-schema.js';
import { sandboxEnv, type Env } from './helpers/env.js';
import { cli } from './helpers/run-cli.js';

// Runs over real HTTPS: the sandboxes and the job.
t.setTimeout(120_000);

/**
 * Signing in to SAP with an X.509 client certificate (mutual TLS), over SOAP-RFC and Rest: an ERP
 * sandbox serving HTTPS that asks for a certificate as SAP's ICM does (icm/HTTPS/verify_client) and
 * maps its subject to a user (VUSREXTID). test/fixtures/tls/README.md says how the certificates were made.
 */

const TLS = join(import.meta.dirname, 'fixtures', 'tls');
const file = (name: string): string => join(TLS, name);

/** An HTTPS SAP asking for client certificates signed by the test client CA. */
async function httpsSap(t: Test, verifyClient: 1 | 2): Promise<{ sap: ErpSandbox; url: string }> {
  const sap = new ErpSandbox({
    tls: {
      cert: readFileSync(file('server.pem')),
      key: readFileSync(file('server.key')),
      clientCa: readFileSync(file('clients/ca.pem')),
      verifyClient,
    },
  });
  const url = await sap.start();
  t.teardown(() => sap.stop());
  return { sap, url };
}

type Who = 'connector' | 'stranger' | 'nobody';

/** S4H at `url`, signing in with `who`'s certificate (or with the sandbox's user and password, for `basic`). */
function useSap(env: Env, url: string, who: Who | 'basic', transport: 'RFC' | 'Rest' = 'RFC'): void {
  const auth = who === 'basic' ? { username: 'CONNECTOR', password: 'sandbox' } : { type: 'certificate' };
  const tls = {
    caFile: file('ca.pem'),
    ...(who === 'basic' ? {} : { certFile: file(`clients/${who}.pem`), keyFile: file(`clients/${who}.key`) }),
  };
  const system = {
    name: 'S4H',
    client: '100',
    rfc: { url: `${url}/sap/bc/soap/rfc`, auth },
    rest: { url, auth: { ...auth } },
    tls,
  };
  writeFileSync(join(env.location.configDir, 'erpHttp.yaml'), stringify({ systems: [system] }));
  const task = join(env.location.jobsDir, 'link.yaml');
  writeFileSync(task, readFileSync(task, 'utf8').replace(/^function: \w+/m, `function: ${transport}`));
}

/**
 * S4H over Rest with OAuth client credentials whose client authenticates with `who`'s certificate
 * (RFC 8705 tls_client_auth), registered in SAP for CONNECTOR's subject.
 */
function useCertificateClient(env: Env, sap: ErpSandbox, url: string, who: Who): void {
  sap.customizing.oauthClients.CERT_CLIENT = {
    certificate: 'CN=CONNECTOR, O=connect2erp test',
    user: 'CONNECTOR',
    lifetimeS: 3600,
  };
  useSap(env, url, who, 'Rest');
  const erp = join(env.location.configDir, 'erpHttp.yaml');
  const oauth = `auth:\n        type: oauth2\n        tokenUrl: ${url}/sap/bc/sec/oauth2/token\n        clientId: CERT_CLIENT\n`;
  writeFileSync(erp, readFileSync(erp, 'utf8').replace(/auth:\n {8}type: certificate\n(?=( {4}tls:|$))/, oauth));
}

async function invoice(env: Env, name: string): Promise<string> {
  const uid = await env.upload('ERP/Invoices', name);
  await env.job({ task: 'link' });
  env.fill(uid, { 'erpCreateALDocument:erpObjectId': '510560010072026' });
  return uid;
}

t.test('a certificate SAP maps to its user links over SOAP-RFC and Rest, no password sent', async (t) => {
  const env = await sandboxEnv(t);
  const { sap, url } = await httpsSap(t, 2);
  const seen: Array<string | undefined> = [];
  sap.faults.observe = (req) => seen.push(req.headers.authorization);
  useSap(env, url, 'connector');
  const viaRfc = await invoice(env, 'rfc.pdf');
  const rfc = await env.job({ task: 'link' });
  t.same(rfc.tasks.link.counts, { DONE: 1 }, JSON.stringify(rfc.problems));
  t.equal(sap.tables.links.length, 1);
  t.equal(env.props(viaRfc)['erpTaskStatus:status'], 'DONE');

  useSap(env, url, 'connector', 'Rest');
  await invoice(env, 'rest.pdf');
  const rest = await env.job({ task: 'link' });
  t.same(rest.tasks.link.counts, { DONE: 1 }, JSON.stringify(rest.problems));
  t.equal(sap.tables.attachments.length, 1);
  t.same([...new Set(seen)], [undefined], 'no Authorization header: the certificate is the sign-in');
});

t.test(
  'a certificate SAP does not trust, or cannot map to a user: the system refused, exit 2, no document charged',
  async (t) => {
    const env = await sandboxEnv(t);
    const { sap, url } = await httpsSap(t, 2);
    useSap(env, url, 'stranger');
    const uid = await invoice(env, 'invoice.pdf');
    const untrusted = await env.job({ task: 'link' });
    t.equal(untrusted.exitCode, 2);
    t.match(
      JSON.stringify(untrusted.outages),
      /the SOAP-RFC service of S4H: SAP refused the TLS client certificate [^ ]*clients\/stranger\.pem \([A-Z_]+\): is it signed by a CA of SAP's SSL server PSE \(STRUST\)/,
    );
    t.match(env.props(uid), { 'erpTaskStatus:status': 'READY', 'erpTaskStatus:attempts': 0 });

    useSap(env, url, 'stranger', 'Rest');
    const overRest = await env.job({ task: 'link' });
    t.equal(overRest.exitCode, 2);
    t.match(JSON.stringify(overRest.outages), /the Rest connection of S4H: SAP refused the TLS client certificate/);

    useSap(env, url, 'nobody');
    const unmapped = await env.job({ task: 'link' });
    t.equal(unmapped.exitCode, 2);
    t.match(
      JSON.stringify(unmapped.outages),
      /SAP took the TLS client certificate [^ ]*clients\/nobody\.pem but signs no user in with it \(HTTP 401\): map its subject to the connector's user \(CERTRULE, or table VUSREXTID\)/,
    );
    t.match(env.props(uid), { 'erpTaskStatus:status': 'READY', 'erpTaskStatus:attempts': 0 });
    t.equal(sap.tables.links.length, 0);
  },
);

t.test(
  'where SAP only asks for a certificate (verify_client 1): a password still signs in, a stranger is refused',
  async (t) => {
    const env = await sandboxEnv(t);
    const { url } = await httpsSap(t, 1);
    useSap(env, url, 'basic');
    await invoice(env, 'basic.pdf');
    t.same((await env.job({ task: 'link' })).tasks.link.counts, { DONE: 1 });
    useSap(env, url, 'stranger');
    await invoice(env, 'stranger.pdf');
    const refused = await env.job({ task: 'link' });
    t.equal(refused.exitCode, 2);
    t.match(JSON.stringify(refused.outages), /SAP refused the TLS client certificate/);
  },
);

t.test(
  'an encrypted key with its passphrase; SAP not answering is unavailable, not a refusal, and asked again',
  async (t) => {
    const env = await sandboxEnv(t);
    const { sap, url } = await httpsSap(t, 2);
    useSap(env, url, 'connector');
    const erp = join(env.location.configDir, 'erpHttp.yaml');
    writeFileSync(
      erp,
      readFileSync(erp, 'utf8')
        .replace('clients/connector.key', 'clients/connector-encrypted.key')
        .replace(/( +)keyFile: .*\n/, '$&$1passphrase: ${env:C2E_TEST_PASSPHRASE}\n'),
    );
    process.env.C2E_TEST_PASSPHRASE = 'test-passphrase';
    t.teardown(() => delete process.env.C2E_TEST_PASSPHRASE);
    await invoice(env, 'encrypted.pdf');
    const down = url.replace(/:\d+$/, ':1');
    writeFileSync(erp, readFileSync(erp, 'utf8').replaceAll(url, down));
    const unreachable = await env.job({ task: 'link' });
    t.equal(unreachable.exitCode, 4, 'SAP unavailable: the documents wait, none charged');
    t.match(unreachable.outages, [
      { kind: 'unavailable', reason: /the SOAP-RFC service of S4H failed \(ECONNREFUSED\)/ },
    ]);
    writeFileSync(erp, readFileSync(erp, 'utf8').replaceAll(down, url));
    const run = await env.job({ task: 'link' });
    t.same(run.tasks.link.counts, { DONE: 1 }, JSON.stringify(run.outages));
    t.equal(sap.tables.links.length, 1);
    t.notMatch(JSON.stringify(run), /test-passphrase/);
  },
);

t.test('OAuth client credentials with the certificate instead of a secret (RFC 8705 tls_client_auth)', async (t) => {
  const env = await sandboxEnv(t);
  const { sap, url } = await httpsSap(t, 2);
  const withClient = (who: Who): void => useCertificateClient(env, sap, url, who);
  withClient('connector');
  const uid = await invoice(env, 'oauth.pdf');
  const run = await env.job({ task: 'link' });
  t.same(run.tasks.link.counts, { DONE: 1 }, JSON.stringify(run.outages));
  t.equal(sap.oauth.issued, 1, 'a token for the certificate, no secret');
  t.equal(sap.tables.attachments.length, 1);

  env.fill(uid, { 'erpTaskStatus:status': 'READY' });
  withClient('stranger');
  const refused = await env.job({ task: 'link' });
  t.equal(refused.exitCode, 2);
  t.match(refused.outages, [
    {
      kind: 'refused',
      reason: /the OAuth token endpoint of S4H .*: SAP refused the TLS client certificate [^ ]*stranger\.pem/,
    },
  ]);
  withClient('nobody');
  const unknown = await env.job({ task: 'link' });
  t.match(unknown.outages, [{ reason: /refused the client credentials: HTTP 401 \(invalid_client\)/ }]);
});

t.test('validate: a certificate sign-in needs the certificate and its key, readable', async (t) => {
  const env = await sandboxEnv(t);
  const erp = join(env.location.configDir, 'erpHttp.yaml');
  const system = {
    name: 'S4H',
    client: '100',
    rfc: { url: 'https://sap.example.com/sap/bc/soap/rfc', auth: { type: 'certificate' } },
  };
  writeFileSync(erp, stringify({ systems: [{ ...system, tls: { certFile: file('clients/connector.pem') } }] }));
  const half = await cli(['validate', '--config', env.location.configDir]);
  t.equal(half.code, 2);
  t.match(half.stderr, /erpHttp\.yaml: systems\.0\.tls: give certFile and keyFile together/);
  writeFileSync(erp, stringify({ systems: [system] }));
  const none = await cli(['validate', '--config', env.location.configDir]);
  t.match(
    none.stderr,
    /systems\.0\.rfc\.auth: signs in with a client certificate: give tls\.certFile and tls\.keyFile/,
  );
  const rest = {
    url: 'https://sap.example.com',
    auth: { type: 'oauth2', tokenUrl: 'https://sap.example.com/t', clientId: 'C' },
  };
  writeFileSync(erp, stringify({ systems: [{ name: 'S4H', client: '100', rest }] }));
  const secretless = await cli(['validate', '--config', env.location.configDir]);
  t.match(
    secretless.stderr,
    /systems\.0\.rest\.auth\.clientSecret: the client's secret, or \(without one\) a client certificate/,
  );
  writeFileSync(
    erp,
    stringify({
      systems: [{ ...system, tls: { certFile: '/nowhere/c.pem', keyFile: file('clients/connector.key') } }],
    }),
  );
  const unreadable = await cli(['validate', '--config', env.location.configDir]);
  t.match(unreadable.stderr, /systems\.0\.tls\.certFile: cannot read \/nowhere\/c\.pem/);
});

t.test('doctor signs in with the certificate, and fails one SAP refuses with its advice', async (t) => {
  const env = await sandboxEnv(t);
  const { url } = await httpsSap(t, 2);
  const doctor = async () => {
    const result = await cli(['doctor', '--json', '--config', env.location.configDir]);
    return (JSON.parse(result.stdout) as { checks: Array<{ outcome: string; found: string; advice?: string }> }).checks;
  };
  useSap(env, url, 'connector');
  const logon = (await doctor()).find((c) => /RFC_PING/.test(c.found));
  t.match(logon, {
    outcome: 'pass',
    found: /logon accepted \(client certificate [^ ]*connector\.pem, client 100, RFC_PING\)/,
  });
  useSap(env, url, 'stranger');
  const refused = (await doctor()).find((c) => /the SOAP-RFC service of S4H/.test(c.found));
  t.match(refused, {
    outcome: 'fail',
    found: /SAP refused the TLS client certificate/,
    advice: /SAP must trust the certificate's issuer \(STRUST, the SSL server PSE\) and map its subject/,
  });
  useSap(env, url, 'nobody', 'Rest');
  const rest = (await doctor()).find((c) => /API_CV_ATTACHMENT_SRV/.test(c.found));
  t.match(rest, {
    outcome: 'fail',
    found: /signs no user in with it \(HTTP 401\)/,
    advice: /CERTRULE, or table VUSREXTID/,
  });
});

t.test(
  'what a failed connection says of the certificate: an alert at once, a closed connection only twice',
  async (t) => {
    const failing = (code: string) => () => Promise.reject(Object.assign(new Error(code), { code }));
    /** What a request sent with the certificate comes to when it fails with `first`, and then does `then`. */
    const told = (first: string, then: () => Promise<unknown>) => {
      let sends = 0;
      const send = () => (sends++ === 0 ? failing(first)() : then());
      return sentWithCertificate(send, 'S4H', 'S4H', '/c.pem').then(
        (answer) => ({ answer, sends }),
        (error: Error) => ({ error, sends }),
      );
    };
    t.match(await told('ERR_SSL_TLSV1_ALERT_UNKNOWN_CA', failing('never asked')), {
      error: { name: 'CertificateRefusedError', message: /\(ERR_SSL_TLSV1_ALERT_UNKNOWN_CA\)/ },
      sends: 1,
    });
    t.match(
      await told('ECONNRESET', failing('UND_ERR_SOCKET')),
      { error: { name: 'CertificateRefusedError', message: /\(UND_ERR_SOCKET\)/ } },
      'closed twice',
    );
    t.match(await told('UND_ERR_SOCKET', failing('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED')), {
      error: { name: 'CertificateRefusedError', message: /CERTIFICATE_REQUIRED/ },
    });
    t.same(
      await told('ECONNRESET', () => Promise.resolve(200)),
      { answer: 200, sends: 2 },
      'closed once: a reset, not a refusal',
    );
    t.match(
      await told('ECONNRESET', failing('ECONNREFUSED')),
      { error: { name: 'Error', code: 'ECONNRESET' } },
      'then not reachable: not a refusal',
    );
    t.match(await told('ECONNREFUSED', failing('never asked')), {
      error: { name: 'Error', code: 'ECONNREFUSED' },
      sends: 1,
    });

    // The HEAD writes nothing: whatever became of it, the system is unavailable, never a document's uncertain call.
    const system = { name: 'S4H', tls: { certFile: '/c.pem' } } as ErpSystemConfig;
    const checked = (head: () => Promise<number>) => new CertificateCheck(head, 'S4H', system).passed();
    await t.rejects(checked(failing('UND_ERR_HEADERS_TIMEOUT')), { name: 'SystemUnavailableError' });
    await t.rejects(checked(failing('ECONNREFUSED')), { name: 'SystemUnavailableError' });
    await t.rejects(checked(failing('DEPTH_ZERO_SELF_SIGNED_CERT')), {
      name: 'SystemRefusalError',
      message: /SAP's TLS certificate is not trusted/,
    });
    let tries = 0;
    const resetOnce = async (): Promise<number> => {
      if (tries++ === 0) throw Object.assign(new Error('reset'), { code: 'ECONNRESET' });
      return 405;
    };
    await checked(resetOnce);
    t.equal(tries, 2, 'asked again on a fresh connection, and taken');
  },
);

t.test(
  'a token endpoint a certificate client reaches through one reset, or whose own certificate is not trusted',
  async (t) => {
    const env = await sandboxEnv(t);
    const { sap, url } = await httpsSap(t, 2);
    useCertificateClient(env, sap, url, 'connector');
    const erp = join(env.location.configDir, 'erpHttp.yaml');
    sap.faults.add({ path: 'oauth2/token', drop: true, times: 1 });
    await invoice(env, 'reset.pdf');
    const run = await env.job({ task: 'link' });
    t.same(run.tasks.link.counts, { DONE: 1 }, JSON.stringify(run.outages));
    t.equal(sap.oauth.issued, 1);

    writeFileSync(erp, readFileSync(erp, 'utf8').replace(/ {6}caFile: .*\n/, ''));
    await invoice(env, 'untrusted.pdf');
    const untrusted = await env.job({ task: 'link' });
    t.equal(untrusted.exitCode, 2);
    t.match(untrusted.outages, [{ reason: /SAP's TLS certificate is not trusted .*check tls\.caFile of system S4H/ }]);
  },
);
