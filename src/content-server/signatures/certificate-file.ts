import { createHash, X509Certificate } from 'node:crypto';
import { childrenOf, expect, octetsOf, oidOf, readAsn, TAG, type Element } from './asn1.js';
import { ArchiveLinkError, STATUS } from '../protocol/protocol.js';
import { signedDataFields, type CertificateIdentity } from './signature.js';

/** A certificate as putCert brought it, read. */
export interface CertificateFile {
  der: Buffer;
  pem: string;
  subject: string;
  issuer: string;
  serialNumber: string;
  /** SHA-256 of the DER, hex, upper case (as `openssl x509 -fingerprint -sha256` prints, without colons). */
  fingerprint: string;
  /** Validity, ISO 8601 UTC. */
  notBefore: string;
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

/**
 * The first certificate of a PKCS#7 structure (what SAP's SSF may send instead of the bare
 * certificate, §3): SignedData's `[0] IMPLICIT certificates`, after its encapsulated content.
 */
function fromPkcs7(der: Buffer): Buffer | undefined {
  try {
    const certificates = signedDataFields(der)[3];
    if (certificates.tag !== TAG.context(0)) return undefined;
    return childrenOf(certificates, TAG.context(0), 'the certificates').find((c) => c.tag === TAG.sequence)?.bytes;
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
    notBefore: isoTime(certificate.validFrom),
    notAfter: isoTime(certificate.validTo),
  };
}

/**
 * A validity time as ISO 8601. OpenSSL accepts times it cannot print (a NUL among a UTCTime's
 * digits comes out as "Bad time value"), of which Date makes nothing: putCert answered 500 then.
 */
function isoTime(text: string): string {
  const time = new Date(text);
  if (Number.isNaN(time.getTime()))
    throw new ArchiveLinkError(STATUS.certificateNotRecognised, `the certificate's validity is no time (${text})`);
  return time.toISOString();
}

const SUBJECT_KEY_IDENTIFIER = '2.5.29.14';

/** The names a signer may give a certificate, read from its DER (RFC 5280 §4.1). */
export function identityOf(der: Buffer): CertificateIdentity {
  const [tbs] = childrenOf(readAsn(der), TAG.sequence, 'the certificate');
  const fields = childrenOf(tbs, TAG.sequence, 'the certificate body');
  // version is [0] EXPLICIT, absent from a v1 certificate; then serialNumber, signature, issuer.
  const [serial, , issuer] = fields[0]?.tag === TAG.context(0) ? fields.slice(1) : fields;
  const extensions = fields.find((f) => f.tag === TAG.context(3));
  return {
    issuer: expect(issuer, TAG.sequence, 'the issuer').bytes,
    serialNumber: expect(serial, TAG.integer, 'the serial number').value,
    keyId: extensions === undefined ? undefined : keyIdOf(extensions),
  };
}

/** The subjectKeyIdentifier among the extensions: an OCTET STRING inside the extension's value. */
function keyIdOf(extensions: Element): Buffer | undefined {
  const [list] = childrenOf(extensions, TAG.context(3), 'the extensions');
  for (const extension of childrenOf(list, TAG.sequence, 'the extensions')) {
    const fields = childrenOf(extension, TAG.sequence, 'an extension');
    if (oidOf(fields[0], 'an extension id') !== SUBJECT_KEY_IDENTIFIER) continue;
    const value = octetsOf(fields[fields.length - 1], 'an extension value');
    return octetsOf(readAsn(value), 'the subject key identifier');
  }
  return undefined;
}
