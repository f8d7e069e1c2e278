import type { IncomingMessage } from 'node:http';
import { asciiLine, sendText } from '../protocol/answers.js';
import { NAME } from './archive.js';
import { checkCompId, type IncomingComponent } from './archive-writer.js';
import { addressedDocument, contRepOf } from './addressed.js';
import type { DocumentContext } from './document-context.js';
import { MultipartBody, type IncomingPart } from '../protocol/multipart-body.js';
import { ArchiveLinkError, STATUS } from '../protocol/protocol.js';

/** The media type of a Content-Type (`application/pdf; charset=; version=6`, SAP's empty charset included). */
const mediaType = (contentType: string | undefined): string =>
  contentType?.split(';')[0].trim().toLowerCase() || 'application/octet-stream';

function docIdOf(context: DocumentContext): string {
  const docId = context.url.get('docId');
  if (docId === undefined || !NAME.test(docId))
    throw new ArchiveLinkError(
      STATUS.badRequest,
      `docId "${docId ?? ''}" is missing or not a document id this server stores`,
    );
  return docId;
}

/**
 * docProt as sent: absent means the server's default, empty means "no protection" explicitly
 * (SAP's create page: the two are different).
 */
function docProtOf(context: DocumentContext): string {
  const docProt = context.url.get('docProt') ?? context.connection.defaultProtection;
  if (!/^[rcud]*$/.test(docProt))
    throw new ArchiveLinkError(STATUS.badRequest, `docProt "${docProt}" is not letters among r, c, u and d`);
  return docProt;
}

/** A part's header, as sent once; a header sent twice in one part is ambiguous and refused. */
function partHeader(part: IncomingPart, name: string): string | undefined {
  const value = part.headers[name];
  if (Array.isArray(value)) throw new ArchiveLinkError(STATUS.badRequest, `a part carries ${name} more than once`);
  return value;
}

/** The component of a part: its id from X-compId (or, failing that, the Content-Disposition name, as Lamiv reads it). */
function componentOf(part: IncomingPart): IncomingComponent {
  return {
    // Checked where its document is stored: in mCreate, a bad one is that document's failure only.
    compId: partHeader(part, 'x-compid') ?? part.name,
    mimeType: mediaType(partHeader(part, 'content-type')),
    body: part.body,
  };
}

async function* componentsOf(parts: MultipartBody): AsyncGenerator<IncomingComponent> {
  for await (const part of parts) yield componentOf(part);
}

/** A store that read a multipart body fails with the body's own failure first: the upload it cut fails with it. */
async function storing(parts: MultipartBody, work: Promise<void>): Promise<void> {
  try {
    await work;
  } catch (error) {
    throw parts.failure ?? error;
  }
}

/** The one component of a PUT: the request's body, of the request's Content-Type. */
function bodyComponent(req: IncomingMessage, compId: string | undefined): IncomingComponent {
  return { compId: checkCompId(compId), mimeType: mediaType(req.headers['content-type']), body: req };
}

/** create: PUT with one component, or POST with any number; 201, or 403 when the document exists. */
export async function create(context: DocumentContext): Promise<void> {
  const { url, req, res, writer, access, connection } = context;
  const contRep = contRepOf(context);
  // There is no document yet: the server's default protection says whether creating needs a signature.
  await access.require(url, req.method as string, connection.defaultProtection);
  const docId = docIdOf(context);
  const docProt = docProtOf(context);
  if (req.method === 'PUT') await writer.create(contRep, docId, docProt, [bodyComponent(req, url.get('compId'))]);
  else {
    const parts = new MultipartBody(req, context.maxPartBytes);
    await storing(parts, writer.create(contRep, docId, docProt, componentsOf(parts)));
  }
  sendText(res, STATUS.created, '', { 'X-docId': docId });
}

/** One document of an mCreate: its docId and its components, streamed. */
interface IncomingDocument {
  docId: string;
  components: AsyncIterable<IncomingComponent>;
}

/**
 * mCreate's parts as documents: the consecutive parts with one X-docId. A document's parts are
 * read to their end before the next document is handed out (what its creation did not read, such
 * as the parts of a document that exists, is read off).
 */
