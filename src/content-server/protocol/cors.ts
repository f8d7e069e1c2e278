import type { IncomingMessage, ServerResponse } from 'node:http';

/** The answer headers a page may read: the protocol's own, besides the ones CORS always lets through. */
const EXPOSED = [
  'X-ErrorDescription',
  'X-docId',
  'X-contRep',
  'X-contentRep',
  'X-numComps',
  'X-numberComps',
  'X-dateC',
  'X-timeC',
  'X-dateM',
  'X-timeM',
  'X-docStatus',
  'X-pVersion',
  'Content-Disposition',
].join(', ');

/**
 * Cross-origin reads for the pages contentServer.yaml's `corsOrigins` lists (a Fiori launchpad
 * that opens attachments in the browser): those origins get `Access-Control-Allow-Origin`, and
 * their preflights an answer; any other origin gets no CORS header, so its browser refuses the
 * page the answer. The URLs are signed, so no credentials (cookies) are allowed.
 */
export class Cors {
  private readonly origins: ReadonlySet<string>;

  constructor(origins: readonly string[]) {
    this.origins = new Set(origins);
  }

  /** Sets the CORS headers of an answer; true when the request was a preflight, answered here. */
  answer(req: IncomingMessage, res: ServerResponse): boolean {
    if (this.origins.size === 0) return false;
    // Answers differ by Origin: a cache must not give one origin's answer to another.
    res.setHeader('Vary', 'Origin');
    const origin = req.headers.origin;
    if (origin === undefined || !this.origins.has(origin)) return false;
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Expose-Headers', EXPOSED);
    if (req.method !== 'OPTIONS') return false;
    res.writeHead(204, {
      'Access-Control-Allow-Methods': 'GET, PUT, POST',
      'Access-Control-Allow-Headers': 'Content-Type',
      'Access-Control-Max-Age': '600',
    });
    res.end();
    return true;
  }
}
