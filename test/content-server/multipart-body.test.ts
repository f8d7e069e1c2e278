import t, { type Test } from 'tap';
import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { until } from '../helpers/until.js';
import { MAX_PARTS, MultipartBody } from '../../src/content-server/protocol/multipart-body.js';

/**
 * MultipartBody over real HTTP: a server that reads each part as the content server's upload
 * does (or leaves it unread), and answers what it saw or why the body was refused.
 */

interface Seen {
  parts: Array<{ compId: unknown; name: string; bytes: number }>;
  failure?: string;
}

async function reader(
  t: Test,
  options: { maxPartBytes?: number; skip?: boolean; slowMs?: number } = {},
): Promise<{ origin: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = new MultipartBody(req, options.maxPartBytes ?? 1024);
      const record: Seen = { parts: [] };
      seen.push(record);
      try {
        for await (const part of body) {
          let bytes = 0;
          // Skipped parts are read off by MultipartBody itself before the next one comes.
          if (!options.skip)
            for await (const chunk of part.body) {
              bytes += (chunk as Buffer).length;
              if (options.slowMs) await sleep(options.slowMs);
            }
          record.parts.push({ compId: part.headers['x-compid'], name: part.name, bytes });
        }
        res.end(JSON.stringify(record));
      } catch (error) {
        record.failure = (error as Error).message;
        res.writeHead(400, { Connection: 'close' });
        res.end(JSON.stringify(record));
        req.resume();
      }
    })();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => void server.close());
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function post(
  origin: string,
  body: string | Buffer,
  contentType = 'multipart/form-data; boundary=b',
): Promise<Seen & { status: number }> {
  return new Promise((resolve, reject) => {
    const sent = request(
      origin,
      { method: 'POST', headers: contentType ? { 'content-type': contentType } : {} },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode as number, ...(JSON.parse(text) as Seen) }));
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });
}

const part = (compId: string, content: string, extra = ''): string =>
  `--b\r\nX-compId: ${compId}\r\nContent-Type: text/plain\r\n${extra}\r\n${content}\r\n`;

t.test('parts come in order with their headers and every byte; a part left unread is read off', async (t) => {
  const { origin } = await reader(t);
  const body = `preamble\r\n${part('data', 'one')}${part('data1', 'x'.repeat(900))}--b--\r\nepilogue`;
  const read = await post(origin, body);
  t.equal(read.status, 200);
  t.same(read.parts, [
    { compId: 'data', name: '', bytes: 3 },
    { compId: 'data1', name: '', bytes: 900 },
  ]);
  const named = await post(origin, '--b\r\nContent-Disposition: form-data; name="data"\r\n\r\nx\r\n--b--\r\n');
  t.equal(named.parts[0].name, 'data', 'the Content-Disposition name');

  const skipping = await reader(t, { skip: true });
  const skipped = await post(skipping.origin, `${part('a', 'x'.repeat(900))}${part('b', 'y')}--b--\r\n`);
  t.same(
    skipped.parts.map((p) => p.compId),
    ['a', 'b'],
  );
});

t.test('a reader slower than the client: the body waits for it and arrives whole', async (t) => {
  const { origin } = await reader(t, { maxPartBytes: 8 * 1024 * 1024, slowMs: 1 });
  const big = 'z'.repeat(4 * 1024 * 1024);
  const read = await post(origin, `${part('data', big)}${part('data1', 'after')}--b--\r\n`);
  t.same(
    read.parts.map((p) => p.bytes),
    [big.length, 5],
  );
});

t.test('every malformed body is refused with its reason', async (t) => {
  const { origin } = await reader(t);
  const refusal = async (body: string | Buffer, contentType?: string): Promise<string | undefined> =>
    (await post(origin, body, contentType)).failure;
  t.equal(await refusal('x', 'text/plain'), 'a POST carries its components as multipart/form-data');
  t.equal(await refusal('x', ''), 'a POST carries its components as multipart/form-data', 'no Content-Type');
  t.equal(await refusal('x', 'multipart/form-data'), 'multipart body: the Content-Type names no boundary');
  t.equal(
    await refusal(`${part('data', 'x'.repeat(2000))}--b--\r\n`),
    'multipart body: a part is larger than maxPartBytes (1024 bytes)',
  );
  t.match(
    await refusal(`--b\r\n: no name\r\n\r\nx\r\n--b--\r\n`),
    /^multipart body: a part's headers are malformed \(/,
  );
  t.equal(
    await refusal(`--b\r\nContent-Disposition: form-data\r\n\r\nx\r\n--b--\r\n`),
    'multipart body: a part is form-data without a name',
  );
  t.equal(await refusal(part('data', 'cut off here')), 'multipart body: the body ends before its closing boundary');
  t.equal(
    await refusal('--b\r\nX-compId: da'),
    'multipart body: the body ends before its closing boundary',
    'ended among the headers',
  );
  t.equal(await refusal(''), 'multipart body: the body ends before its closing boundary', 'empty');
  const many = Array.from({ length: MAX_PARTS + 1 }, (_, i) => part(`c${i}`, '')).join('') + '--b--\r\n';
  t.equal(await refusal(many), `multipart body: more than ${MAX_PARTS} parts`);
});

t.test('a client that stops sending: the part being read fails, and so does the body', async (t) => {
  const { origin, seen } = await reader(t, { maxPartBytes: 1024 * 1024 });
  const { port } = new URL(origin);
  const socket = connect(Number(port), '127.0.0.1');
  await once(socket, 'connect');
  socket.write(
    'POST / HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n',
  );
  socket.write(`--b\r\nX-compId: data\r\n\r\n${'x'.repeat(5000)}`);
  await until(() => seen.length === 1, 'the server reads the part');
  socket.destroy();
  await until(() => seen[0].failure !== undefined, 'the body fails');
  t.equal(seen[0].failure, 'multipart body: the client stopped sending it');
  t.same(seen[0].parts, [], 'the part cut off is no part read');
});
