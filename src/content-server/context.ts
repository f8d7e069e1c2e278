import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ContentServerConnection } from '../config/content-server-schema.js';
import type { Logger } from '../log.js';
import type { AccessCheck } from './signatures/access.js';
import type { ApprovedCertificates } from './signatures/approved-certificates.js';
import type { ArchiveDocuments } from './documents/archive.js';
import type { ArchiveWriter } from './documents/archive-writer.js';
import type { CertificateStore } from './signatures/certificates.js';
import type { ArchiveLinkUrl } from './protocol/request-url.js';
import type { RepositoryHealth } from './repository-health.js';
import type { PutCertSources } from './signatures/put-cert-sources.js';

/** What one connection's commands work with. */
export interface ConnectionServices {
  connection: ContentServerConnection;
  documents: ArchiveDocuments;
  writer: ArchiveWriter;
  access: AccessCheck;
  certificates: CertificateStore;
  approved: ApprovedCertificates;
  health: RepositoryHealth;
  /** Where putCert is taken from (the connection's putCertFrom), or undefined for anywhere. */
  putCertSources?: PutCertSources;
}

/** One request to a command. */
export interface CommandContext extends ConnectionServices {
  url: ArchiveLinkUrl;
  req: IncomingMessage;
  res: ServerResponse;
  log: Logger;
  /** The largest certificate putCert takes. */
  maxCertificateBytes: number;
  /** The largest part of a multipart body (create POST, mCreate, update POST). */
  maxPartBytes: number;
}
