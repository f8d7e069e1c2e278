import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import got from 'got';
import t from 'tap';
import type { ErpSystemConfig, OAuth2Config } from '../src/config/erp-schema.js';
import { ClientCredentials } from '../src/oauth/client-credentials.js';
import { sapTokenEndpoint } from '../src/erp/oauth-endpoint.js';
import { RestClient } from '../src/erp/rest-client.js';
import { quietLog, sandboxEnv, type Env } from './helpers/env.js';
import { cli } from './helpers/run-cli.js';

/**
 * OAuth 2.0 client credentials for a Rest system, as S/4HANA Cloud's communication arrangements
 * ask: against the ERP sandbox's token endpoint, which issues tokens with a lifetime and refuses
 * them once expired by its own clock.
 */

const TOKEN_PATH = '/sap/bc/sec/oauth2/token';

/** The sandbox's S4H with OAuth client credentials for its rest connection, and the link task over Rest. */
function useOAuth(env: Env, secret = 'sandbox-secret'): OAuth2Config {
  const url = env.config.erp.systems[0].rest?.url as string;
  const auth = {
    type: 'oauth2' as const,
    tokenUrl: `${url}${TOKEN_PATH}`,
    clientId: 'CONNECTOR_CLIENT',
    clientSecret: secret,
    scope: 'API_CV_ATTACHMENT_SRV_0001',
  };
  const erp = join(env.location.configDir, 'erpHttp.yaml');
  const oauth = `      auth:\n        type: oauth2\n        tokenUrl: ${auth.tokenUrl}\n        clientId: ${auth.clientId}\n        clientSecret: ${secret}\n        scope: ${auth.scope}\n`;
  writeFileSync(
    erp,
    readFileSync(erp, 'utf8').replace(/( {4}rest:\n {6}url: .*\n) {6}auth:\n( {8}.*\n){2}/, `$1${oauth}`),
  );
  const task = join(env.location.jobsDir, 'link.yaml');
  writeFileSync(task, readFileSync(task, 'utf8').replace(/^function: RFC.*$/m, 'function: Rest'));
  return auth;
}

async function invoices(env: Env, count: number): Promise<string[]> {
  const uids = await Promise.all(
    Array.from({ length: count }, (_, i) => env.upload('ERP/Invoices', `invoice-${i}.pdf`)),
  );
  await env.job({ task: 'link' });
  uids.forEach((uid, i) => env.fill(uid, { 'erpCreateALDocument:erpObjectId': `10001900000022${i}2026` }));
  return uids;
}

t.test('a run links over Rest with a token of the client credentials, fetched once for every call', async (t) => {
  const env = await sandboxEnv(t);
  useOAuth(env);
  const uids = await invoices(env, 3);
  const run = await env.job({ task: 'link' });
  t.equal(run.tasks.link.counts.DONE, 3, JSON.stringify(run.problems));
  t.equal(env.erp.tables.attachments.length, 3);
  t.equal(env.erp.oauth.issued, 1, 'one token for the run');
  t.notMatch(JSON.stringify(run), /sandbox-secret/, 'the secret in no report');
  t.equal(env.props(uids[0])['erpTaskStatus:status'], 'DONE');
});

t.test('wrong client credentials: the system refused, no document charged, the token endpoint named', async (t) => {
  const env = await sandboxEnv(t);
  useOAuth(env, 'wrong-secret');
  const [uid] = await invoices(env, 1);
  const run = await env.job({ task: 'link' });
  t.not(run.exitCode, 0);
  t.match(
    JSON.stringify(run),
    /OAuth token endpoint of S4H .*refused the client credentials: HTTP 401 \(invalid_client\); check rest.auth/,
  );
  t.equal(env.props(uid)['erpTaskStatus:status'], 'READY', 'left for the next run, no attempt charged');
  t.equal(env.props(uid)['erpTaskStatus:attempts'], 0);
  t.equal(env.erp.oauth.issued, 0);
});

