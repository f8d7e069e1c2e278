import t from 'tap';
import { childrenOf, octetsOf, oidOf, readAsn, TAG } from '../../src/content-server/signatures/asn1.js';
import { identityOf } from '../../src/content-server/signatures/certificate-file.js';
import { verifySecKey } from '../../src/content-server/signatures/signature.js';

const hex = (text: string): Buffer => Buffer.from(text.replace(/\s/g, ''), 'hex');
const sequence = (...inner: string[]): string => wrap('30', inner.join(''));
function wrap(tag: string, inner: string): string {
  const length = inner.replace(/\s/g, '').length / 2;
  return `${tag} ${length.toString(16).padStart(2, '0')} ${inner}`;
}

t.test('definite lengths in each form, and what is inside a constructed element', async (t) => {
  const long = Buffer.concat([hex('04 82 01 00'), Buffer.alloc(256, 7)]);
  t.equal(readAsn(long).value.length, 256, 'a two-byte length');
  const children = childrenOf(readAsn(hex('30 06 02 01 05 04 01 ff')), TAG.sequence, 'x');
  t.same(
    children.map((c) => [c.tag, c.value.toString('hex')]),
    [
      [TAG.integer, '05'],
      [TAG.octetString, 'ff'],
    ],
  );
  t.same(childrenOf(readAsn(hex('30 00')), TAG.sequence, 'x'), [], 'an empty SEQUENCE');
});

t.test('indefinite lengths are read, their end-of-contents octets not taken for an element', async (t) => {
  const nested = readAsn(hex('30 80 30 80 02 01 01 00 00 04 01 02 00 00'));
  t.equal(nested.bytes.length, 14);
  t.same(
    childrenOf(nested, TAG.sequence, 'x').map((c) => c.bytes.toString('hex')),
    ['30800201010000', '040102'],
  );
});

t.test('BER chunks of an OCTET STRING are joined', async (t) => {
  t.equal(octetsOf(readAsn(hex('24 80 04 02 61 62 04 01 63 00 00')), 'x').toString(), 'abc');
  t.throws(() => octetsOf(readAsn(hex('02 01 01')), 'the thing'), /the thing is missing or malformed/);
});

t.test('object identifiers, the short and the large first arcs', async (t) => {
  t.equal(oidOf(readAsn(hex('06 09 2a 86 48 86 f7 0d 01 07 02')), 'x'), '1.2.840.113549.1.7.2');
  t.equal(oidOf(readAsn(hex('06 03 55 1d 0e')), 'x'), '2.5.29.14');
  t.equal(oidOf(readAsn(hex('06 03 88 37 01')), 'x'), '2.999.1', 'a first arc past 2.39');
  t.throws(() => oidOf(readAsn(hex('06 02 2a 86')), 'the type'), /the type is cut short/);
  t.throws(() => oidOf(readAsn(hex('06 00')), 'the type'), /the type is cut short/);
});

t.test('a malformed structure is refused with what is wrong, never read past its end', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['30', /cut short/],
    ['30 05 02 01', /beyond its container/],
    ['30 85 00 00 00 00 01', /cannot be/],
    ['30 82 01', /cannot be/],
    ['1f 01 00', /tag number above 30/],
    ['04 80 00 00', /indefinite length on a primitive/],
    ['30 80 02 01 01', /cut short/],
    ['30 00 00', /bytes after the structure/],
    [`${'30 80 '.repeat(40)}${'00 00 '.repeat(40)}`, /nested too deeply/],
  ];
  for (const [bytes, error] of cases) t.throws(() => readAsn(hex(bytes)), error, bytes);
  t.throws(() => childrenOf(readAsn(hex('02 01 01')), TAG.integer, 'a number'), /a number is not a constructed/);
  t.throws(() => childrenOf(readAsn(hex('30 01 02')), TAG.set, 'the set'), /the set is missing or malformed/);
  t.throws(() => childrenOf(readAsn(hex('30 03 02 05 01')), TAG.sequence, 'x'), /beyond its container/);
});

