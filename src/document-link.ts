import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * A link to one document that `connect2erp serve` opens without a sign-in, as SAP users follow a
 * URL attachment (the attachment service's CreateUrlAsAttachment): the job signs it with a key it
 * shares with the content server, for a time. The path names the document as ArchiveLink does
 * (connection, content repository, docId); the query says until when, and the signature covers
 * both, so that neither another document nor a later time can be put in without the key.
 */

/** Where serve answers these links, outside ArchiveLink's `pathPrefix`. */
export const DOCUMENT_LINK_ROOT = '/documents';

/** `/documents/<connection>/<contRep>/<docId>`, each segment percent-encoded. */
export function documentLinkPath(connection: string, contRep: string, docId: string): string {
  return [DOCUMENT_LINK_ROOT, connection, contRep, docId]
    .map((part, i) => (i === 0 ? part : encodeURIComponent(part)))
    .join('/');
}

/** HMAC-SHA256 over the path and the expiry (seconds since 1970), base64url. */
function signature(key: string, path: string, expires: string): Buffer {
  return createHmac('sha256', key).update(`${path}\n${expires}`).digest();
}

/** `expires=…&signature=…` for a link valid until `expires` (seconds since 1970). */
export function signedQuery(key: string, path: string, expires: number): string {
  return `expires=${expires}&signature=${signature(key, path, String(expires)).toString('base64url')}`;
}

/** The whole link to a document: serve's address `base`, the document's path, signed with `key` until `expires` (seconds). */
export function signedLink(
  base: string,
  key: string,
  names: { connection: string; contRep: string; docId: string },
  expires: number,
): string {
  const path = documentLinkPath(names.connection, names.contRep, names.docId);
  return `${base.replace(/\/+$/, '')}${path}?${signedQuery(key, path, expires)}`;
}

/** Why a link is not honoured, in words for the page its user sees; undefined when it is. */
export function linkRefusal(
  keys: readonly string[],
  path: string,
  query: URLSearchParams,
  now: Date,
): string | undefined {
  const expires = query.get('expires') ?? '';
  const given = Buffer.from(query.get('signature') ?? '', 'base64url');
  if (!/^\d{1,12}$/.test(expires)) return 'the link has no valid expiry';
  const signed = keys.some((key) => {
    const wanted = signature(key, path, expires);
    return given.length === wanted.length && timingSafeEqual(given, wanted);
  });
  if (!signed) return "the link is not signed with this content server's key";
  return Number(expires) * 1000 < now.getTime() ? 'the link has expired' : undefined;
}

/**
 * A text with every link's signature masked (`signature=***`, percent-encoded or not): a signed
 * link opens its document to whoever holds it, so messages, logs and dry-run plans never show one.
 */
export const withoutSignature = (text: string): string => text.replace(/(signature(?:=|%3D))[A-Za-z0-9_-]+/gi, '$1***');
