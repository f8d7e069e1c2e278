import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ByteRange } from '../../repository/client.js';
import { ascii, asciiLine, sendHtml, sendMultipart, sendText, type AnswerPart } from '../protocol/answers.js';
import type { ArchiveDocument, Component, Prefetch } from './archive.js';
import { addressedDocument } from './addressed.js';
import type { DocumentContext } from './document-context.js';
import { ArchiveLinkError, STATUS, sapDateTime } from '../protocol/protocol.js';

const P_VERSION = '0047';

function documentHeaders(document: ArchiveDocument, count: number, pVersion: string): Record<string, string | number> {
  const created = sapDateTime(document.created);
  const modified = sapDateTime(document.modified);
  return {
    'X-dateC': created.date,
    'X-timeC': created.time,
    'X-dateM': modified.date,
    'X-timeM': modified.time,
    // info's tables name X-numberComps and X-contentRep, docGet's X-numComps and X-contRep: both are sent.
    'X-numberComps': count,
    'X-numComps': count,
    'X-contentRep': document.contRep,
    'X-contRep': document.contRep,
    'X-docId': document.docId,
    'X-docStatus': 'online',
    'X-pVersion': pVersion,
  };
}

function componentHeaders(component: Component, pVersion: string): Record<string, string | number> {
  const created = sapDateTime(component.created);
  const modified = sapDateTime(component.modified);
  return {
    // A type the repository took from an upload, or a compId a user typed in, may hold what a header cannot.
    'Content-Type': ascii(component.mimeType),
    'X-compId': ascii(component.compId),
    'X-Content-Length': component.length,
    'X-compDateC': created.date,
    'X-compTimeC': created.time,
    'X-compDateM': modified.date,
    'X-compTimeM': modified.time,
    'X-compStatus': 'online',
    'X-pVersion': pVersion,
  };
}

const pVersionOf = (context: DocumentContext): string => context.url.get('pVersion') ?? P_VERSION;

/** `resultAs` of info and serverInfo: `ascii` (the default: the protocol's own answer) or `html`, a page for a person. */
function resultAsOf(context: DocumentContext): 'ascii' | 'html' {
  const resultAs = context.url.get('resultAs') ?? 'ascii';
  if (resultAs !== 'ascii' && resultAs !== 'html')
    throw new ArchiveLinkError(STATUS.badRequest, `resultAs "${resultAs}" is neither ascii nor html`);
  return resultAs;
}

const fields = (headers: Record<string, string | number>): Array<[string, string]> =>
  Object.entries(headers).map(([key, value]) => [key, String(value)]);

/** info: the document's and its components' attributes, one empty part per component. */
export async function info(context: DocumentContext): Promise<void> {
  const document = await addressedDocument(context);
  const compId = context.url.get('compId');
  const components = compId
    ? [await context.documents.component(document, compId)]
    : await context.documents.components(document);
  const pVersion = pVersionOf(context);
  const header = documentHeaders(document, components.length, pVersion);
  // info's parts name the character set and version in the Content-Type (§3, "info parts"): neither is known here.
  const parts = components.map((c) => {
    const headers = componentHeaders(c, pVersion);
    return { ...headers, 'Content-Type': `${headers['Content-Type']}; charset=; version=`, 'Content-Length': 0 };
  });
  if (resultAsOf(context) === 'html')
    return sendHtml(context.res, `Document ${document.docId}`, [fields(header), ...parts.map(fields)]);
  await sendMultipart(
    context.res,
    header,
    parts.map((headers): AnswerPart => ({ headers })),
  );
}

/** docGet: every component, streamed one after the other. */
export async function docGet(context: DocumentContext): Promise<void> {
  const document = await addressedDocument(context);
  const components = await context.documents.components(document);
  const pVersion = pVersionOf(context);
  const parts: AnswerPart[] = components.map((c) => ({
    headers: componentHeaders(c, pVersion),
    open: () => context.documents.open(c),
  }));
  await sendMultipart(context.res, documentHeaders(document, components.length, pVersion), parts);
}

function offset(context: DocumentContext, key: string, fallback: number): number {
  const text = context.url.get(key);
  if (!text) return fallback;
  if (!/^-?\d+$/.test(text)) throw new ArchiveLinkError(STATUS.badRequest, `${key} "${text}" is not a number`);
  return Number(text);
}

/** `fromOffset` and `toOffset` as the URL gives them (0 and -1, the end, by default); neither negative. */
function offsets(context: DocumentContext): { from: number; to: number } {
  const from = offset(context, 'fromOffset', 0);
  const to = offset(context, 'toOffset', -1);
  if (from < 0 || to < -1)
    throw new ArchiveLinkError(STATUS.badRequest, 'fromOffset and toOffset must not be negative');
  return { from, to };
}

