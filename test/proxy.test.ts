import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli } from './helpers/run-cli.js';
import t, { type Test } from 'tap';
import { proxyFor } from '../src/proxy.js';
import { sandboxEnv, type Env } from './helpers/env.js';

/**
 * Corporate networks reach SAP and the repository through an outbound proxy: each connection's own
 * `proxy`, else HTTPS_PROXY / HTTP_PROXY and NO_PROXY, tried over real HTTP with a CONNECT proxy the
 * test starts, which counts the tunnels it opened and may ask for credentials.
 */

t.test('the environment names the proxy, NO_PROXY the hosts reached directly', async (t) => {
  const env = {
    HTTPS_PROXY: 'http://proxy:3128',
    http_proxy: 'http://plain:8080',
    NO_PROXY: '.internal, sap.example.com:8443, 10.1.2.3',
  };
  t.same(proxyFor('https://nuxeo.example.com/nuxeo', undefined, env), { url: 'http://proxy:3128' });
  t.same(
    proxyFor('http://nuxeo.example.com/nuxeo', undefined, env),
    { url: 'http://plain:8080' },
    'http_proxy for http',
  );
  t.equal(proxyFor('https://erp.internal/sap', undefined, env), undefined, 'a domain and its subdomains');
  t.equal(proxyFor('https://internal/sap', undefined, env), undefined);
  t.equal(proxyFor('https://sap.example.com:8443/sap', undefined, env), undefined, 'host:port');
  t.same(proxyFor('https://sap.example.com/sap', undefined, env), { url: 'http://proxy:3128' }, 'another port');
  t.equal(proxyFor('https://10.1.2.3/sap', undefined, env), undefined);
  t.equal(proxyFor('https://x.example.com', undefined, { ...env, no_proxy: '*', NO_PROXY: undefined }), undefined);
  t.equal(proxyFor('https://x.example.com', undefined, {}), undefined, 'none set: direct');
  t.equal(proxyFor('https://x.example.com', undefined, { HTTPS_PROXY: '' }), undefined, 'set empty: direct');
  t.same(
    proxyFor('https://x.example.com', undefined, { https_proxy: 'http://p:1' }),
    { url: 'http://p:1' },
    'no NO_PROXY',
  );
  t.equal(proxyFor('https://x.example.com', 'none', env), undefined, "a connection's none wins");
  const own = { url: 'http://own:3128', auth: { username: 'u', password: 'p' } };
  t.same(proxyFor('https://erp.internal', own, env), own, "a connection's own proxy wins, NO_PROXY or not");
});

/** A CONNECT proxy: the targets of its tunnels, in order; with `auth`, a tunnel without it is refused 407. */
async function startProxy(t: Test, auth?: string): Promise<{ url: string; tunnels: string[] }> {
  const tunnels: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((_req, res) => res.writeHead(405).end());
  server.on('connect', (req: IncomingMessage, client: Socket) => {
    sockets.add(client);
    if (auth !== undefined && req.headers['proxy-authorization'] !== `Basic ${Buffer.from(auth).toString('base64')}`) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\n\r\n');
      return;
    }
    tunnels.push(String(req.url));
    const [host, port] = String(req.url).split(':');
    const upstream = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    const close = (): void => {
      upstream.destroy();
      client.destroy();
    };
    upstream.on('error', close);
    client.on('error', close);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, tunnels };
}

const portOf = (url: string): string => new URL(url).port;

/** A workflow start (SOAP-RFC) and an invoice linked over Rest (the attachment service): each client goes out. */
async function sendBoth(
  env: Env,
): Promise<{ workflow: string; invoice: string; run: Awaited<ReturnType<Env['job']>> }> {
  const task = join(env.location.jobsDir, 'link.yaml');
  writeFileSync(task, readFileSync(task, 'utf8').replace(/^function: RFC.*$/m, 'function: Rest'));
  const workflow = await env.upload('ERP/Workflow', 'order.pdf');
  const invoice = await env.upload('ERP/Invoices', 'invoice.pdf');
  await env.job();
  env.fill(invoice, { 'erpCreateALDocument:erpObjectId': '100019000000222023' });
  return { workflow, invoice, run: await env.job() };
}

