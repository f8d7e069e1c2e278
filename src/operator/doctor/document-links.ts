import { ANSWER_MAX_TEXT, readBounded } from '../../bounded-body.js';
import type { DocumentLinksConfig } from '../../config/erp-schema.js';
import { failureText } from '../../http-options.js';
import { signedLink } from '../../document-link.js';
import type { Section } from './check.js';
import { getOnce } from './get-once.js';
import { shortened } from '../../../common/quote.js';

/** serve's answers to a link it takes, to a document it does not have (content-server/documents/linked.ts). */
const SERVE_NOT_FOUND = /^(the document is no longer in the repository|content repository \S+ is not served here)$/;

/** How long serve has to answer: a check, not a download. */
const TIMEOUT_MS = 10_000;

/** A docId no document has: the link's answer tells the signature was taken without opening anything. */
const NO_DOCUMENT = 'connect2erp-doctor';

const ADVICE =
  'documentLinks.url in erpHttp.yaml must be serve\'s address, and its key one of documentLinks.keys of the connection in contentServer.yaml (docs/configuration.md, "Link by reference")';

/**
 * A system's links through `serve` (documentLinks via serve): a link to no document, signed with
 * the job's key, is answered "no such document" by a serve that takes the key, 403 by one that does
 * not, and otherwise by a server that is not serve. From
 * where doctor runs; whether users' browsers reach that address is for the pilot to show.
 */
export async function checkDocumentLinks(
  section: Section,
  system: string,
  links: Extract<DocumentLinksConfig, { via: 'serve' }>,
): Promise<void> {
  const names = { connection: system, contRep: 'Z1', docId: NO_DOCUMENT };
  const url = signedLink(links.url, links.key, names, Math.floor(Date.now() / 1000) + 300);
  await section.attempt(`documentLinks: serve at ${links.url}`, ADVICE, async () => {
    // A redirect is an answer too (undici follows none): serve never sends one for a link.
    const { statusCode, body } = await getOnce(new URL(url), TIMEOUT_MS, async (answer) => ({
      statusCode: answer.statusCode,
      body: await readBounded(answer.body),
    })).catch((error: unknown) => {
      throw new Error(`no answer: ${failureText(error as Error)}`);
    });
    const text = body === undefined ? `more than ${ANSWER_MAX_TEXT}` : body.toString('utf8').trim();
    if (statusCode === 404 && SERVE_NOT_FOUND.test(text))
      return section.pass(`documentLinks: serve at ${links.url} takes links signed with the job's key`);
    throw new Error(`a link signed with the job's key is answered HTTP ${statusCode}: ${shortened(text)}`);
  });
}