async function* documentsOf(parts: MultipartBody): AsyncGenerator<IncomingDocument> {
  const iterator = parts[Symbol.asyncIterator]();
  try {
    let next = await iterator.next();
    while (next.done !== true) {
      const docId = partHeader(next.value, 'x-docid');
      if (docId === undefined) throw new ArchiveLinkError(STATUS.badRequest, 'a part of mCreate has no X-docId');
      const sameDocument = (): boolean => next.done !== true && partHeader(next.value, 'x-docid') === docId;
      yield {
        docId,
        components: (async function* () {
          while (sameDocument()) {
            yield componentOf(next.value as IncomingPart);
            next = await iterator.next();
          }
        })(),
      };
      while (sameDocument()) next = await iterator.next();
    }
  } finally {
    await iterator.return(undefined);
  }
}

/**
 * mCreate: several documents in one multipart body, the parts of each one after the other,
 * each with X-docId and X-compId. Each document is created or not on its own; the answer lists
 * them, 201 when all were created, 250 when the others existed already, 500 when one failed.
 *
 * The URL carries the first document's docId, and the signature covers it
 * (docs/reference/sap-interfaces.md §3, the commands' table: "first docId also in the URL
 * (signed)"); the others ride on it, as the protocol has it. The safe reading taken: the body must
 * begin with the signed document, or nothing is created (401), so that a signed URL never creates
 * only documents it does not name. A body that cannot be read on (malformed, a part too large)
 * fails the request (400); the documents created before it stay, as a repeat answers 403 for them.
 */
export async function mCreate(context: DocumentContext): Promise<void> {
  const { url, req, res, writer, access, connection, log } = context;
  const contRep = contRepOf(context);
  await access.require(url, req.method as string, connection.defaultProtection);
  const signed = docIdOf(context);
  const docProt = docProtOf(context);
  const parts = new MultipartBody(req, context.maxPartBytes);
  const results: Array<{ docId: string; retCode: number; description: string }> = [];
  for await (const { docId, components } of documentsOf(parts)) {
    if (results.length === 0 && docId !== signed)
      throw new ArchiveLinkError(
        STATUS.securityBreach,
        `the first document of mCreate is "${docId}", not the URL's signed docId "${signed}": nothing created`,
      );
    try {
      if (!NAME.test(docId))
        throw new ArchiveLinkError(STATUS.badRequest, `docId "${docId}" is not a document id this server stores`);
      await writer.create(contRep, docId, docProt, components);
      results.push({ docId, retCode: STATUS.created, description: '' });
    } catch (error) {
      if (parts.failure !== undefined) throw parts.failure;
      const status =
        error instanceof ArchiveLinkError && error.status === STATUS.exists ? STATUS.exists : STATUS.internal;
      if (status === STATUS.internal) log.error('document not created', { docId, contRep, error: String(error) });
      results.push({ docId, retCode: status, description: (error as Error).message });
    }
  }
  const codes = new Set(results.map((r) => r.retCode));
  const status = codes.has(STATUS.internal)
    ? STATUS.internal
    : codes.has(STATUS.exists)
      ? STATUS.missingCreated
      : STATUS.created;
  const body = results
    .map((r) =>
      asciiLine([
        ['docId', r.docId],
        ['retCode', String(r.retCode)],
        // Every line has its errorDescription, empty for a document created (the protocol's line format).
        ['errorDescription', r.description],
      ]),
    )
    .join('');
  sendText(res, status, body);
}

/** append: bytes added at the end of an existing component (404 when it does not exist). */
export async function append(context: DocumentContext): Promise<void> {
  const document = await addressedDocument(context);
  const compId = context.url.get('compId');
  const component = await context.documents.component(document, checkCompId(compId));
  await context.writer.append(document, component, context.req);
  sendText(context.res, STATUS.ok, '');
}

/** update: PUT replaces (or adds) one component; POST makes the document exactly the components sent. */
export async function update(context: DocumentContext): Promise<void> {
  const document = await addressedDocument(context);
  const { req, url, writer } = context;
  if (req.method === 'PUT') await writer.put(document, bodyComponent(req, url.get('compId')));
  else {
    const parts = new MultipartBody(req, context.maxPartBytes);
    await storing(parts, writer.replace(document, componentsOf(parts)));
  }
  sendText(context.res, STATUS.ok, '');
}

/** delete: one component, or the whole document without compId. */
export async function remove(context: DocumentContext): Promise<void> {
  const document = await addressedDocument(context);
  const compId = context.url.get('compId');
  const component = !compId ? undefined : await context.documents.component(document, compId);
  await context.writer.delete(document, component);
  sendText(context.res, STATUS.ok, '');
}
