import type { ContentServerConnection } from '../../config/content-server-schema.js';
import type { RepositoryHealth } from '../repository-health.js';
import type { CommandRequest } from '../protocol/command-request.js';
import type { AccessCheck } from '../signatures/access.js';
import type { ArchiveDocuments } from './archive.js';
import type { ArchiveWriter } from './archive-writer.js';

/** What one connection's document commands, and its document links, work with. */
export interface DocumentServices {
  connection: ContentServerConnection;
  documents: ArchiveDocuments;
  writer: ArchiveWriter;
  access: AccessCheck;
  health: RepositoryHealth;
}

/** One request to a document command. */
export interface DocumentContext extends DocumentServices, CommandRequest {
  /** The largest part of a multipart body (create POST, mCreate, update POST). */
  maxPartBytes: number;
}
