import { createHash, verify, type KeyObject } from 'node:crypto';
import * as pkijs from 'pkijs';

/** A certificate an administrator approved, ready to check signatures with. */
export interface TrustedCertificate {
  /** pkijs' reading, to match the signer's issuer and serial number (or key id). */
  parsed: pkijs.Certificate;
  publicKey: KeyObject;
  fingerprint: string;
}

const SIGNED_DATA = '1.2.840.113549.1.7.2';
const ID_DATA = '1.2.840.113549.1.7.1';
const CONTENT_TYPE_ATTRIBUTE = '1.2.840.113549.1.9.3';
const MESSAGE_DIGEST_ATTRIBUTE = '1.2.840.113549.1.9.4';
const SUBJECT_KEY_IDENTIFIER = '2.5.29.14';

/**
 * The digests accepted: SHA-1 (SAP's default with DSA, §3) and SHA-2. MD5 and RIPEMD-160, which
 * the 1990s spec allowed, are refused: no SAP-signed URL seen uses them, and MD5 is broken.
 */
const DIGESTS: Record<string, string> = {
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};

export type Verdict = { valid: true; certificate: TrustedCertificate } | { valid: false; reason: string };

const refuse = (reason: string): Verdict => ({ valid: false, reason });

function parseSignedData(der: Buffer): pkijs.SignedData {
  const info = pkijs.ContentInfo.fromBER(der);
  if (info.contentType !== SIGNED_DATA) throw new Error('not a PKCS#7 SignedData');
  return new pkijs.SignedData({ schema: info.content });
}

const bytes = (view: ArrayBuffer | Uint8Array): Buffer =>
  Buffer.from(view instanceof Uint8Array ? view : new Uint8Array(view));

/** The certificate the signer names: by issuer and serial number, or by subject key identifier. */
function signerCertificate(
  signer: pkijs.SignerInfo,
  certificates: readonly TrustedCertificate[],
): TrustedCertificate | undefined {
  const { sid } = signer;
  if (sid instanceof pkijs.IssuerAndSerialNumber)
    return certificates.find(
      (c) => c.parsed.issuer.isEqual(sid.issuer) && c.parsed.serialNumber.isEqual(sid.serialNumber),
    );
  const keyId = bytes((sid as { valueBlock: { valueHexView: Uint8Array } }).valueBlock.valueHexView);
  return certificates.find((c) => {
    const extension = c.parsed.extensions?.find((e) => e.extnID === SUBJECT_KEY_IDENTIFIER);
    const parsed = extension?.parsedValue as { valueBlock?: { valueHexView: Uint8Array } } | undefined;
    return parsed?.valueBlock !== undefined && bytes(parsed.valueBlock.valueHexView).equals(keyId);
  });
}

/**
 * What the signature covers: the message itself, or — with signed attributes — their DER as a
 * SET, after checking that their messageDigest is the message's digest (a verifier that skips
 * this accepts any signature over any attributes, a trap seen in open-source servers, §3).
 */
function signedBytes(signer: pkijs.SignerInfo, message: Buffer, digest: string): Buffer | string {
  if (signer.signedAttrs === undefined) return message;
  const attributes = signer.signedAttrs.attributes;
  const messageDigest = attributes.find((a) => a.type === MESSAGE_DIGEST_ATTRIBUTE)?.values[0] as
    { valueBlock: { valueHexView: Uint8Array } } | undefined;
  if (messageDigest === undefined) return 'the signed attributes have no messageDigest';
  const contentType = attributes.find((a) => a.type === CONTENT_TYPE_ATTRIBUTE)?.values[0] as
    { valueBlock: { toString(): string } } | undefined;
  if (contentType !== undefined && contentType.valueBlock.toString() !== ID_DATA)
    return 'the signed content type is not data';
  const expected = createHash(digest).update(message).digest();
  if (!bytes(messageDigest.valueBlock.valueHexView).equals(expected))
    return 'the signed message digest does not match the URL (a parameter was altered?)';
  // The attributes are signed as a SET (tag 0x31), not with the [0] IMPLICIT tag they carry here.
  const encoded = Buffer.from(bytes(signer.signedAttrs.encodedValue));
  encoded[0] = 0x31;
  return encoded;
}

/**
 * Checks a `secKey`: a detached PKCS#7/CMS SignedData over `message` (the signed parameters'
 * values), by one of `certificates` — the approved ones, never a certificate the secKey carries.
 * The cryptography is node:crypto's (DSA included, which WebCrypto lacks); pkijs only parses.
 */
export function verifySecKey(secKey: string, message: Buffer, certificates: readonly TrustedCertificate[]): Verdict {
  let signedData: pkijs.SignedData;
  try {
    signedData = parseSignedData(Buffer.from(secKey, 'base64'));
  } catch (error) {
    return refuse(`secKey is not a PKCS#7 signature (${(error as Error).message})`);
  }
  const content = signedData.encapContentInfo.eContent;
  if (content !== undefined && !bytes(content.valueBlock.valueHexView).equals(message))
    return refuse('secKey carries content other than the URL');
  let reason = 'secKey has no signer';
  for (const signer of signedData.signerInfos) {
    const certificate = signerCertificate(signer, certificates);
    if (certificate === undefined) {
      reason = 'secKey is signed by no approved certificate of this content repository';
      continue;
    }
    const digest = DIGESTS[signer.digestAlgorithm.algorithmId];
    if (digest === undefined) {
      reason = `secKey uses digest ${signer.digestAlgorithm.algorithmId}, which is not accepted`;
      continue;
    }
    const data = signedBytes(signer, message, digest);
    if (typeof data === 'string') {
      reason = data;
      continue;
    }
    const signature = bytes(signer.signature.valueBlock.valueHexView);
    // node:crypto answers false (it does not throw) for a signature it cannot even parse.
    if (verify(digest, data, certificate.publicKey, signature)) return { valid: true, certificate };
    reason = 'the signature does not verify (a parameter was altered, or another key signed it)';
  }
  return refuse(reason);
}