t.test(
  'a certificate names its issuer and serial number with or without a version, its key id when it has one',
  async (t) => {
    const issuer = sequence(wrap('31', sequence('06 03 55 04 03', '0c 01 41')));
    const algorithm = sequence('06 07 2a 86 48 ce 38 04 03');
    const v1 = hex(sequence(sequence('02 01 07', algorithm, issuer)));
    t.same(identityOf(v1), { issuer: hex(issuer), serialNumber: hex('07'), keyId: undefined }, 'a v1 certificate');
    const basicConstraints = sequence('06 03 55 1d 13', wrap('04', sequence()));
    const keyId = sequence('06 03 55 1d 0e', wrap('04', '04 02 ab cd'));
    const v3 = (...extensions: string[]): Buffer =>
      hex(
        sequence(sequence(wrap('a0', '02 01 02'), '02 01 08', algorithm, issuer, wrap('a3', sequence(...extensions)))),
      );
    t.same(identityOf(v3(basicConstraints, keyId)).keyId, hex('ab cd'), 'the key id after another extension');
    t.equal(identityOf(v3(basicConstraints)).keyId, undefined, 'no key id among the extensions');
    t.same(identityOf(v3(basicConstraints)).serialNumber, hex('08'));
  },
);

t.test('a secKey whose SignedData lacks its fields is no signature', async (t) => {
  const signedData = sequence('02 01 01', wrap('31', ''), sequence('06 09 2a 86 48 86 f7 0d 01 07 01'));
  const info = hex(sequence('06 09 2a 86 48 86 f7 0d 01 07 02', wrap('a0', signedData)));
  t.match(verifySecKey(info.toString('base64'), Buffer.from('m'), []), {
    valid: false,
    reason: /not a PKCS#7 signature \(the SignedData is cut short\)/,
  });
});

/** An element with a two-octet length, which any contents here fit. */
const long = (tag: number, ...inner: Buffer[]): Buffer => {
  const contents = Buffer.concat(inner);
  return Buffer.concat([Buffer.from([tag, 0x82, contents.length >> 8, contents.length & 0xff]), contents]);
};
/** The digest and signature algorithms of a SignerInfo: SHA-1, DSA with SHA-1. */
const DSA_SHA1 = hex(`${sequence('06 05 2b 0e 03 02 1a')} ${sequence('06 07 2a 86 48 ce 38 04 03')}`);

/** An OCTET STRING in chunks of chunks, `depth` constructed levels around 04 01 61. */
function chunksOfChunks(depth: number): Buffer {
  const headers: Buffer[] = [];
  let length = 3;
  for (let level = 0; level < depth; level++) {
    const octets = length < 0x80 ? [length] : [0x82, length >> 8, length & 0xff];
    headers.push(Buffer.from([TAG.constructedOctetString, ...octets]));
    length += 1 + octets.length;
  }
  return Buffer.concat([...headers.reverse(), hex('04 01 61')]);
}

t.test(
  'chunks of chunks are joined a few levels deep, and refused thousands deep (a stack overflow before)',
  async (t) => {
    t.equal(octetsOf(readAsn(chunksOfChunks(5)), 'x').toString(), 'a');
    // 2,500 levels, 10 kB, overflowed the stack with a RangeError: a secKey's signature is read this way.
    t.throws(() => octetsOf(readAsn(chunksOfChunks(3000)), 'the signature'), /the signature is nested too deeply/);
    const withSignature = (signature: Buffer): Buffer =>
      long(
        TAG.sequence,
        hex('06 09 2a 86 48 86 f7 0d 01 07 02'),
        long(
          TAG.context(0),
          long(
            TAG.sequence,
            hex(`02 01 01 31 00 ${sequence('06 09 2a 86 48 86 f7 0d 01 07 01')}`),
            long(TAG.set, long(TAG.sequence, hex(`02 01 01 ${sequence(sequence(), '02 01 01')}`), DSA_SHA1, signature)),
          ),
        ),
      );
    t.match(verifySecKey(withSignature(chunksOfChunks(3000)).toString('base64'), Buffer.from('m'), []), {
      valid: false,
      reason: /not a PKCS#7 signature \(the signature is nested too deeply\)/,
    });
    t.match(verifySecKey(withSignature(chunksOfChunks(2)).toString('base64'), Buffer.from('m'), []), {
      valid: false,
      reason: /signed by no approved certificate/,
    });
  },
);

t.test('a certificate body without fields is refused as malformed (a TypeError before)', async (t) => {
  t.throws(() => identityOf(hex('30 02 30 00')), /the issuer is missing or malformed/);
});
