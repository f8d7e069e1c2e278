import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ArchiveLinkError } from './protocol.js';

/** Header values and the error description are plain ASCII (§3): anything else becomes `?`. */
export const ascii = (text: string): string => text.replace(/[^\x20-\x7e]/g, '?');

/** An error as the protocol answers it: the status, and the reason in `X-ErrorDescription`. */
export function sendError(res: ServerResponse, error: ArchiveLinkError): void {
  const description = ascii(error.message);
  // Set, not passed to writeHead: the access log reads the description back from the answer.
  res.setHeader('Content-Type', 'text/plain; charset=us-ascii');
  res.setHeader('X-ErrorDescription', description);
  res.writeHead(error.status);
  res.end(`${description}\r\n`);
}

/** `key="value";…` then CRLF, a quote in a value doubled (serverInfo, mCreate). */
export const asciiLine = (fields: Array<[string, string]>): string =>
  `${fields.map(([key, value]) => `${key}="${ascii(value).replace(/"/g, '""')}";`).join('')}\r\n`;

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * `resultAs=html` (info, serverInfo): the fields the ASCII answer carries, as a page a person
 * reads in a browser, one table per group (the server or document, then each repository or component).
 */
export function sendHtml(res: ServerResponse, title: string, groups: Array<Array<[string, string]>>): void {
  const tables = groups.map(
    (rows) =>
      `<table>${rows.map(([key, value]) => `<tr><th>${escapeHtml(key)}</th><td>${escapeHtml(ascii(value))}</td></tr>`).join('')}</table>\n`,
  );
  const body = `<!DOCTYPE html>\n<html><head><meta charset="us-ascii"><title>${escapeHtml(title)}</title></head><body>\n<h1>${escapeHtml(title)}</h1>\n${tables.join('')}</body></html>\n`;
  res.writeHead(200, { 'Content-Type': 'text/html; charset=us-ascii', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

export function sendText(
  res: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=us-ascii',
    'Content-Length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

/** One part of a multipart answer: its headers, and its bytes when they are sent (docGet, not info). */
export interface AnswerPart {
  headers: Record<string, string | number>;
  open?: () => Promise<{ body: Readable; length: number }>;
}

const headerLines = (headers: Record<string, string | number>): string =>
  Object.entries(headers)
    .map(([key, value]) => `${key}: ${ascii(String(value))}\r\n`)
    .join('');

/**
 * A multipart/form-data answer (info, docGet), framed with CRLF as RFC 2046 says. Parts with
 * content are opened one after the other and streamed: a document of several large components
 * never sits in memory. Without content, the whole length is known and sent.
 */
export async function sendMultipart(
  res: ServerResponse,
  headers: Record<string, string | number>,
  parts: AnswerPart[],
): Promise<void> {
  const boundary = randomBytes(18).toString('base64url');
  const contentType = `multipart/form-data; boundary=${boundary}`;
  const closing = `--${boundary}--\r\n`;
  if (parts.every((part) => part.open === undefined)) {
    const body = parts.map((part) => `--${boundary}\r\n${headerLines(part.headers)}\r\n\r\n`).join('') + closing;
    res.writeHead(200, { ...headers, 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
    return void res.end(body);
  }
  res.writeHead(200, { ...headers, 'Content-Type': contentType });
  await pipeline(multipartBody(boundary, parts, closing), res);
}

/**
 * The answer's body, each part's content opened in its turn and passed on at the client's pace:
 * one pipeline for the whole answer (one per part, each with `{ end: false }`, would leave its
 * listeners on the answer until it ends: Node 20).
 */
async function* multipartBody(boundary: string, parts: AnswerPart[], closing: string): AsyncGenerator<string | Buffer> {
  for (const part of parts) {
    const content = await (part.open as NonNullable<AnswerPart['open']>)();
    yield `--${boundary}\r\n${headerLines({ ...part.headers, 'Content-Length': content.length })}\r\n`;
    yield* content.body;
    yield '\r\n';
  }
  yield closing;
}