/** What search and attrSearch both take: how many hits at most, and whether case counts. */
function searchOptions(context: DocumentContext): { numResults: number; caseSensitive: boolean } {
  const numResults = offset(context, 'numResults', 1);
  if (numResults < 1) throw new ArchiveLinkError(STATUS.badRequest, 'numResults must be at least 1');
  return { numResults, caseSensitive: context.url.get('caseSensitive')?.toLowerCase() === 'y' };
}

/**
 * The bytes `fromOffset` to `toOffset` of a component, both included; -1 is its end. Clamped to
 * the component: Nuxeo answers a range past the end with a Content-Length it cannot fill.
 */
function rangeOf(context: DocumentContext, length: number): ByteRange | undefined {
  const { from, to: asked } = offsets(context);
  const to = asked === -1 ? length - 1 : Math.min(asked, length - 1);
  if (asked !== -1 && asked < from) throw new ArchiveLinkError(STATUS.badRequest, 'toOffset is before fromOffset');
  if (from === 0 && to === length - 1) return undefined;
  return { from, to };
}

/** get: one component's bytes, or a range of them, streamed from the repository; 200 either way (206 is not in the protocol). */
export async function get(context: DocumentContext): Promise<void> {
  const { url, documents } = context;
  const whole = !url.get('fromOffset') && !url.get('toOffset');
  // The content is asked for once the request is allowed, alongside the document's metadata when a
  // signature allows it: a refused caller makes the repository read nothing of it.
  let early: Prefetch | undefined;
  try {
    const document = await addressedDocument(context, () => {
      if (whole) early = documents.prefetch(url.get('docId'));
    });
    const component = await documents.component(document, url.get('compId'));
    const range = rangeOf(context, component.length);
    const headers = { ...componentHeaders(component, pVersionOf(context)) };
    if (range !== undefined && range.from > range.to) {
      context.res.writeHead(200, { ...headers, 'Content-Length': 0 });
      return void context.res.end();
    }
    const content =
      early !== undefined && range === undefined ? await early.take(component) : await documents.open(component, range);
    context.res.writeHead(200, { ...headers, 'Content-Length': content.length });
    await pipeline(content.body, context.res);
  } finally {
    early?.discard();
  }
}

/** Case folding for `caseSensitive=n`: ASCII and Latin-1 letters, byte for byte. */
function fold(bytes: Buffer): Buffer {
  return Buffer.from(
    bytes.map((b) => ((b >= 0x41 && b <= 0x5a) || (b >= 0xc0 && b <= 0xde && b !== 0xd7) ? b + 32 : b)),
  );
}

/**
 * search: the offsets of a byte pattern in a component, from fromOffset to toOffset (backwards
 * when fromOffset is the greater), at most numResults of them. The component streams through;
 * only the pattern's length of it is kept between chunks.
 */
export async function search(context: DocumentContext): Promise<void> {
  const document = await addressedDocument(context);
  const { url } = context;
  const compId = url.get('compId');
  if (!compId) throw new ArchiveLinkError(STATUS.badRequest, 'compId is missing');
  const raw = url.bytes('pattern');
  if (!raw?.length) throw new ArchiveLinkError(STATUS.badRequest, 'pattern is missing');
  const { numResults, caseSensitive } = searchOptions(context);
  const component = await context.documents.component(document, compId);
  const { from, to } = offsets(context);
  const end = to === -1 ? component.length - 1 : Math.min(to, component.length - 1);
  const backwards = to !== -1 && from > to;
  const [low, high] = backwards ? [end, Math.min(from, component.length - 1)] : [from, end];
  const pattern = caseSensitive ? raw : fold(raw);
  const hits: number[] = [];
  if (high - low + 1 >= pattern.length) {
    const content = await context.documents.open(component, { from: low, to: high });
    let carried = Buffer.alloc(0);
    let base = low;
    for await (const chunk of content.body) {
      const window = Buffer.concat([carried, caseSensitive ? (chunk as Buffer) : fold(chunk as Buffer)]);
      for (let at = window.indexOf(pattern); at >= 0; at = window.indexOf(pattern, at + 1)) hits.push(base + at);
      if (!backwards && hits.length >= numResults) {
        content.body.destroy();
        break;
      }
      const keep = Math.min(pattern.length - 1, window.length);
      carried = window.subarray(window.length - keep);
      base += window.length - keep;
    }
  }
  // A hit is the position of the pattern's first byte, whichever the direction (SAP's search page).
  const found = backwards ? hits.reverse().slice(0, numResults) : hits.slice(0, numResults);
  sendText(context.res, 200, `${found.length};${found.map((h) => `${h};`).join('')}`);
}

/** A description file's lines, byte for byte as Latin-1 (SAP writes its print lists' attributes so). */
async function* latin1Lines(body: Readable): AsyncGenerator<string> {
  let rest = '';
  for await (const chunk of body) {
    const lines = (rest + (chunk as Buffer).toString('latin1')).split('\n');
    rest = lines.pop() as string;
    yield* lines.map((line) => line.replace(/\r$/, ''));
  }
  if (rest !== '') yield rest;
}

