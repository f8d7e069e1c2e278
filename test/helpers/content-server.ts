import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import { request as httpRequest } from 'node:http';
import { parse, stringify } from 'yaml';
import { loadConfig } from '../../src/config/load.js';
import { CertificateStore } from '../../src/content-server/signatures/certificates.js';
import { ContentServer } from '../../src/content-server/server.js';
import { ArchiveLinkCaller } from '../../sandbox/erp/archivelink-client.js';
import type { Logger } from '../../src/log.js';
import { quietLog, sandboxEnv, type Env } from './env.js';

export const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'archivelink');
export const fixture = (name: string): Buffer => readFileSync(join(FIXTURES, name));
export const SIGNED = JSON.parse(fixture('signed-urls.json').toString()) as {
  docIds: Record<string, string>;
  urls: Record<string, string>;
};
/** The authId of the OpenSSL-made fixtures, as SAP sends it in putCert (URL-encoded). */
export const FIXTURE_AUTH_ID = 'CN%3DS4H,OU%3Dconnect2erp,O%3DSAP%20Trust%20Community,C%3DDE';

export interface ServedEnv extends Env {
  /** `http://127.0.0.1:<port>/archivelink/S4H` */
  script: string;
  origin: string;
  certificates: CertificateStore;
  caller: ArchiveLinkCaller;
  /** A request to the content server, with the URL's query as given. */
  call: (
    method: 'GET' | 'PUT' | 'POST',
    query: string,
    body?: Buffer | string,
    headers?: Record<string, string>,
  ) => Promise<{
    status: number;
    headers: Record<string, string | string[] | undefined>;
    body: Buffer;
    error?: string;
  }>;
  /** putCert a fixture certificate and approve it, as SAP and then an administrator do. */
  trust: (file: string, authId?: string) => Promise<void>;
}

/**
 * The sandboxes, set up as the demo does, and `connect2erp serve` over real HTTP in this process,
 * with `settings` merged into the connection of the shipped contentServer.yaml.
 */
export async function servedEnv(
  t: Test,
  settings: { connection?: Record<string, unknown>; server?: Record<string, unknown>; log?: Logger } = {},
  options: Parameters<typeof sandboxEnv>[1] = {},
): Promise<ServedEnv> {
  const env = await sandboxEnv(t, options);
  const file = join(env.location.configDir, 'contentServer.yaml');
  const yaml = parse(readFileSync(file, 'utf8')) as { connections: Array<Record<string, unknown>>; listen: object };
  Object.assign(yaml.connections[0], settings.connection);
  Object.assign(yaml, { listen: { host: '127.0.0.1', port: 0 }, certificateRefreshSeconds: 0 }, settings.server);
  writeFileSync(file, stringify(yaml));
  const config = loadConfig(env.location, { contentServer: true });
  const server = new ContentServer(
    { storage: config.storage, server: config.contentServer!, version: '0.0.0-test' },
    settings.log ?? quietLog,
  );
  const { port } = await server.start();
  t.teardown(() => server.stop());
  const origin = `http://127.0.0.1:${port}`;
  const script = `${origin}/archivelink/S4H`;
  const certificates = new CertificateStore(env.client, config.storage.adminPath);
  // node:http sends the request line as written: SAP leaves a '#' raw in attrSearch patterns,
  // which a client that parses URLs would drop as a fragment.
  const call: ServedEnv['call'] = (method, query, body, headers = {}) =>
    new Promise((resolve, reject) => {
      const sent = httpRequest(
        { host: '127.0.0.1', port, method, path: `/archivelink/S4H?${query}`, headers },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const error = res.headers['x-errordescription'];
            resolve({
              status: res.statusCode as number,
              headers: res.headers,
              body: Buffer.concat(chunks),
              error: error as string | undefined,
            });
          });
        },
      );
      sent.on('error', reject);
      sent.end(body);
    });
  const trust: ServedEnv['trust'] = async (name, authId = FIXTURE_AUTH_ID) => {
    const answer = await call('PUT', `putCert&pVersion=0047&contRep=Z1&authId=${authId}`, fixture(name));
    if (answer.status !== 200) throw new Error(`putCert ${name}: ${answer.status} ${answer.error}`);
    const filed = (await certificates.list()).find((c) => c.status === 'pending');
    await certificates.setStatus(filed!, 'approved');
  };
  return { ...env, script, origin, certificates, caller: new ArchiveLinkCaller(script, 'Z1'), call, trust };
}

/**
 * A document the job labelled for SAP, and the SAP fake's certificate approved: what an SAP user
 * then opens. `name` is its file name in ERP/Invoices; its uid is its docId.
 */
export async function openableDocument(env: ServedEnv, name: string): Promise<string> {
  await env.caller.putCert();
  await env.certificates.setStatus((await env.certificates.list())[0], 'approved');
  const uid = await env.upload('ERP/Invoices', name);
  await env.job();
  return uid;
}
