import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parse, stringify } from 'yaml';
import { sandboxEnv } from '../helpers/env.js';
import { startCli } from '../helpers/run-cli.js';

/**
 * Uploads stream from SAP to the repository (issue 35): `serve`, its own process, peaks where it
 * did before whatever SAP sends it — a create, an mCreate and an update POST of components larger
 * than the memory the server may grow by, and a part refused for its size. Peak RSS from the
 * process's own VmHWM; the 1 GB figures of the image's bundle are in BENCHMARKS.md.
 */

t.setTimeout(300_000);

const MB = 1024 * 1024;
/** maxPartBytes here: large enough for the components sent, smaller than the one refused. */
const PART_MAX = 150 * MB;
/**
 * What serve may grow by over its peak after a small create: room for the garbage collector's
 * own pace (the chunks it has not yet collected), well below a component (held once, a part costs
 * its size at least; before this test, about three times its size).
 */
const GROWTH_MAX_MB = 100;

const peakMbOf = (pid: number): number =>
  Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;

interface PartSpec {
  headers: Record<string, string>;
  size: number;
}

/** A multipart body as SAP frames it, each part `size` bytes, made as it is sent: the test holds none of it. */
function multipartBody(parts: PartSpec[]): Readable {
  const filler = Buffer.alloc(MB, 'x');
  return Readable.from(
    (function* () {
      for (const part of parts) {
        const headers = Object.entries(part.headers).map(([key, value]) => `${key}: ${value}\r\n`);
        yield Buffer.from(`--b\r\n${headers.join('')}\r\n`);
        for (let sent = 0; sent < part.size; sent += MB) yield filler.subarray(0, Math.min(MB, part.size - sent));
        yield Buffer.from('\r\n');
      }
      yield Buffer.from('--b--\r\n');
    })(),
  );
}

/** A POST whose body streams; the answer is taken as soon as it comes (a refusal comes before the body ends). */
function post(origin: string, query: string, body: Readable): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const sent = request(
      `${origin}/archivelink/S4H?${query}`,
      { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=b' } },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode as number, text }));
        res.on('error', reject);
      },
    );
    // A refused body is cut off by the server: what the client then fails to send is no error of the test.
    sent.on('error', (error) => (sent.headersSent && body.destroyed ? undefined : reject(error)));
    body.pipe(sent);
    body.on('error', reject);
  });
}

t.test(
  'serve: a 140 MB create, mCreate and update POST, and a 300 MB part refused for its size, in flat memory',
  async (t) => {
    const env = await sandboxEnv(t);
    const file = join(env.location.configDir, 'contentServer.yaml');
    const yaml = parse(readFileSync(file, 'utf8')) as { connections: Array<Record<string, unknown>> };
    Object.assign(yaml.connections[0], { signatures: 'off' });
    Object.assign(yaml, { listen: { host: '127.0.0.1', port: 0 }, maxPartBytes: PART_MAX });
    writeFileSync(file, stringify(yaml));
    const serve = startCli(['serve', '--config', env.location.configDir]);
    t.teardown(() => void serve.child.kill('SIGKILL'));
    await serve.logged(/content server listening/);
    const origin = `http://127.0.0.1:${/"port":(\d+)/.exec(serve.output().stderr)?.[1]}`;
    const pid = serve.child.pid as number;
    const part = (size: number, docId?: string): PartSpec => ({
      headers: { ...(docId && { 'X-docId': docId }), 'X-compId': 'data', 'Content-Type': 'application/pdf' },
      size,
    });

    t.equal((await post(origin, 'create&pVersion=0047&contRep=Z1&docId=SMALL', multipartBody([part(MB)]))).status, 201);
    const yardstick = peakMbOf(pid);
    const grown = (what: string): void => {
      const peak = peakMbOf(pid);
      t.ok(
        peak - yardstick <= GROWTH_MAX_MB,
        `${what}: ${peak.toFixed(0)} MB at the peak, ${yardstick.toFixed(0)} before`,
      );
    };

    const created = await post(origin, 'create&pVersion=0047&contRep=Z1&docId=LARGE', multipartBody([part(140 * MB)]));
    t.equal(created.status, 201);
    grown('a 140 MB create');
    const mCreated = await post(
      origin,
      'mCreate&pVersion=0047&contRep=Z1&docId=M1',
      multipartBody([part(70 * MB, 'M1'), part(70 * MB, 'M2')]),
    );
    t.equal(mCreated.status, 201, mCreated.text);
    grown('an mCreate of two 70 MB documents');
    const updated = await post(origin, 'update&pVersion=0047&contRep=Z1&docId=LARGE', multipartBody([part(140 * MB)]));
    t.equal(updated.status, 200);
    grown('a 140 MB update POST');
    const refused = await post(origin, 'create&pVersion=0047&contRep=Z1&docId=HUGE', multipartBody([part(300 * MB)]));
    t.equal(refused.status, 400);
    grown('a 300 MB part refused');
    await serve.logged(/"error":"multipart body: a part is larger than maxPartBytes \(157286400 bytes\)"/);

    const sizes = ['LARGE', 'M1', 'M2'].map((docId) => {
      const folder = env.sandbox.store.getByPath(`/default-domain/workspaces/sap-archive/Z1/${docId}/data`);
      return (folder?.properties['file:content'] as { length: string } | undefined)?.length;
    });
    t.same(sizes, [String(140 * MB), String(70 * MB), String(70 * MB)], 'the repository has every byte');
    t.equal(
      env.sandbox.store.getByPath('/default-domain/workspaces/sap-archive/Z1/HUGE'),
      undefined,
      'nothing of the refused one',
    );
  },
);
