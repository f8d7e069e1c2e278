import { z } from 'zod';
import { httpUrl, proxySchema, repositoryAuthSchema, timeoutsSchema, tlsSchema } from './common-schema.js';

/** `config/storage.yaml`: how to reach the content repository. */
export const storageSchema = z.strictObject({
  /** Base URL of the server, e.g. `https://nuxeo.example.com/nuxeo`. */
  url: httpUrl,
  apiPath: z.string().startsWith('/').default('/api/v1'),
  /**
   * Web UI as users open it, for the links of reports (e.g. `https://ecm.example.com/nuxeo/ui`):
   * in Kubernetes `url` is often an address only the cluster reaches. Default: `url` + `/ui`.
   */
  webUiUrl: httpUrl.optional(),
  auth: repositoryAuthSchema,
  /** Folder holding the mapping file (spec §2.1). */
  adminPath: z.string().regex(/^\/\S*$/, 'must be an absolute repository path'),
  /** Principals allowed to read the mapping file; anyone else is reported (spec §5.2). */
  administrators: z.array(z.string().min(1)).min(1).default(['Administrator', 'administrators']),
  tls: tlsSchema,
  timeouts: timeoutsSchema,
  proxy: proxySchema,
  maxConcurrentRequests: z.number().int().min(1).max(64).default(8),
  pageSize: z.number().int().min(1).max(1000).default(100),
  /** Transient failures (connection errors, 429, 502/503/504) are retried this often… */
  retries: z.number().int().min(0).max(10).default(3),
  /** …waiting up to this long (a random part of it), doubled at each try, unless the server sends Retry-After. */
  retryDelayMs: z.number().int().min(0).max(60_000).default(1_000),
  /**
   * A run labelling a file with its archive-link folder claims the file first, so that an
   * overlapping run does not create a second folder; after this long another run takes over.
   */
  intakeClaimTimeoutMs: z.number().int().min(1).default(600_000),
  /**
   * The intake hands each document it labels READY to the tasks at once, so that documents reach
   * SAP from the first page; it labels no further ahead than this many documents not yet settled.
   */
  intakeRoundSize: z.number().int().min(1).default(1_000),
});

export type StorageConfig = z.infer<typeof storageSchema>;