t.test(
  'a token SAP refuses as expired is replaced, and one about to expire is replaced before it is sent',
  async (t) => {
    const env = await sandboxEnv(t);
    const auth = useOAuth(env);
    const system = env.config.erp.systems[0] as ErpSystemConfig & { rest: NonNullable<ErpSystemConfig['rest']> };
    const client = new RestClient({ ...system, rest: { ...system.rest, auth } }, quietLog);
    const read = () =>
      client.send({
        method: 'GET',
        service: '/sap/opu/odata/sap/API_CV_ATTACHMENT_SRV',
        path: '/',
        headers: {},
        csrf: false,
      });
    await read();
    await read();
    t.equal(env.erp.oauth.issued, 1, 'kept while it lives');
    const start = Date.now();
    env.erp.oauth.now = () => start + 2 * 3600 * 1000;
    t.same(
      await read(),
      { EntitySets: ['AttachmentContentSet'] },
      'SAP refused it (401): a fresh one, and the call goes through',
    );
    t.equal(env.erp.oauth.issued, 2);
    env.erp.oauth.now = () => start + 4 * 3600 * 1000;
    t.ok(
      await client.csrfToken('/sap/opu/odata/sap/API_CV_ATTACHMENT_SRV'),
      'the CSRF handshake too: SAP refused the token, a fresh one',
    );
    t.equal(env.erp.oauth.issued, 3);
    // Tokens that are dead on arrival: the one held is refused, and so is the fresh one.
    env.erp.customizing.oauthClients.CONNECTOR_CLIENT.lifetimeS = 0;
    env.erp.oauth.now = () => start + 10 * 3600 * 1000;
    await t.rejects(read(), {
      name: 'SystemRefusalError',
      message: /SAP refused the credentials \(HTTP 401, a fresh OAuth token too\); check rest.auth/,
    });
    env.erp.customizing.oauthClients.CONNECTOR_CLIENT.lifetimeS = 3600;

    // The client's own clock: a token is replaced a minute before it ends (RFC 6749 §5.1 expires_in).
    let now = start;
    const credentials = new ClientCredentials(
      auth,
      sapTokenEndpoint(auth.tokenUrl, got.extend({ throwHttpErrors: false, retry: { limit: 0 } }), 'S4H'),
      () => now,
    );
    const first = await credentials.token();
    now = start + 3600 * 1000 - 61_000;
    t.equal(await credentials.token(), first, 'still more than a minute to live');
    now = start + 3600 * 1000 - 59_000;
    t.not(await credentials.token(), first, 'less than a minute: replaced before it is sent');
    const held = await credentials.token();
    credentials.refused('an older token');
    t.equal(await credentials.token(), held, 'a refusal of an older token keeps the one held');
    const [a, b] = await Promise.all([(credentials.refused(held), credentials.token()), credentials.token()]);
    t.equal(a, b, 'callers waiting at once share one fetch');
  },
);

