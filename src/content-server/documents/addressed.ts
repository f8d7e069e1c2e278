import type { ArchiveDocument } from './archive.js';
import type { DocumentContext } from './document-context.js';
import { ArchiveLinkError, STATUS } from '../protocol/protocol.js';

/** The URL's content repository, one this connection serves (404 otherwise). */
export function contRepOf(context: Pick<DocumentContext, 'url' | 'documents'>): string {
  const contRep = context.url.get('contRep');
  context.documents.repository(contRep);
  return contRep as string;
}

/**
 * The document the URL names, once the URL may do what it asks with it. The signature is checked
 * before "not found" is said, so unsigned callers learn nothing. `authorised` is called as soon as
 * the request is known to be allowed, before the document's metadata may be: the only moment work
 * on its content (a download) may start.
 */
export async function addressedDocument(
  context: DocumentContext,
  authorised: () => void = () => undefined,
): Promise<ArchiveDocument> {
  const { url, req, documents, access, connection } = context;
  const contRep = contRepOf(context);
  const docId = url.get('docId');
  if (!docId) throw new ArchiveLinkError(STATUS.badRequest, 'docId is missing');
  const method = req.method as string;
  const found = documents.find(contRep, docId);
  if (url.get('secKey') === undefined) {
    await access.require(url, method, (await found)?.docProt ?? connection.defaultProtection);
    authorised();
  } else {
    // A URL with a secKey is checked whatever the document's protection (access.ts), so it is
    // checked while the document is read. A refusal still waits for the read to end: a caller
    // sending bad signatures holds the repository no more than one read per request it has open.
    const [signature] = await Promise.allSettled([
      access.require(url, method, connection.defaultProtection).then(authorised),
      found,
    ]);
    // Before the repository's failure: a refused caller learns nothing of the repository.
    if (signature.status === 'rejected') throw signature.reason;
  }
  const document = await found;
  if (document === undefined) throw new ArchiveLinkError(STATUS.notFound, `document ${docId} not found`);
  return document;
}
