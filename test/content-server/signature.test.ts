import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { childrenOf, readAsn, type Element } from '../../src/content-server/signatures/asn1.js';
import { ArchiveLinkError, STATUS } from '../../src/content-server/protocol/protocol.js';
import { readCertificateFile } from '../../src/content-server/signatures/certificate-file.js';
import { trusted, type StoredCertificate } from '../../src/content-server/signatures/certificates.js';
import { verifySecKey, type TrustedCertificate } from '../../src/content-server/signatures/signature.js';
import { ArchiveLinkSigner } from '../../sandbox/erp/archivelink-signer.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'archivelink');
const fixture = (name: string): Buffer => readFileSync(join(FIXTURES, name));
const { urls } = JSON.parse(fixture('signed-urls.json').toString()) as { urls: Record<string, string> };

function certificate(name: string): TrustedCertificate {
  const file = readCertificateFile(fixture(name));
  return trusted({ pem: file.pem, fingerprint: file.fingerprint } as StoredCertificate) as TrustedCertificate;
}

const SIGNED = ['contRep', 'accessMode', 'authId', 'expiration', 'docId'];

/** The message and secKey of a fixture URL, as the server rebuilds them: signed values raw, in URL order. */
function split(query: string): { message: Buffer; secKey: string } {
  const pairs = query
    .split('&')
    .slice(1)
    .map((p) => p.split('=') as [string, string]);
  const message = pairs
    .filter(([k]) => SIGNED.includes(k))
    .map(([, v]) => v)
    .join('');
  const secKey = decodeURIComponent(pairs.find(([k]) => k === 'secKey')?.[1] ?? '');
  return { message: Buffer.from(message, 'latin1'), secKey };
}

t.test('signatures OpenSSL made verify against the registered certificate, for each algorithm SAP uses', async (t) => {
  const cases: Array<[string, string]> = [
    ['infoA', 'dsa.crt'],
    ['infoADsaNoAttributes', 'dsa.crt'],
    ['infoARsa', 'rsa.crt'],
    ['infoAEc', 'ec.crt'],
  ];
  for (const [name, cert] of cases) {
    const { message, secKey } = split(urls[name]);
    const verdict = verifySecKey(secKey, message, [certificate(cert)]);
    t.ok(verdict.valid, `${name} verifies with ${cert}`);
  }
});

/**
 * The same element with the constructed lengths of its outer `levels` made indefinite, as BER
 * allows (X.690 §8.1.3.6) and OpenSSL's streaming signer writes (ContentInfo, SignedData and the
 * sets and sequences around the signer; the signer's names stay as the certificate has them).
 */
function indefinite(element: Element, levels: number): Buffer {
  if ((element.tag & 0x20) === 0 || levels === 0) return element.bytes;
  const inner = childrenOf(element, element.tag, 'x').map((child) => indefinite(child, levels - 1));
  return Buffer.concat([Buffer.from([element.tag, 0x80]), ...inner, Buffer.from([0, 0])]);
}

t.test('a secKey in BER (indefinite lengths, which RFC 5652 allows) verifies as its DER twin does', async (t) => {
  const { message, secKey } = split(urls.infoADsaNoAttributes);
  const ber = indefinite(readAsn(Buffer.from(secKey, 'base64')), 5).toString('base64');
  t.not(ber, secKey);
  t.ok(verifySecKey(ber, message, [certificate('dsa.crt')]).valid);
});

t.test('an altered message, another key or a key nobody registered is refused with its reason', async (t) => {
  const { message, secKey } = split(urls.infoA);
  const altered = Buffer.from(message.toString('latin1').replace('4A01', '4A02'), 'latin1');
  t.match(verifySecKey(secKey, altered, [certificate('dsa.crt')]), {
    valid: false,
    reason: /message digest does not match/,
  });
  const bare = split(urls.infoADsaNoAttributes);
  t.match(verifySecKey(bare.secKey, altered, [certificate('dsa.crt')]), { valid: false, reason: /does not verify/ });
  t.match(verifySecKey(split(urls.infoAStranger).secKey, message, [certificate('dsa.crt')]), {
    valid: false,
    reason: /no approved certificate/,
  });
  t.match(verifySecKey(secKey, message, []), { valid: false, reason: /no approved certificate/ });
  t.match(verifySecKey('bm90IGEgc2lnbmF0dXJl', message, [certificate('dsa.crt')]), {
    valid: false,
    reason: /not a PKCS#7 signature/,
  });
});

t.test('putCert bodies: DER, PEM, PKCS#7 with the certificate, and SAP-style SSF signatures carrying it', async (t) => {
  const fingerprints = ['dsa.der', 'dsa.crt', 'dsa.p7b', 'dsa-putcert.p7s'].map(
    (name) => readCertificateFile(fixture(name)).fingerprint,
  );
  t.equal(new Set(fingerprints).size, 1, 'all four read as the same certificate');
  t.throws(() => readCertificateFile(Buffer.from('hello')), /neither an X\.509 certificate nor a PKCS#7/);
});

t.test(
  'a putCert certificate whose validity OpenSSL reads but cannot print is not recognised (a RangeError before)',
  async (t) => {
    const der = fixture('dsa.der');
    const notBefore = der.indexOf(Buffer.from('170d', 'hex'));
    const bad = Buffer.from(der);
    bad[notBefore + 2] = 0;
    t.throws(() => readCertificateFile(bad), {
      constructor: ArchiveLinkError,
      status: STATUS.certificateNotRecognised,
      message: /the certificate's validity is no time \(Bad time value\)/,
    });
  },
);

t.test("the ERP sandbox's signer signs as SAP does, and the verifier takes it", async (t) => {
  const signer = new ArchiveLinkSigner();
  const file = readCertificateFile(signer.certificateBody());
  const cert = trusted({ pem: file.pem, fingerprint: file.fingerprint } as StoredCertificate) as TrustedCertificate;
  const message = Buffer.from('Z1005056A1B2C31EDB8F9A0C1D2E3F4A01rCN%3DS4H20991231235959');
  t.ok(verifySecKey(signer.sign(message).toString('base64'), message, [cert]).valid);
  t.notOk(verifySecKey(signer.sign(message).toString('base64'), Buffer.from('other'), [cert]).valid);
  t.equal(signer.authId, 'CN=S4H,OU=connect2erp test system,O=SAP Trust Community,C=DE');
});
