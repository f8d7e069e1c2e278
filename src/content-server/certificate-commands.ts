import type { IncomingMessage } from 'node:http';
import type { ContentServerConnection } from '../config/content-server-schema.js';
import { contRepOf } from './documents/addressed.js';
import type { DocumentServices } from './documents/document-context.js';
import { asciiLine, sendText } from './protocol/answers.js';
import type { CommandRequest } from './protocol/command-request.js';
import { ArchiveLinkError, STATUS } from './protocol/protocol.js';
import type { ApprovedCertificates } from './signatures/approved-certificates.js';
import { readCertificateFile } from './signatures/certificate-file.js';
import type { CertificateStore } from './signatures/certificates.js';
import type { PutCertSources } from './signatures/put-cert-sources.js';

// The commands about SAP's certificates: putCert files one, getCert lists the active ones.

/** What one connection's certificate commands work with. */
export interface CertificateServices {
  connection: ContentServerConnection;
  certificates: CertificateStore;
  approved: ApprovedCertificates;
  /** Where putCert is taken from (the connection's putCertFrom), or undefined for anywhere. */
  putCertSources?: PutCertSources;
}

/** One request to a certificate command; the documents say which content repositories there are. */
export interface CertificateContext extends CertificateServices, CommandRequest, Pick<DocumentServices, 'documents'> {
  /** The largest certificate putCert takes. */
  maxCertificateBytes: number;
}

async function smallBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit)
      throw new ArchiveLinkError(STATUS.certificateNotRecognised, `the certificate is larger than ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * putCert: SAP's certificate, filed in the repository as pending. Nothing is signed here (§3),
 * so nothing it sends can approve, replace or revoke a certificate: that is an administrator's
 * `connect2erp certs`.
 */
export async function putCert(context: CertificateContext): Promise<void> {
  const { url, req, res, certificates, approved, connection, log, putCertSources } = context;
  const contRep = contRepOf(context);
  const authId = url.get('authId');
  if (!authId) throw new ArchiveLinkError(STATUS.badRequest, 'authId is missing');
  const remote = req.socket.remoteAddress;
  if (putCertSources !== undefined && !putCertSources.allows(remote))
    throw new ArchiveLinkError(
      STATUS.securityBreach,
      `putCert from ${String(remote)} refused: not an address of putCertFrom of connection ${connection.name}`,
    );
  const file = readCertificateFile(await smallBody(req, context.maxCertificateBytes));
  const { outcome, replaced } = await certificates.receive({ connection: connection.name, contRep, authId }, file);
  for (const gone of replaced)
    log.warn('pending certificate replaced by a newer filing', {
      connection: connection.name,
      contRep: gone.contRep,
      authId: gone.authId,
      subject: gone.subject,
      fingerprint: gone.fingerprint,
    });
  if (outcome === 'filed') approved.forget();
  log.warn(outcome === 'filed' ? 'certificate filed for approval' : 'certificate already filed', {
    connection: connection.name,
    contRep,
    authId,
    subject: file.subject,
    fingerprint: file.fingerprint,
  });
  sendText(res, STATUS.ok, '');
}

/**
 * getCert (pVersion 0046, for SAP's cache server; help.sap.com "Using the Cache Server with
 * Third-Party Content Servers"): whether signatures are checked (`security="1"`, or `"2"` when
 * off), then one line per active (approved, unexpired) certificate of the content repository.
 * The page names the keys Subject, Issuer, serialNumber, notBefore and notAfter, and says the
 * data putCert sent comes back in hexadecimal; the key of that data is not in the text we could
 * read, so it is sent as `certificate` (the certificate's DER, which putCert's body carried).
 * Unsigned: certificates are public.
 */
export async function getCert(context: CertificateContext): Promise<void> {
  const { connection, approved } = context;
  const contRep = contRepOf(context);
  const lines = [asciiLine([['security', connection.signatures === 'off' ? '2' : '1']])];
  for (const certificate of await approved.active(connection.name, contRep)) {
    const file = readCertificateFile(Buffer.from(certificate.pem));
    lines.push(
      asciiLine([
        ['Subject', file.subject],
        ['Issuer', file.issuer],
        ['serialNumber', file.serialNumber],
        ['notBefore', file.notBefore],
        ['notAfter', file.notAfter],
        ['certificate', file.der.toString('hex')],
      ]),
    );
  }
  sendText(context.res, STATUS.ok, lines.join(''));
}
