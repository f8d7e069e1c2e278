import type { Test } from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A server that answers 200 in `pieces`, 100 ms apart, to any path; to a path containing
 * `stalled`, only the first piece, then silence. For time-outs that must let a slow answer
 * through and stop a stalled one. Returns its base URL; it closes when `t` ends.
 */
export async function trickleServer(t: Test, pieces: string[], contentType: string): Promise<string> {
  const server = createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': contentType });
    res.write(pieces[0]);
    if (req.url?.includes('stalled') === true) return;
    let sent = 1;
    const timer = setInterval(() => {
      res.write(pieces[sent++]);
      if (sent < pieces.length) return;
      clearInterval(timer);
      res.end();
    }, 100);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
