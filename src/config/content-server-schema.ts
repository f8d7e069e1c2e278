import { z } from 'zod';
import { httpUrl, repositoryAuthSchema } from './common-schema.js';
import { isIP } from 'node:net';

/**
 * A content repository id as OAC0 names it (table CREP, field CREP_ID, domain SCMS_CREP: CHAR 30):
 * ArchiveLink's are two characters (ARCHIV_ID), KPro's and DMS's longer (`MIME`, `ZDMS_2017`).
 * Upper-case letters, digits and `_`, as SAP keeps them; the stricter reading where SAP's
 * documentation lists no characters.
 */
const contRep = z
  .string()
  .regex(/^[A-Z0-9_]{2,30}$/, 'must be a content repository id of OAC0: 2 to 30 of A-Z, 0-9 and "_", e.g. "Z1"');

/** Access modes a document may be protected for (SAP: r read, c create, u update, d delete). */
const protection = z.string().regex(/^[rcud]*$/, 'must be letters among r, c, u and d');

const contentRepository = z.strictObject({
  contRep,
  /** Folder where documents SAP stores (create, mCreate) land, one folder per content repository. */
  storagePath: z.string().regex(/^\/\S*$/, 'must be an absolute repository path'),
  /** What `delete` does to a document or component: put it in the trash (default) or delete it for good. */
  onDelete: z.enum(['trash', 'remove']).default('trash'),
  /**
   * Digests of the 4.5 interface accepted in this repository's secKeys besides SHA-1 and SHA-2,
   * for systems that still sign with them (logged at every start): `md5`, `ripemd160`.
   */
  legacyDigests: z.array(z.enum(['md5', 'ripemd160'])).default([]),
});

const connection = z.strictObject({
  /**
   * The last segment of the HTTP script entered in OAC0 (`/archivelink/S4H`), and the value
   * documents carry in `erpHttpContent:source`: an ERP system of erpHttp.yaml.
   */
  name: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'must be letters, digits, "_", "." or "-" (a URL path segment)'),
  /** The repository account this connection reads and writes with (not the job's). */
  repositoryAuth: repositoryAuthSchema,
  contentRepositories: z.array(contentRepository).min(1),
  /**
   * `required` (default): every command but serverInfo and putCert carries a secKey signed by an
   * approved certificate, unless the document was stored with an empty docProt. `off` accepts
   * unsigned URLs; it is logged at every start.
   */
  signatures: z.enum(['required', 'off']).default('required'),
  /**
   * Repository requests in flight for this connection (storage.yaml's `maxConcurrentRequests` is the
   * job's). A get costs two at once (the document and its content), held until the content begins.
   */
  maxConcurrentRequests: z.number().int().min(1).max(512).default(64),
  /** The protection of documents that have no docProt of their own (the job's documents). */
  defaultProtection: protection.default('rcud'),
  /**
   * Links the job put into SAP as URL attachments (erpHttp.yaml's `documentLinks`, via `serve`) are
   * opened when signed with one of these keys: the system's key, and an earlier one while its links
   * should still open.
   */
  documentLinks: z.strictObject({ keys: z.array(z.string().min(32)).min(1) }).optional(),
  /**
   * The addresses or subnets putCert is taken from (SAP's application servers), or anywhere when
   * not given: putCert is unsigned by the protocol. The address the server sees, a proxy's behind one.
   */
  putCertFrom: z
    .array(z.string().refine(addressOrSubnet, 'an IP address or subnet, e.g. 10.20.0.0/16 or fd00::5'))
    .min(1)
    .optional(),
});

/** An address (`10.1.2.3`, `fd00::1`) or a subnet (`10.1.0.0/16`), as `putCertFrom` lists them. */
function addressOrSubnet(text: string): boolean {
  const [address, prefix, ...rest] = text.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
}

