/**
 * The benchmark's yardstick for the content server: a process that forwards a `get` with nothing
 * else — the two repository requests serve makes for a job's document (its JSON and its blob, sent
 * together) and the blob streamed on — and no signature, no checks, no logs. What it reaches is what
 * relaying the bytes alone allows on this machine; serve's distance to it is the cost of its own work.
 * Run as its own process: `node forwarder.js <repository API root>`; it prints its port on stderr.
 */
import { createServer } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Agent } from 'undici';
import { DOCUMENT_SCHEMAS } from '../dist/src/content-server/documents/archive.js';

const api = new URL(process.argv[2]);
const headers = { authorization: `Basic ${Buffer.from('Administrator:Administrator').toString('base64')}` };
const dispatcher = new Agent();

const server = createServer((req, res) => {
  const docId = new URL(req.url as string, 'http://forwarder').searchParams.get('docId') as string;
  const path = `${api.pathname}/id/${docId}`;
  // The schemas serve reads, so the repository does the same work.
  const document = dispatcher.request({
    origin: api.origin,
    path,
    method: 'GET',
    headers: { ...headers, properties: DOCUMENT_SCHEMAS },
  });
  const blob = dispatcher.request({ origin: api.origin, path: `${path}/@blob/file:content`, method: 'GET', headers });
  void (async () => {
    const [read, { body, headers: answered }] = await Promise.all([document, blob]);
    await read.body.json();
    res.writeHead(200, { 'content-length': Number(answered['content-length']) });
    await pipeline(body, res);
  })().catch(() => res.destroy());
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stderr.write(`${JSON.stringify({ port: typeof address === 'object' ? address?.port : undefined })}\n`);
});
process.on('SIGINT', () => process.exit(0));
