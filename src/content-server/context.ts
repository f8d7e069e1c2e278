import type { CertificateContext, CertificateServices } from './certificate-commands.js';
import type { DocumentContext, DocumentServices } from './documents/document-context.js';

// The server's side of the contracts: each kind of command declares what it needs below it
// (documents/document-context.ts, certificate-commands.ts), and the server gives each all of it.

/** What one connection's commands work with. */
export interface ConnectionServices extends DocumentServices, CertificateServices {}

/** One request to a command. */
export interface CommandContext extends DocumentContext, CertificateContext {}
