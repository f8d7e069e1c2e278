import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ContentServerConnection } from '../config/content-server-schema.js';
import type { Logger } from '../log.js';
import type { AccessCheck } from './access.js';
import type { ApprovedCertificates } from './approved-certificates.js';
import type { ArchiveDocuments } from './archive.js';
import type { ArchiveWriter } from './archive-writer.js';
import type { CertificateStore } from './certificates.js';
import type { ArchiveLinkUrl } from './request-url.js';
import type { RepositoryHealth } from './repository-health.js';

/** What one connection's commands work with. */
export interface ConnectionServices {
  connection: ContentServerConnection;
  documents: ArchiveDocuments;
  writer: ArchiveWriter;
  access: AccessCheck;
  certificates: CertificateStore;
  approved: ApprovedCertificates;
  health: RepositoryHealth;
}

/** One request to a command. */
export interface CommandContext extends ConnectionServices {
  url: ArchiveLinkUrl;
  req: IncomingMessage;
  res: ServerResponse;
  log: Logger;
  /** The largest certificate putCert takes. */
  maxCertificateBytes: number;
  /** The largest part of a multipart body (create POST, mCreate, update POST), held while it is stored. */
  maxPartBytes: number;
}
