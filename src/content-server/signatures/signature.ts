import { createHash, verify, type KeyObject } from 'node:crypto';
import { AsnError, childrenOf, expect, octetsOf, oidOf, readAsn, TAG, type Element } from './asn1.js';

/** How a CMS signer names a certificate (RFC 5652 §5.3): issuer and serial number, or key id. */
export interface CertificateIdentity {
  /** The issuer's Name, DER, compared byte for byte: SAP copies it from the certificate it signs with. */
  issuer: Buffer;
  /** The serial number's INTEGER contents. */
  serialNumber: Buffer;
  /** The subject key identifier extension's value, when the certificate has one. */
  keyId?: Buffer;
}

/** A certificate an administrator approved, ready to check signatures with. */
export interface TrustedCertificate extends CertificateIdentity {
  publicKey: KeyObject;
  fingerprint: string;
}

const SIGNED_DATA = '1.2.840.113549.1.7.2';
/** id-data, 1.2.840.113549.1.7.1, as its OBJECT IDENTIFIER contents: compared without decoding. */
const ID_DATA = Buffer.from('2a864886f70d010701', 'hex');
const CONTENT_TYPE_ATTRIBUTE = '1.2.840.113549.1.9.3';
const MESSAGE_DIGEST_ATTRIBUTE = '1.2.840.113549.1.9.4';

/** The digests always accepted: SHA-1 (SAP's default with DSA, §3) and SHA-2. */
const DIGESTS: Record<string, string> = {
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};

/**
 * The digests the 4.5 interface also allows (§3: "MD5 or RIPEMD-160"), accepted only for a content
 * repository whose `legacyDigests` names them: MD5 is broken, and most systems sign with SHA-1.
 */
const LEGACY_DIGESTS = { md5: '1.2.840.113549.2.5', ripemd160: '1.3.36.3.2.1' } as const;
type LegacyDigest = keyof typeof LEGACY_DIGESTS;

const digestOf = (oid: string, legacy: readonly LegacyDigest[]): string | undefined =>
  DIGESTS[oid] ?? legacy.find((name) => LEGACY_DIGESTS[name] === oid);

/** What a SignerInfo says (RFC 5652 §5.3), as far as checking it needs. */
export interface Signer {
  sid: { issuer: Buffer; serialNumber: Buffer } | { keyId: Buffer };
  digest: string;
  signedAttrs?: SignedAttributes;
  signature: Buffer;
}

/** The signed attributes as encoded, and the first value of each, by type. */
export interface SignedAttributes {
  bytes: Buffer;
  values: Map<string, Element | undefined>;
}

/** A SignedData (RFC 5652 §5.1): the content it carries, if any, and its signers. */
export interface SignedData {
  content?: Buffer;
  signers: Signer[];
}

/** The fields of the SignedData inside a ContentInfo (RFC 5652 §3, §5.1). */
export function signedDataFields(der: Buffer): Element[] {
  const [type, explicit] = childrenOf(readAsn(der), TAG.sequence, 'the ContentInfo');
  if (oidOf(type, 'the content type') !== SIGNED_DATA) throw new AsnError('not a PKCS#7 SignedData');
  const [signedData] = childrenOf(explicit, TAG.context(0), 'the content');
  const fields = childrenOf(signedData, TAG.sequence, 'the SignedData');
  if (fields.length < 4) throw new AsnError('the SignedData is cut short');
  return fields;
}

/** What a secKey says; exported for the fuzz test, which compares it with a general CMS parser's reading. */
export function readSignedData(der: Buffer): SignedData {
  // version, digestAlgorithms, encapContentInfo, [0] certificates, [1] crls, signerInfos.
  const fields = signedDataFields(der);
  const [, eContent] = childrenOf(fields[2], TAG.sequence, 'the encapsulated content');
  const content =
    eContent === undefined
      ? undefined
      : octetsOf(childrenOf(eContent, TAG.context(0), 'the content')[0], 'the content');
  const signerInfos = childrenOf(fields[fields.length - 1], TAG.set, 'the signerInfos');
  return { content, signers: signerInfos.map(readSigner) };
}

function readSigner(info: Element): Signer {
  // version, sid, digestAlgorithm, [0] signedAttrs, signatureAlgorithm, signature, [1] unsignedAttrs.
  const fields = childrenOf(info, TAG.sequence, 'a SignerInfo');
  const [, sid, digestAlgorithm] = fields;
  const attributes = fields[3]?.tag === TAG.context(0) ? fields[3] : undefined;
  const [, signature] = fields.slice(attributes === undefined ? 3 : 4);
  return {
    sid: signerId(sid),
    digest: oidOf(childrenOf(digestAlgorithm, TAG.sequence, 'the digest algorithm')[0], 'the digest algorithm'),
    signedAttrs: attributes === undefined ? undefined : readAttributes(attributes),
    signature: octetsOf(signature, 'the signature'),
  };
}

