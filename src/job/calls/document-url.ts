import type { DocumentLinksConfig } from '../../config/erp-schema.js';
import { documentLinkPath, signedLink } from '../../document-link.js';
import { registerSecret } from '../../log.js';
import type { RepositoryDocument } from '../../repository/document.js';

/** A document's address for a URL attachment: what SAP users open, and what stays the same at every attempt. */
export interface DocumentUrls {
  open(doc: RepositoryDocument): string;
  stable(doc: RepositoryDocument): string;
}

const DAY_MS = 86_400_000;

/** An ArchiveLink key of the document, which serve finds it by: a link task's documents are ready only with both. */
const key = (doc: RepositoryDocument, property: string): string => String(doc.properties[property]);

/**
 * The addresses of a system's `documentLinks`: a serve link signed until `validityDays` from now
 * (erpHttp.yaml), or the document in Web UI. Undefined when the system has none.
 */
export function documentUrls(
  system: string,
  links: DocumentLinksConfig | undefined,
  now: () => Date,
): DocumentUrls | undefined {
  if (links === undefined) return undefined;
  const base = links.url.replace(/\/+$/, '');
  if (links.via === 'webui') {
    const url = (doc: RepositoryDocument): string => `${base}/#!/doc/${encodeURIComponent(doc.uid)}`;
    return { open: url, stable: url };
  }
  registerSecret(links.key);
  const names = (doc: RepositoryDocument) => ({
    connection: system,
    contRep: key(doc, 'erpHttpContent:archiveId'),
    docId: key(doc, 'erpHttpContent:docId'),
  });
  return {
    open: (doc) =>
      signedLink(base, links.key, names(doc), Math.floor((now().getTime() + links.validityDays * DAY_MS) / 1000)),
    stable: (doc) => {
      const { connection, contRep, docId } = names(doc);
      return `${base}${documentLinkPath(connection, contRep, docId)}?`;
    },
  };
}