function setProxy(env: Env, file: string, where: RegExp, proxy: string): void {
  const path = join(env.location.configDir, file);
  writeFileSync(path, readFileSync(path, 'utf8').replace(where, `$&${proxy}`));
}

t.test("each connection's own proxy: the repository's and SAP's calls go through it", async (t) => {
  const proxy = await startProxy(t, 'corp:secret');
  const env = await sandboxEnv(t);
  setProxy(env, 'storage.yaml', /^/, `proxy:\n  url: ${proxy.url}\n  auth: { username: corp, password: secret }\n`);
  const auth = `\n      auth: { username: corp, password: secret }`;
  setProxy(env, 'erpHttp.yaml', /^ *maxConcurrentCalls: 8\n/m, `    proxy:\n      url: ${proxy.url}${auth}\n`);
  const { workflow, invoice, run } = await sendBoth(env);
  t.equal(run.exitCode, 0, JSON.stringify(run.problems));
  t.equal(env.props(workflow)['erpTaskStatus:status'], 'DONE', 'sent over SOAP-RFC, all through the proxy');
  t.equal(env.props(invoice)['erpTaskStatus:status'], 'DONE', 'and over Rest');
  const repository = portOf(env.baseUrl);
  const sap = portOf(env.config.erp.systems[0].rfc?.url as string);
  t.ok(
    proxy.tunnels.some((to) => to.endsWith(`:${repository}`)),
    'to the repository',
  );
  t.ok(
    proxy.tunnels.some((to) => to.endsWith(`:${sap}`)),
    'to SAP',
  );
  t.notMatch(JSON.stringify(run), /secret|Y29ycDpzZWNyZXQ/, 'the credentials in no report');
  const doctor = await cli(['doctor', '--json', '--config', env.location.configDir]);
  const found = (JSON.parse(doctor.stdout) as { checks: Array<{ found: string }> }).checks.map((c) => c.found);
  const through = `, through proxy ${proxy.url}`;
  t.ok(found.includes(`reachable, signed in as Administrator${through}`), 'doctor names the proxy');
  t.ok(
    found.some((f) => f.endsWith(`RFC_PING${through})`)),
    "and SAP's",
  );
  t.notMatch(doctor.stdout, /secret/);
});

t.test(
  'HTTP_PROXY for every connection, NO_PROXY going direct; a proxy that refuses stops the run clearly',
  async (t) => {
    const proxy = await startProxy(t);
    const env = await sandboxEnv(t);
    const saved = { HTTP_PROXY: process.env.HTTP_PROXY, NO_PROXY: process.env.NO_PROXY };
    t.teardown(() => Object.assign(process.env, saved));
    const repository = portOf(env.baseUrl);
    const sap = portOf(env.config.erp.systems[0].rfc?.url as string);
    process.env.HTTP_PROXY = proxy.url;
    process.env.NO_PROXY = `127.0.0.1:${repository}`;
    const { workflow, invoice } = await sendBoth(env);
    t.equal(env.props(workflow)['erpTaskStatus:status'], 'DONE');
    t.equal(env.props(invoice)['erpTaskStatus:status'], 'DONE');
    t.ok(
      proxy.tunnels.length > 0 && proxy.tunnels.every((to) => to.endsWith(`:${sap}`)),
      'SAP through it, the repository not',
    );

    const closed = await startProxy(t, 'someone:else');
    process.env.HTTP_PROXY = closed.url;
    process.env.NO_PROXY = '';
    const refused = await env.job();
    t.not(refused.exitCode, 0);
    t.match(JSON.stringify(refused), /407/, 'what the proxy answered is told');
    t.equal(closed.tunnels.length, 0);
  },
);
