import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { DOCUMENT_LINK_ROOT, documentLinkPath, linkRefusal } from '../../document-link.js';
import type { Logger } from '../../log.js';
import type { DocumentServices } from './document-context.js';
import { ArchiveLinkError } from '../protocol/protocol.js';
import { ascii, sendText } from '../protocol/answers.js';

/** `/documents/<connection>/<contRep>/<docId>`: its three names, decoded; undefined for any other path. */
function names(pathname: string): [string, string, string] | undefined {
  const parts = pathname.slice(DOCUMENT_LINK_ROOT.length + 1).split('/');
  if (parts.length !== 3) return undefined;
  try {
    return parts.map(decodeURIComponent) as [string, string, string];
  } catch {
    return undefined;
  }
}

/**
 * A document link of a URL attachment (document-link.ts), followed by an SAP user's browser: the
 * document's content, inline, when the link is signed with one of the connection's
 * `documentLinks.keys` and has not expired; read with the connection's own repository account,
 * so the repository's permissions hold. A person reads the answer: a refusal is a line of text.
 */
export async function openLinkedDocument(
  req: IncomingMessage,
  res: ServerResponse,
  connections: ReadonlyMap<string, DocumentServices>,
  log: Logger,
): Promise<void> {
  const url = new URL(req.url as string, 'http://serve');
  if (req.method !== 'GET' && req.method !== 'HEAD') return sendText(res, 405, 'a link is opened with GET\n');
  const path = names(url.pathname);
  const services = path && connections.get(path[0]);
  const keys = services?.connection.documentLinks?.keys;
  if (path === undefined || services === undefined || keys === undefined) return sendText(res, 404, 'no such link\n');
  const refusal = linkRefusal(keys, documentLinkPath(...path), url.searchParams, new Date());
  if (refusal !== undefined) {
    log.warn('document link refused', { connection: path[0], contRep: path[1], docId: path[2], refusal });
    return sendText(res, 403, `${refusal}\n`);
  }
  try {
    const document = await services.documents.find(path[1], path[2]);
    if (document === undefined) return sendText(res, 404, 'the document is no longer in the repository\n');
    const component = await services.documents.component(document, undefined);
    const content = await services.documents.open(component);
    res.writeHead(200, {
      'Content-Type': ascii(component.mimeType),
      'Content-Length': content.length,
      'Content-Disposition': 'inline',
      // The link is the credential: an answer no cache keeps for others.
      'Cache-Control': 'private, no-store',
      // Whatever was uploaded (HTML, SVG) is shown, never run, on serve's origin.
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': 'sandbox',
    });
    if (req.method === 'HEAD') {
      content.body.destroy();
      return void res.end();
    }
    await pipeline(content.body, res);
  } catch (error) {
    if (res.headersSent) return void res.destroy();
    if (error instanceof ArchiveLinkError && error.status === 404) return sendText(res, 404, `${error.message}\n`);
    log.error('document link failed', { docId: path[2], error: (error as Error).message });
    sendText(res, 502, 'the repository refused or failed to give the document; try again later\n');
  }
}
