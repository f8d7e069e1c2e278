import { createHash, createPrivateKey, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  Attribute,
  CertificateChoices,
  CertificateSet,
  ContentInfo,
  EncapsulatedContentInfo,
  IssuerAndSerialNumber,
  SignedData,
  SignerIdentifier,
  SignerInfo,
  SignerInfos,
  id_data,
  id_signedData,
  DigestAlgorithmIdentifiers,
} from '@peculiar/asn1-cms';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { AlgorithmIdentifier, Certificate, Time } from '@peculiar/asn1-x509';

/** The DER of OBJECT IDENTIFIER 1.2.840.113549.1.7.1 (id-data), the signed content type. */
const ID_DATA_DER = Buffer.from('06092a864886f70d010701', 'hex');

/**
 * SET OF Attribute, what a signature over signed attributes covers (RFC 5652 §5.4). The
 * attributes are given in DER's order (by their encodings), so they are concatenated as they are.
 */
function attributeSet(attributes: Attribute[]): Buffer {
  const content = Buffer.concat(attributes.map((a) => Buffer.from(AsnConvert.serialize(a))));
  // Three attributes of fixed size, under 128 bytes together: DER's short length form.
  return Buffer.concat([Buffer.from([0x31, content.length]), content]);
}

const SHA1 = '1.3.14.3.2.26';
const DSA_WITH_SHA1 = '1.2.840.10040.4.3';
const CONTENT_TYPE = '1.2.840.113549.1.9.3';
const SIGNING_TIME = '1.2.840.113549.1.9.5';
const MESSAGE_DIGEST = '1.2.840.113549.1.9.4';

/**
 * SAP's side of URL signing, as the signed URLs SAP systems produced show it
 * (docs/reference/sap-interfaces.md §3, "What real SAP-signed URLs show"): a detached PKCS#7
 * SignedData, DSA with SHA-1, signed attributes (contentType, signingTime, messageDigest), no
 * certificate inside, the signer named by issuer and serial number. Built with @peculiar's ASN.1 schemas, not with the product's code; OpenSSL's
 * `cms -verify` takes its signatures (checked by hand when it was written).
 * The key and certificate are the sandbox's own (OpenSSL made them: DSA-1024, as SAP's SSF keys).
 */
export class ArchiveLinkSigner {
  readonly certificate: X509Certificate;
  private readonly key: KeyObject;
  private readonly parsed: Certificate;

  constructor(folder = import.meta.dirname.replace(/dist\/sandbox/, 'sandbox')) {
    this.certificate = new X509Certificate(readFileSync(join(folder, 'archivelink-signer.crt')));
    this.key = createPrivateKey(readFileSync(join(folder, 'archivelink-signer.key')));
    this.parsed = AsnConvert.parse(this.certificate.raw, Certificate);
  }

  /** The authId SAP sends: the certificate's subject as a comma-separated DN, most specific first. */
  get authId(): string {
    return this.certificate.subject.split('\n').reverse().join(',');
  }

  /** A detached signature of `message`, DER. */
  sign(message: Buffer, at = new Date()): Buffer {
    const attributes = [
      // In DER's order: contentType (30 18 …), signingTime (30 1c …), messageDigest (30 23 …).
      new Attribute({ attrType: CONTENT_TYPE, attrValues: [new Uint8Array(ID_DATA_DER).buffer] }),
      new Attribute({ attrType: SIGNING_TIME, attrValues: [AsnConvert.serialize(new Time({ utcTime: at }))] }),
      new Attribute({
        attrType: MESSAGE_DIGEST,
        attrValues: [AsnConvert.serialize(new OctetString(createHash('sha1').update(message).digest()))],
      }),
    ];
    return this.wrap(this.signer(sign('sha1', attributeSet(attributes), this.key), attributes), false);
  }

  /**
   * What SAP's putCert sends (SCMS_HTTP_PUT_CERT): its SSF signature over one blank, carrying
   * the certificate (an SAP community answer, §3), rather than the bare certificate.
   */
  certificateBody(): Buffer {
    return this.wrap(this.signer(sign('sha1', Buffer.from(' '), this.key)), true);
  }

  /** This key's SignerInfo: named by issuer and serial number, DSA with SHA-1. */
  private signer(signature: Buffer, signedAttrs?: Attribute[]): SignerInfo {
    return new SignerInfo({
      version: 1,
      sid: new SignerIdentifier({
        issuerAndSerialNumber: new IssuerAndSerialNumber({
          issuer: this.parsed.tbsCertificate.issuer,
          serialNumber: this.parsed.tbsCertificate.serialNumber,
        }),
      }),
      digestAlgorithm: new AlgorithmIdentifier({ algorithm: SHA1 }),
      signedAttrs,
      signatureAlgorithm: new AlgorithmIdentifier({ algorithm: DSA_WITH_SHA1 }),
      signature: new OctetString(signature),
    });
  }

  private wrap(signer: SignerInfo, withCertificate: boolean): Buffer {
    const signedData = new SignedData({
      version: 1,
      digestAlgorithms: new DigestAlgorithmIdentifiers([new AlgorithmIdentifier({ algorithm: SHA1 })]),
      encapContentInfo: new EncapsulatedContentInfo({ eContentType: id_data }),
      signerInfos: new SignerInfos([signer]),
      certificates: withCertificate
        ? new CertificateSet([new CertificateChoices({ certificate: this.parsed })])
        : undefined,
    });
    const info = new ContentInfo({ contentType: id_signedData, content: AsnConvert.serialize(signedData) });
    return Buffer.from(AsnConvert.serialize(info));
  }
}
