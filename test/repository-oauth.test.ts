import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { RepositoryClient } from '../src/repository/client.js';
import { servedEnv } from './helpers/content-server.js';
import { quietLog, sandboxEnv, type Env } from './helpers/env.js';
import { cli } from './helpers/run-cli.js';

// Runs over real HTTP: the sandboxes, the job and doctor.
t.setTimeout(120_000);

/**
 * Signing in to Nuxeo with OAuth 2.0 client credentials (LTS 2025.3 and 2023.31 on), the job's and
 * the content server's connection alike, against the repository sandbox's token endpoint.
 */

const CLIENT = 'connect2erp-job';
const SECRET = 'job-client-secret';
const users = { [CLIENT]: { password: 'unused-password', groups: ['administrators'] } };

const oauthAuth = (secret = SECRET): string =>
  `auth:\n  type: oauth2\n  clientId: ${CLIENT}\n  clientSecret: ${secret}\n`;

/** storage.yaml signing in as the client, which the administrator registered in oauth2Clients. */
function useOAuth(env: Env, secret = SECRET): void {
  env.sandbox.oauth2.clients.set(CLIENT, { secret: SECRET, enabled: true });
  const file = join(env.location.configDir, 'storage.yaml');
  writeFileSync(file, readFileSync(file, 'utf8').replace(/^auth:\n( {2}.*\n)+/m, oauthAuth(secret)));
}

t.test('a run signs in to the repository with a token of the client credentials, fetched once', async (t) => {
  const env = await sandboxEnv(t, { users });
  useOAuth(env);
  const uid = await env.upload('ERP/Invoices', 'invoice.pdf');
  await env.job({ task: 'link' });
  env.fill(uid, { 'erpCreateALDocument:erpObjectId': '510560010072026' });
  const run = await env.job({ task: 'link' });
  t.same(run.tasks.link.counts, { DONE: 1 }, JSON.stringify(run.problems));
  t.equal(env.sandbox.oauth2.issued, 2, 'one token for each run');
  t.notMatch(JSON.stringify(run), SECRET, 'the secret in no report');
  t.equal(env.props(uid)['dc:lastContributor'], CLIENT, 'the outcome written as the user of the client id');
});

t.test('wrong client credentials stop the run, exit 2, naming the token endpoint and what to check', async (t) => {
  const env = await sandboxEnv(t, { users });
  useOAuth(env, 'wrong-secret');
  const run = await env.job({ task: 'link' });
  t.equal(run.exitCode, 2);
  t.match(
    JSON.stringify(run.problems),
    /the repository's OAuth token endpoint \(http:\/\/127\.0\.0\.1:\d+\/nuxeo\/oauth2\/token\) refused the client credentials: HTTP 400 \(invalid_client\); check the OAuth client of auth in storage\.yaml/,
  );
  t.notMatch(JSON.stringify(run), 'wrong-secret');
});

t.test('a token the repository no longer takes is replaced, and the request sent once more', async (t) => {
  const env = await sandboxEnv(t, { users });
  useOAuth(env);
  const client = new RepositoryClient(
    { ...env.config.storage, auth: { type: 'oauth2', clientId: CLIENT, clientSecret: SECRET } },
    quietLog,
  );
  t.equal((await client.me()).id, CLIENT, 'the token acts as the user of the client id');
  const start = Date.now();
  // The server's clock passes the token's end while the client still counts it valid.
  env.sandbox.oauth2.now = () => start + 2 * 3600 * 1000;
  t.equal((await client.me()).id, CLIENT);
  t.equal(env.sandbox.oauth2.issued, 2, 'refused once, replaced once');
  // A token dead on arrival: the second 401 is the answer.
  env.sandbox.oauth2.lifetimeS = 0;
  env.sandbox.oauth2.now = () => start + 4 * 3600 * 1000;
  await t.rejects(client.me(), { name: 'AuthenticationError', status: 401 });
});

