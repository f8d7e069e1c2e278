import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { isMultipartRequest, parseMultipartRequest, type MultipartPart } from '@remix-run/multipart-parser/node';
import { asciiLine, sendText } from './answers.js';
import { NAME } from './archive.js';
import { checkCompId, type IncomingComponent } from './archive-writer.js';
import { readCertificateFile } from './certificate-file.js';
import { addressedDocument, contRepOf } from './addressed.js';
import type { CommandContext } from './context.js';
import { ArchiveLinkError, STATUS } from './protocol.js';

/** The media type of a Content-Type (`application/pdf; charset=; version=6`, SAP's empty charset included). */
const mediaType = (contentType: string | undefined): string =>
  contentType?.split(';')[0].trim().toLowerCase() || 'application/octet-stream';

function docIdOf(context: CommandContext): string {
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
function docProtOf(context: CommandContext): string {
  const docProt = context.url.get('docProt') ?? context.connection.defaultProtection;
  if (!/^[rcud]*$/.test(docProt))
    throw new ArchiveLinkError(STATUS.badRequest, `docProt "${docProt}" is not letters among r, c, u and d`);
  return docProt;
}

/** Multipart bodies are read part by part; each part is held while it is stored (see README, "Content server"). */
async function* partsOf(context: CommandContext): AsyncGenerator<MultipartPart> {
  if (!isMultipartRequest(context.req))
    throw new ArchiveLinkError(STATUS.badRequest, 'a POST carries its components as multipart/form-data');
  try {
    yield* parseMultipartRequest(context.req, {
      maxFileSize: context.maxPartBytes,
      // Parts are stored one after the other and let go: only one part's size is held at a time.
      maxTotalSize: Number.MAX_SAFE_INTEGER,
      maxHeaderSize: 16_384,
    });
  } catch (error) {
    // A malformed or oversized body (MultipartParseError), or one cut off: the request is refused either way.
    throw new ArchiveLinkError(STATUS.badRequest, `multipart body: ${(error as Error).message}`);
  }
}

/** The component of a part: its id from X-compId (or, failing that, the Content-Disposition name, as Lamiv reads it). */
function componentOf(part: MultipartPart): IncomingComponent {
  return {
    // Checked where its document is stored: in mCreate, a bad one is that document's failure only.
    compId: part.headers['x-compid'] ?? part.name,
    mimeType: mediaType(part.headers['content-type']),
    body: Readable.from([Buffer.from(part.bytes)]),
  };
}

async function* componentsOf(context: CommandContext): AsyncGenerator<IncomingComponent> {
  for await (const part of partsOf(context)) yield componentOf(part);
}

/** The one component of a PUT: the request's body, of the request's Content-Type. */
function bodyComponent(req: IncomingMessage, compId: string | undefined): IncomingComponent {
  return { compId: checkCompId(compId), mimeType: mediaType(req.headers['content-type']), body: req };
}

/** create: PUT with one component, or POST with any number; 201, or 403 when the document exists. */
export async function create(context: CommandContext): Promise<void> {
  const { url, req, res, writer, access, connection } = context;
  const contRep = contRepOf(context);
  // There is no document yet: the server's default protection says whether creating needs a signature.
  await access.require(url, req.method as string, connection.defaultProtection);
  const docId = docIdOf(context);
  const components =
    req.method === 'PUT'
      ? (async function* () {
          yield bodyComponent(req, url.get('compId'));
        })()
      : componentsOf(context);
  await writer.create(contRep, docId, docProtOf(context), components);
  sendText(res, STATUS.created, '', { 'X-docId': docId });
}

/**
 * mCreate: several documents in one multipart body, the parts of each one after the other,
 * each with X-docId and X-compId. Each document is created or not on its own; the answer lists
 * them, 201 when all were created, 250 when the others existed already, 500 when one failed.
 *
 * The URL carries the first document's docId, and the signature covers it
 * (../shared/reference/sap-interfaces.md §3, the commands' table: "first docId also in the URL
 * (signed)"); the others ride on it, as the protocol has it. The safe reading taken: the body must
 * begin with the signed document, or nothing is created (401), so that a signed URL never creates
 * only documents it does not name.
 */
export async function mCreate(context: CommandContext): Promise<void> {
  const { url, req, res, writer, access, connection, log } = context;
  const contRep = contRepOf(context);
  await access.require(url, req.method as string, connection.defaultProtection);
  const signed = docIdOf(context);
  const docProt = docProtOf(context);
  const results: Array<{ docId: string; retCode: number; description: string }> = [];
  let current: { docId: string; parts: IncomingComponent[] } | undefined;
  const flush = async (): Promise<void> => {
    if (current === undefined) return;
    const { docId, parts } = current;
    current = undefined;
    try {
      if (!NAME.test(docId))
        throw new ArchiveLinkError(STATUS.badRequest, `docId "${docId}" is not a document id this server stores`);
      await writer.create(contRep, docId, docProt, Readable.from(parts));
      results.push({ docId, retCode: STATUS.created, description: '' });
    } catch (error) {
      const status =
        error instanceof ArchiveLinkError && error.status === STATUS.exists ? STATUS.exists : STATUS.internal;
      if (status === STATUS.internal) log.error('document not created', { docId, contRep, error: String(error) });
      results.push({ docId, retCode: status, description: (error as Error).message });
    }
  };
  for await (const part of partsOf(context)) {
    const docId = part.headers['x-docid'];
    if (docId === undefined) throw new ArchiveLinkError(STATUS.badRequest, 'a part of mCreate has no X-docId');
    if (results.length === 0 && current === undefined && docId !== signed)
      throw new ArchiveLinkError(
        STATUS.securityBreach,
        `the first document of mCreate is "${docId}", not the URL's signed docId "${signed}": nothing created`,
      );
    if (current?.docId !== docId) await flush();
    current ??= { docId, parts: [] };
    current.parts.push(componentOf(part));
  }
  await flush();
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
export async function append(context: CommandContext): Promise<void> {
  const document = await addressedDocument(context);
  const compId = context.url.get('compId');
  const component = await context.documents.component(document, checkCompId(compId));
  await context.writer.append(document, component, context.req);
  sendText(context.res, STATUS.ok, '');
}

/** update: PUT replaces (or adds) one component; POST makes the document exactly the components sent. */
export async function update(context: CommandContext): Promise<void> {
  const document = await addressedDocument(context);
  const { req, url, writer } = context;
  if (req.method === 'PUT') await writer.put(document, bodyComponent(req, url.get('compId')));
  else await writer.replace(document, componentsOf(context));
  sendText(context.res, STATUS.ok, '');
}

/** delete: one component, or the whole document without compId. */
export async function remove(context: CommandContext): Promise<void> {
  const document = await addressedDocument(context);
  const compId = context.url.get('compId');
  const component = !compId ? undefined : await context.documents.component(document, compId);
  await context.writer.delete(document, component);
  sendText(context.res, STATUS.ok, '');
}

async function smallBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit)
      throw new ArchiveLinkError(STATUS.certificateNotRecognised, `the certificate is larger than ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * putCert: SAP's certificate, filed in the repository as pending. Nothing is signed here (§3),
 * so nothing it sends can approve, replace or revoke a certificate: that is an administrator's
 * `connect2erp certs`.
 */
export async function putCert(context: CommandContext): Promise<void> {
  const { url, req, res, certificates, approved, connection, log, putCertSources } = context;
  const contRep = contRepOf(context);
  const authId = url.get('authId');
  if (!authId) throw new ArchiveLinkError(STATUS.badRequest, 'authId is missing');
  const remote = req.socket.remoteAddress;
  if (putCertSources !== undefined && !putCertSources.allows(remote))
    throw new ArchiveLinkError(
      STATUS.securityBreach,
      `putCert from ${String(remote)} refused: not an address of putCertFrom of connection ${connection.name}`,
    );
  const file = readCertificateFile(await smallBody(req, context.maxCertificateBytes));
  const { outcome, replaced } = await certificates.receive({ connection: connection.name, contRep, authId }, file);
  for (const gone of replaced)
    log.warn('pending certificate replaced by a newer filing', {
      connection: connection.name,
      contRep: gone.contRep,
      authId: gone.authId,
      subject: gone.subject,
      fingerprint: gone.fingerprint,
    });
  if (outcome === 'filed') approved.forget();
  log.warn(outcome === 'filed' ? 'certificate filed for approval' : 'certificate already filed', {
    connection: connection.name,
    contRep,
    authId,
    subject: file.subject,
    fingerprint: file.fingerprint,
  });
  sendText(res, STATUS.ok, '');
}
