import { createHash, X509Certificate } from 'node:crypto';
import * as pkijs from 'pkijs';
import { ArchiveLinkError, STATUS } from './protocol.js';

/** A certificate as putCert brought it, read. */
export interface CertificateFile {
  der: Buffer;
  pem: string;
  subject: string;
  issuer: string;
  serialNumber: string;
  /** SHA-256 of the DER, hex, upper case (as `openssl x509 -fingerprint -sha256` prints, without colons). */
  fingerprint: string;
  notAfter: string;
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/;
const BASE64_TEXT = /^[A-Za-z0-9+/=\s]+$/;

/** The DER inside a PEM block or base64 text; binary bodies as they are. */
function unwrap(body: Buffer): Buffer {
  const text = body.toString('latin1');
  const block = PEM_BLOCK.exec(text);
  if (block) return Buffer.from(block[2], 'base64');
  return BASE64_TEXT.test(text) ? Buffer.from(text, 'base64') : body;
}

/** The first certificate of a PKCS#7 structure (what SAP's SSF may send instead of the bare certificate, §3). */
function fromPkcs7(der: Buffer): Buffer | undefined {
  try {
    const info = pkijs.ContentInfo.fromBER(der);
    const certificate = new pkijs.SignedData({ schema: info.content }).certificates?.find(
      (c): c is pkijs.Certificate => c instanceof pkijs.Certificate,
    );
    return certificate === undefined ? undefined : Buffer.from(certificate.toSchema().toBER());
  } catch {
    return undefined;
  }
}

function x509(der: Buffer): X509Certificate | undefined {
  try {
    return new X509Certificate(der);
  } catch {
    return undefined;
  }
}

/**
 * A putCert body: an X.509 certificate (DER or PEM) or a PKCS#7 structure carrying one (DER, PEM
 * or base64). Anything else is 406, certificate not recognised.
 */
export function readCertificateFile(body: Buffer): CertificateFile {
  const raw = unwrap(body);
  const direct = x509(raw);
  const der = direct === undefined ? fromPkcs7(raw) : raw;
  const certificate = direct ?? (der === undefined ? undefined : x509(der));
  if (certificate === undefined || der === undefined)
    throw new ArchiveLinkError(
      STATUS.certificateNotRecognised,
      'the body is neither an X.509 certificate nor a PKCS#7 structure carrying one',
    );
  return {
    der,
    pem: certificate.toString(),
    subject: certificate.subject.split('\n').join(', '),
    issuer: certificate.issuer.split('\n').join(', '),
    serialNumber: certificate.serialNumber,
    fingerprint: createHash('sha256').update(der).digest('hex').toUpperCase(),
    notAfter: new Date(certificate.validTo).toISOString(),
  };
}