t.test('a token endpoint that does not answer, or answers more than a token can be', async (t) => {
  const env = await sandboxEnv(t, { users });
  useOAuth(env);
  const client = new RepositoryClient(
    { ...env.config.storage, auth: { type: 'oauth2', clientId: CLIENT, clientSecret: SECRET }, retries: 0 },
    quietLog,
  );
  env.sandbox.faults.add({ path: 'oauth2/token', drop: true, times: 1 });
  await t.rejects(client.me(), {
    name: 'TransientError',
    message: /the repository's OAuth token endpoint .* did not answer/,
  });
  env.sandbox.faults.add({ path: 'oauth2/token', status: 200, body: 'x'.repeat(5 * 1024 * 1024), times: 1 });
  await t.rejects(client.me(), {
    name: 'AuthenticationError',
    message: /the repository's OAuth token endpoint .*: its answer is larger than 4 MiB, not a token/,
  });
  env.sandbox.faults.add({ path: 'oauth2/token', status: 503, times: 1 });
  await t.rejects(client.me(), { name: 'TransientError', message: /answered HTTP 503: not now/ });
  t.equal((await client.me()).id, CLIENT, 'and a token once it answers');

  const tls = join(import.meta.dirname, 'fixtures', 'tls');
  const untrusted = createServer({
    cert: readFileSync(join(tls, 'server.pem')),
    key: readFileSync(join(tls, 'server.key')),
  });
  await new Promise<void>((resolve) => untrusted.listen(0, '127.0.0.1', resolve));
  t.teardown(() => untrusted.close());
  const tokenUrl = `https://127.0.0.1:${(untrusted.address() as AddressInfo).port}/oauth2/token`;
  const elsewhere = new RepositoryClient(
    { ...env.config.storage, auth: { type: 'oauth2', clientId: CLIENT, clientSecret: SECRET, tokenUrl }, retries: 0 },
    quietLog,
  );
  await t.rejects(elsewhere.me(), {
    name: 'UntrustedServerError',
    message: /OAuth token endpoint .* its TLS certificate is not trusted .*check tls\.caFile in storage\.yaml/,
  });
});

t.test('the content server and doctor sign in with client credentials too', async (t) => {
  const env = await servedEnv(
    t,
    { connection: { repositoryAuth: { type: 'oauth2', clientId: CLIENT, clientSecret: SECRET }, signatures: 'off' } },
    { users },
  );
  useOAuth(env);
  const result = await cli(['doctor', '--json', '--config', env.location.configDir]);
  const checks = (JSON.parse(result.stdout) as { checks: Array<{ outcome: string; found: string }> }).checks;
  t.ok(checks.some((c) => c.outcome === 'pass' && c.found === `reachable, signed in as ${CLIENT}`));
  t.ok(
    checks.some(
      (c) =>
        c.outcome === 'pass' && c.found === `connection S4H signs in to the repository as ${CLIENT} (repositoryAuth)`,
    ),
  );
  const uid = await env.upload('ERP/Invoices', 'opened.pdf');
  await env.job({ task: 'link' });
  const before = env.sandbox.oauth2.issued;
  const docId = String(env.props(uid)['erpHttpContent:docId']);
  const got = await env.call('GET', `get&pVersion=0047&contRep=Z1&docId=${docId}`);
  t.equal(got.status, 200, got.error ?? 'served');
  t.equal(got.body.toString(), '%PDF-1.4 sample opened.pdf', "SAP opens the document, read with serve's token");
  t.equal(env.sandbox.oauth2.issued, before + 1);
});

t.test("the repository sandbox's token endpoint answers as Nuxeo's documentation and code say", async (t) => {
  const env = await sandboxEnv(t, { users });
  env.sandbox.oauth2.clients.set(CLIENT, { secret: SECRET, enabled: true });
  env.sandbox.oauth2.clients.set('no-such-user', { secret: SECRET, enabled: true });
  env.sandbox.oauth2.clients.set('disabled', { secret: SECRET, enabled: false });
  const endpoint = `${env.baseUrl}/oauth2/token`;
  const post = async (query: string, body = '', headers: Record<string, string> = {}) => {
    const response = await fetch(`${endpoint}?${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body,
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  t.equal((await fetch(endpoint)).status, 405, 'a GET');
  const documented = await post(`grant_type=client_credentials&client_id=${CLIENT}&client_secret=${SECRET}`);
  t.match(documented, { status: 200, json: { token_type: 'bearer', expires_in: 3599, access_token: /\w+/ } });
  const basic = `Basic ${Buffer.from(`${CLIENT}:${SECRET}`).toString('base64')}`;
  t.equal((await post('', 'grant_type=client_credentials', { authorization: basic })).status, 200, 'Basic');
  t.match(await post('', 'grant_type=password'), { status: 400, json: { error: 'unsupported_grant_type' } });
  t.match(await post('', 'grant_type=client_credentials'), { status: 400, json: { error: 'invalid_request' } });
  for (const id of ['no-such-user', 'disabled', 'unknown'])
    t.match(await post('', `grant_type=client_credentials&client_id=${id}&client_secret=${SECRET}`), {
      status: 400,
      json: { error: 'invalid_client' },
    });
  const bearer = await fetch(`${env.baseUrl}/api/v1/me`, { headers: { authorization: 'Bearer not-issued' } });
  t.equal(bearer.status, 401);
});
