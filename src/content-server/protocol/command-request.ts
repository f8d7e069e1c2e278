import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../log.js';
import type { ArchiveLinkUrl } from './request-url.js';

/** One request to a command, as every command is given it. */
export interface CommandRequest {
  url: ArchiveLinkUrl;
  req: IncomingMessage;
  res: ServerResponse;
  log: Logger;
}