t.test('a token endpoint that fails, answers no lifetime or no JSON, and what it refuses', async (t) => {
  const env = await sandboxEnv(t);
  const auth = useOAuth(env);
  const http = got.extend({ throwHttpErrors: false, retry: { limit: 0 } });
  // No scope: the client's own, as the authorisation server sets it (RFC 6749 §3.3).
  const credentials = new ClientCredentials(
    { ...auth, scope: undefined },
    sapTokenEndpoint(auth.tokenUrl, http, 'S4H'),
  );
  env.erp.faults.add({ path: 'oauth2/token', drop: true, times: 1 });
  await t.rejects(credentials.token(), {
    name: 'SystemUnavailableError',
    message: /token endpoint of S4H .* did not answer/,
  });
  env.erp.faults.add({ path: 'oauth2/token', status: 502, body: '<html>Bad gateway</html>', times: 1 });
  await t.rejects(credentials.token(), {
    name: 'SystemUnavailableError',
    message: /token endpoint of S4H .* answered HTTP 502: not now/,
  });
  env.erp.faults.add({ path: 'oauth2/token', status: 200, body: 'x'.repeat(5 * 1024 * 1024), times: 1 });
  await t.rejects(credentials.token(), {
    name: 'SystemRefusalError',
    message: /token endpoint of S4H .*: its answer is larger than 4 MiB, not a token/,
  });
  env.erp.faults.add({ path: 'oauth2/token', status: 400, body: '<html>Bad request</html>', times: 1 });
  await t.rejects(credentials.token(), { message: /refused the client credentials: HTTP 400; check rest.auth/ });
  env.erp.faults.add({
    path: 'oauth2/token',
    status: 200,
    body: '{"access_token":"odd","expires_in":"soon"}',
    times: 1,
  });
  t.equal(await credentials.token(), 'odd', 'a lifetime that is not a number: an hour');
  t.equal(await credentials.token(), 'odd');
  credentials.refused('odd');
  env.erp.faults.add({ path: 'oauth2/token', status: 200, body: '{"access_token":"no-lifetime"}', times: 1 });
  t.equal(await credentials.token(), 'no-lifetime', 'an hour when it says nothing (RFC 6749 §5.1 leaves it optional)');
  t.equal(await credentials.token(), 'no-lifetime');

  const endpoint = auth.tokenUrl;
  const basic = `Basic ${Buffer.from('CONNECTOR_CLIENT:sandbox-secret').toString('base64')}`;
  t.equal((await fetch(endpoint)).status, 405, 'a GET');
  t.equal((await fetch(endpoint, { method: 'POST', body: 'grant_type=client_credentials' })).status, 401, 'no client');
  const password = await fetch(endpoint, {
    method: 'POST',
    headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=password',
  });
  t.same([password.status, await password.json()], [400, { error: 'unsupported_grant_type' }]);
  const unknown = await fetch(
    `${env.config.erp.systems[0].rest?.url as string}/sap/opu/odata/sap/API_CV_ATTACHMENT_SRV/`,
    {
      headers: { authorization: 'Bearer not-issued' },
    },
  );
  t.equal(unknown.status, 401, 'a token it never issued');
});

t.test('doctor reads the service document with a token, and names the token endpoint that refuses', async (t) => {
  const env = await sandboxEnv(t);
  useOAuth(env);
  const doctor = async () => {
    const result = await cli(['doctor', '--json', '--config', env.location.configDir]);
    return (JSON.parse(result.stdout) as { checks: Array<{ outcome: string; found: string; advice?: string }> }).checks;
  };
  const answers = (await doctor()).find((c) => /API_CV_ATTACHMENT_SRV answers/.test(c.found));
  t.match(answers, { outcome: 'pass', found: /as OAuth client CONNECTOR_CLIENT$/ });
  const erp = join(env.location.configDir, 'erpHttp.yaml');
  writeFileSync(erp, readFileSync(erp, 'utf8').replace('clientSecret: sandbox-secret', 'clientSecret: wrong-secret'));
  const refused = (await doctor()).find((c) => /token endpoint/.test(c.found));
  t.match(refused, {
    outcome: 'fail',
    found: /refused the client credentials: HTTP 401 \(invalid_client\)/,
    advice: /rest.auth/,
  });
});

t.test(
  'a token endpoint that fails as the upload is about to go leaves no download of the file open in the repository',
  async (t) => {
    const env = await sandboxEnv(t);
    useOAuth(env);
    const [uid] = await invoices(env, 1);
    const downloads: string[] = [];
    env.sandbox.faults.observe = (req) =>
      void (req.method === 'GET' && req.url?.includes(`/id/${uid}/@blob/`) && downloads.push(req.url));
    // SAP refuses the upload's token (revoked), and the token endpoint fails from then on.
    env.erp.faults.add({ method: 'POST', path: 'AttachmentContentSet', status: 401, times: 1 });
    env.erp.faults.add({ path: 'oauth2/token', status: 503, skip: 1, times: 100 });
    const run = await env.job({ task: 'link' });
    t.same(run.tasks.link.counts, { RELEASED: 1 }, 'the system could not take it: no attempt charged');
    t.match(env.props(uid), { 'erpTaskStatus:status': 'READY', 'erpTaskStatus:attempts': 0 });
    t.equal(downloads.length, 1, 'the file was read for the upload SAP refused, not again before a token was had');
  },
);