/** sid: issuer and serial number, or [0] a subject key identifier. */
function signerId(sid: Element | undefined): Signer['sid'] {
  if (sid?.tag === TAG.implicit(0)) return { keyId: sid.value };
  const [issuer, serial] = childrenOf(sid, TAG.sequence, 'the signer');
  return {
    issuer: expect(issuer, TAG.sequence, "the signer's issuer").bytes,
    serialNumber: expect(serial, TAG.integer, "the signer's serial number").value,
  };
}

/** Attribute ::= SEQUENCE { attrType, SET OF values } (RFC 5652 §5.3); the first value is kept. */
function readAttributes(attributes: Element): SignedAttributes {
  const values = new Map(
    childrenOf(attributes, TAG.context(0), 'the signed attributes').map((attribute) => {
      const [type, set] = childrenOf(attribute, TAG.sequence, 'a signed attribute');
      return [oidOf(type, 'a signed attribute type'), childrenOf(set, TAG.set, 'a signed attribute value')[0]];
    }),
  );
  return { bytes: attributes.bytes, values };
}

/** The certificate the signer names: by issuer and serial number, or by subject key identifier. */
function signerCertificate(
  signer: Signer,
  certificates: readonly TrustedCertificate[],
): TrustedCertificate | undefined {
  const { sid } = signer;
  if ('keyId' in sid) return certificates.find((c) => c.keyId?.equals(sid.keyId));
  return certificates.find((c) => c.issuer.equals(sid.issuer) && c.serialNumber.equals(sid.serialNumber));
}

/**
 * What the signature covers: the message itself, or — with signed attributes — their DER as a
 * SET, after checking that their messageDigest is the message's digest (a verifier that skips
 * this accepts any signature over any attributes, a trap seen in open-source servers, §3) and
 * that they sign data (RFC 5652 §11.1: contentType is required beside signed attributes).
 */
function signedBytes(signer: Signer, message: Buffer, digest: string): Buffer | string {
  const { signedAttrs } = signer;
  if (signedAttrs === undefined) return message;
  const messageDigest = signedAttrs.values.get(MESSAGE_DIGEST_ATTRIBUTE);
  if (messageDigest?.tag !== TAG.octetString) return 'the signed attributes have no messageDigest';
  const contentType = signedAttrs.values.get(CONTENT_TYPE_ATTRIBUTE);
  if (contentType?.tag !== TAG.oid || !contentType.value.equals(ID_DATA))
    return 'the signed content type is missing or not data';
  const expected = createHash(digest).update(message).digest();
  if (!messageDigest.value.equals(expected))
    return 'the signed message digest does not match the URL (a parameter was altered?)';
  // The attributes are signed as a SET (tag 0x31), not with the [0] IMPLICIT tag they carry here.
  const encoded = Buffer.from(signedAttrs.bytes);
  encoded[0] = TAG.set;
  return encoded;
}

type Verdict = { valid: true; certificate: TrustedCertificate } | { valid: false; reason: string };

const refuse = (reason: string): Verdict => ({ valid: false, reason });

/**
 * Checks a `secKey`: a detached PKCS#7/CMS SignedData over `message` (the signed parameters'
 * values), by one of `certificates` — the approved ones, never a certificate the secKey carries.
 * The cryptography is node:crypto's (DSA included, which WebCrypto lacks).
 */
export function verifySecKey(
  secKey: string,
  message: Buffer,
  certificates: readonly TrustedCertificate[],
  legacy: readonly LegacyDigest[] = [],
): Verdict {
  let signedData: SignedData;
  try {
    signedData = readSignedData(Buffer.from(secKey, 'base64'));
  } catch (error) {
    return refuse(`secKey is not a PKCS#7 signature (${(error as Error).message})`);
  }
  const { content } = signedData;
  if (content !== undefined && !content.equals(message)) return refuse('secKey carries content other than the URL');
  let reason = 'secKey has no signer';
  for (const signer of signedData.signers) {
    const certificate = signerCertificate(signer, certificates);
    if (certificate === undefined) {
      reason = 'secKey is signed by no approved certificate of this content repository';
      continue;
    }
    const digest = digestOf(signer.digest, legacy);
    if (digest === undefined) {
      const name = Object.entries(LEGACY_DIGESTS).find(([, oid]) => oid === signer.digest)?.[0];
      reason =
        name === undefined
          ? `secKey uses digest ${signer.digest}, which is not accepted`
          : `secKey uses the legacy digest ${name}, not accepted for this content repository (legacyDigests)`;
      continue;
    }
    const data = signedBytes(signer, message, digest);
    if (typeof data === 'string') {
      reason = data;
      continue;
    }
    // node:crypto answers false (it does not throw) for a signature it cannot even parse.
    if (verify(digest, data, certificate.publicKey, signer.signature)) return { valid: true, certificate };
    reason = 'the signature does not verify (a parameter was altered, or another key signed it)';
  }
  return refuse(reason);
}