interface KeyField {
  offset: number;
  length: number;
}

/** One `offset+length+value` of an attrSearch pattern: an attribute of the DAIN lines, by its DKEY position. */
function attributeConditions(pattern: string, keys: KeyField[]): Array<KeyField & { value: string }> {
  return pattern.split('#').map((condition) => {
    const parts = /^(\d+)\+(\d+)\+(.*)$/s.exec(condition);
    if (parts === null)
      throw new ArchiveLinkError(STATUS.badRequest, `pattern "${condition}" is not offset+length+value`);
    const field = { offset: Number(parts[1]), length: Number(parts[2]), value: parts[3] };
    if (!keys.some((k) => k.offset === field.offset && k.length === field.length))
      throw new ArchiveLinkError(
        STATUS.badRequest,
        `pattern ${field.offset}+${field.length} fits no DKEY of the description`,
      );
    return field;
  });
}

/**
 * attrSearch, on a print list's description (`descr`): lines `<data offset> <data length>
 * <record type><parameters>`; DKEY lines declare attributes (name, 40 bytes; offset and length in
 * the DAIN parameters, 3 digits each); DAIN lines hold the values. Every condition of the pattern
 * must hold; the answer lists the data ranges of the matching DAIN lines (SAP's attrSearch page
 * and the spec tables, docs/reference/sap-interfaces.md §3 and the notes of issue 20).
 */
export async function attrSearch(context: DocumentContext): Promise<void> {
  const document = await addressedDocument(context);
  const { url } = context;
  const pattern = url.bytes('pattern')?.toString('latin1');
  if (!pattern) throw new ArchiveLinkError(STATUS.badRequest, 'pattern is missing');
  const { numResults, caseSensitive } = searchOptions(context);
  const from = offset(context, 'fromOffset', 0);
  const to = offset(context, 'toOffset', -1);
  const descr = await context.documents.component(document, 'descr');
  const content = await context.documents.open(descr);
  const keys: KeyField[] = [];
  let conditions: Array<KeyField & { value: string }> | undefined;
  const hits: Array<[number, number]> = [];
  const same = (a: string, b: string): boolean => (caseSensitive ? a === b : a.toLowerCase() === b.toLowerCase());
  for await (const line of latin1Lines(content.body)) {
    const record = /^(\d+) (\d+) (DKEY|DAIN)(.*)$/s.exec(line);
    if (record === null) continue;
    const [, dataOffset, dataLength, type, parameters] = record;
    if (type === 'DKEY') {
      keys.push({ offset: Number(parameters.slice(40, 43)), length: Number(parameters.slice(43, 46)) });
      continue;
    }
    conditions ??= attributeConditions(pattern, keys);
    const at = Number(dataOffset);
    if (at < from || (to !== -1 && at > to)) continue;
    if (conditions.every((c) => same(parameters.slice(c.offset, c.offset + c.length).trimEnd(), c.value)))
      hits.push([at, Number(dataLength)]);
    if (hits.length >= numResults) break;
  }
  // A description without values still has its pattern checked against its keys.
  if (conditions === undefined) attributeConditions(pattern, keys);
  sendText(context.res, 200, `${hits.length};${hits.map(([o, l]) => `${o};${l};`).join('')}`);
}

/**
 * serverInfo: the server's line, then one per content repository of this connection (or the one
 * asked). Their status is the repository's as the server's own account reaches it: `error`, with
 * why, when it cannot (down, or refusing repositoryAuth), so OAC0's connection test says so.
 */
export async function serverInfo(context: DocumentContext, version: string): Promise<void> {
  const { url, connection } = context;
  const asked = url.get('contRep');
  const repositories = connection.contentRepositories.filter((r) => asked === undefined || r.contRep === asked);
  if (repositories.length === 0)
    throw new ArchiveLinkError(STATUS.notFound, `content repository ${String(asked)} is not served here`);
  const state = await context.health.state();
  const [status, description] = state.running ? ['running', ''] : ['error', state.reason];
  const pVersion = pVersionOf(context);
  const now = sapDateTime(new Date());
  const lines: Array<Array<[string, string]>> = [
    [
      ['serverStatus', status],
      ['serverVendorId', `connect2erp ${version}`],
      ['serverVersion', version],
      ['serverTime', now.time],
      ['serverDate', now.date],
      ['serverStatusDescription', description],
      ['pVersion', pVersion],
    ],
    ...repositories.map((r): Array<[string, string]> => [
      ['contRep', r.contRep],
      ['contRepDescription', `content repository ${r.contRep}`],
      ['contRepStatus', status],
      ['contRepStatusDescription', description],
      ['pVersion', pVersion],
    ]),
  ];
  if (resultAsOf(context) === 'html') return sendHtml(context.res, 'connect2erp content server', lines);
  sendText(context.res, 200, lines.map(asciiLine).join(''));
}