/** `config/contentServer.yaml`: `connect2erp serve`, SAP's ArchiveLink HTTP content server. */
export const contentServerSchema = z.strictObject({
  listen: z
    .strictObject({
      host: z.string().min(1).default('0.0.0.0'),
      /** 0 takes any free port (tests). */
      port: z.number().int().min(0).max(65_535).default(8090),
    })
    .prefault({}),
  /** The path before the connection name: OAC0's HTTP script is `<pathPrefix>/<connection name>`. */
  pathPrefix: z
    .string()
    .regex(/^(\/[A-Za-z0-9_.-]+)*$/, 'must be empty or start with "/", e.g. /archivelink')
    .refine((prefix) => !`${prefix}/`.startsWith('/documents/'), {
      message: 'must not be /documents: serve answers document links there',
    })
    .default('/archivelink'),
  /**
   * The address SAP calls, as OAC0 gives it (scheme, host, port: `https://archivelink.example.com`);
   * `connect2erp doctor` calls serverInfo there. Optional: nothing else reads it.
   */
  publicUrl: httpUrl.optional(),
  /**
   * Answer `/metrics` (Prometheus text: requests per command and status, bytes, refusals for
   * security, the repository's latency, the process's memory and CPU). Counts only, no document
   * names; turn it off where SAP's network must not read even those.
   */
  metrics: z.boolean().default(true),
  /**
   * Pages of these origins may read answers in the browser (CORS), e.g. a Fiori launchpad that
   * opens attachments: `https://fiori.example.com`. None by default.
   */
  corsOrigins: z
    .array(
      z.string().regex(/^https?:\/\/[^/\s]+$/, 'must be an origin: scheme and host, e.g. https://fiori.example.com'),
    )
    .default([]),
  /**
   * Requests taken at once; more are answered 503 with Retry-After, so that a burst cannot exhaust
   * the pod's memory or the repository's connections (whether SAP then retries is not documented).
   */
  maxRequestsInFlight: z.number().int().min(1).default(256),
  /** Serve HTTPS with this key and certificate (PEM files); leave out when TLS ends at the ingress. */
  tls: z.strictObject({ certFile: z.string().min(1), keyFile: z.string().min(1) }).optional(),
  /**
   * After SIGTERM, how long readiness answers 503 while requests are still taken (Kubernetes
   * removes the pod from the Service meanwhile); a second signal ends it at once.
   */
  drainSeconds: z.number().int().min(0).max(300).default(5),
  /** How far SAP's clock may be ahead of this server's when an URL's `expiration` is checked. */
  clockSkewSeconds: z.number().int().min(0).max(3_600).default(300),
  /** How long a list of approved certificates read from the repository is used before it is read again. */
  certificateRefreshSeconds: z.number().int().min(0).max(3_600).default(30),
  /**
   * A create of a docId whose earlier create never completed clears it once it is this old; a
   * younger one may still be uploading, and the new create is refused with 409 meanwhile.
   */
  staleCreateSeconds: z.number().int().min(0).default(900),
  /** The longest a request may take, its body included (a large document stored over a slow line). */
  requestTimeoutSeconds: z.number().int().min(1).default(3_600),
  /**
   * After a request is refused while its body is still coming, how long the rest is read and
   * dropped before the connection closes (nginx's lingering close): a connection closed on unread
   * bytes is reset, and the reset can reach SAP before the answer does.
   */
  lingerSeconds: z.number().int().min(0).max(300).default(30),
  /**
   * putCert is unsigned: at most this many certificates per content repository wait for approval;
   * a new filing replaces the oldest waiting one, so that SAP's own always lands.
   */
  maxPendingCertificates: z.number().int().min(1).default(10),
  /** The largest certificate `putCert` accepts. */
  maxCertificateBytes: z.number().int().min(1_024).default(65_536),
  /**
   * The largest component of a multipart request (create POST, mCreate, update POST); parts stream
   * to the repository as they come, so this bounds what one request stores, not memory.
   */
  maxPartBytes: z.number().int().min(1_024).default(268_435_456),
  connections: z.array(connection).min(1),
});

export type ContentServerConfig = z.infer<typeof contentServerSchema>;
export type ContentServerConnection = ContentServerConfig['connections'][number];
export type ContentRepositoryConfig = ContentServerConnection['contentRepositories'][number];
