import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ContentInfo, SignedData, id_signedData } from '@peculiar/asn1-cms';
import { AsnParser, AsnSerializer } from '@peculiar/asn1-schema';
import { Certificate, Name, SubjectKeyIdentifier, id_ce_subjectKeyIdentifier } from '@peculiar/asn1-x509';
import * as asn1js from 'asn1js';
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { ArchiveLinkError } from '../../src/content-server/protocol/protocol.js';
import {
  AsnError,
  childrenOf,
  octetsOf,
  oidOf,
  readAsn,
  TAG,
  type Element,
} from '../../src/content-server/signatures/asn1.js';
import { identityOf, readCertificateFile } from '../../src/content-server/signatures/certificate-file.js';
import { readSignedData, signedDataFields } from '../../src/content-server/signatures/signature.js';

// CI runs one fixed seed; C2E_FUZZ_SEED replays a failure, C2E_FUZZ_RUNS makes the long mode (npm run test:fuzz).
const SEED = Number(process.env.C2E_FUZZ_SEED ?? 5757);
const RUNS = Number(process.env.C2E_FUZZ_RUNS ?? 150);
const options = (share = 1): fc.Parameters<unknown> => ({ seed: SEED, numRuns: Math.max(1, Math.round(RUNS * share)) });

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'archivelink');
const fixture = (name: string): Buffer => readFileSync(join(FIXTURES, name));

/** Every distinct secKey of the fixture URLs: DSA, RSA, EC, by key id, attached, without attributes. */
function fixtureSecKeys(): Buffer[] {
  const { urls } = JSON.parse(fixture('signed-urls.json').toString()) as { urls: Record<string, string> };
  const keys = Object.values(urls).flatMap((url) => {
    const secKey = /[?&]secKey=([^&]*)/.exec(url)?.[1];
    return secKey === undefined ? [] : [decodeURIComponent(secKey)];
  });
  return [...new Set(keys)].map((key) => Buffer.from(key, 'base64'));
}

const SEC_KEYS = fixtureSecKeys();
const CERTIFICATES = ['dsa.crt', 'rsa.crt', 'ec.crt', 'stranger.crt'].map(
  (name) => readCertificateFile(fixture(name)).der,
);
const PUT_CERT_BODIES = ['dsa.p7b', 'dsa-putcert.p7s', 'dsa.der'].map(fixture);
const REAL_DER = [...SEC_KEYS, ...CERTIFICATES, ...PUT_CERT_BODIES.slice(0, 2)];

/** An element and everything inside it, as the reader finds them (childrenOf on every constructed one). */
interface Tree {
  tag: number;
  bytes: Buffer;
  children?: Tree[];
}

/** Deeper than any generated structure; stops the test's own recursion on the deep-nesting inputs. */
const WALK_DEPTH = 64;

function walk(element: Element, depth = 0): Tree {
  const { tag, bytes } = element;
  if ((tag & 0x20) === 0 || depth > WALK_DEPTH) return { tag, bytes };
  return { tag, bytes, children: childrenOf(element, tag, 'x').map((child) => walk(child, depth + 1)) };
}

function nodes(tree: Tree): Tree[] {
  return [tree, ...(tree.children ?? []).flatMap(nodes)];
}

/** A reading's outcome as text, so that two readings of the same bytes in other buffers compare. */
const describe = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v instanceof Uint8Array || (typeof v === 'object' && v !== null && (v as { type?: string }).type === 'Buffer')
      ? Buffer.from(v as Uint8Array).toString('hex')
      : v instanceof Map
        ? [...(v as Map<string, unknown>).entries()]
        : v,
  );

/** readAsn and its helpers on every element found: the OIDs decoded, the OCTET STRINGs joined. */
function readEverything(der: Buffer): Tree {
  const tree = walk(readAsn(der));
  for (const node of nodes(tree)) {
    assert.ok(within(node.bytes, der), 'an element outside its input');
    const element = readAsn(node.bytes);
    if (node.tag === TAG.oid) oidOf(element, 'an oid');
    if (node.tag === TAG.octetString || node.tag === TAG.constructedOctetString) octetsOf(element, 'octets');
  }
  return tree;
}

/** The same memory, not a copy: the reader hands out views of its input, and only of its input. */
const within = (part: Buffer, whole: Buffer): boolean =>
  part.buffer === whole.buffer &&
  part.byteOffset >= whole.byteOffset &&
  part.byteOffset + part.length <= whole.byteOffset + whole.length;

const ENTRY_POINTS: Array<[string, (der: Buffer) => unknown]> = [
  ['readAsn', readEverything],
  ['signedDataFields', signedDataFields],
  ['readSignedData', readSignedData],
  ['identityOf', identityOf],
];

/** What an entry point makes of `der`: its reading, or its AsnError's message; any other error fails. */
function outcome(read: (der: Buffer) => unknown, der: Buffer): string {
  try {
    return `read ${describe(read(der))}`;
  } catch (error) {
    if (error instanceof AsnError) return `refused: ${error.message}`;
    throw error;
  }
}

/**
 * The bytes inside a larger buffer, between bytes that would be read as more contents (an EOC
 * pair, a long length): a reader that looked past its input would read something else there.
 */
function padded(der: Buffer): Buffer {
  const around = Buffer.from([0x00, 0x00, 0x84, 0x7f, 0xff, 0xff, 0xff]);
  return Buffer.concat([around, der, around]).subarray(around.length, around.length + der.length);
}

/** A length in definite form; `pad` extra zero octets make the long form BER allows (≤ 4 octets here). */
function lengthOctets(length: number, pad = 0): Buffer {
  if (pad === 0 && length < 0x80) return Buffer.from([length]);
  const digits: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) digits.unshift(rest & 0xff);
  const octets = [...new Array<number>(pad).fill(0), ...digits];
  if (octets.length === 0) octets.push(0);
  return Buffer.from([0x80 | octets.length, ...octets]);
}

type Node =
  | { kind: 'primitive'; tag: number; value: Uint8Array; pad: number }
  | { kind: 'constructed'; tag: number; children: Node[]; indefinite: boolean; pad: number };

function encode(node: Node): Buffer {
  if (node.kind === 'primitive')
    return Buffer.concat([Buffer.from([node.tag]), lengthOctets(node.value.length, node.pad), node.value]);
  const contents = Buffer.concat(node.children.map(encode));
  if (node.indefinite) return Buffer.concat([Buffer.from([node.tag, 0x80]), contents, Buffer.from([0, 0])]);
  return Buffer.concat([Buffer.from([node.tag]), lengthOctets(contents.length, node.pad), contents]);
}

/**
 * Tags whose contents asn1js does not check (OCTET STRING, SEQUENCE, SET and the non-universal
 * classes): on these, its accepting or refusing is about the framing alone, which is what the
 * reader checks. (It refuses a BIT STRING's unused-bits octet, a bad UTCTime…, which the reader
 * leaves to OpenSSL or never reads.)
 */
function neutral(tag: number): boolean {
  if ((tag & 0x1f) === 0x1f) return false;
  return tag === 0x04 || tag === 0x30 || tag === 0x31 || (tag & 0xc0) !== 0;
}

const primitiveTag = fc.constantFrom(0x04, 0x80, 0x81, 0x82, 0x9e, 0x41, 0xc5);
const constructedTag = fc.constantFrom(0x30, 0x31, 0xa0, 0xa1, 0xa3, 0xbe, 0x61, 0xe2);
const pad = fc.constantFrom(0, 0, 0, 1, 2);

const { node: neutralTree } = fc.letrec<{ node: Node; primitive: Node; constructed: Node }>((tie) => ({
  node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, tie('primitive'), tie('constructed')),
  primitive: fc.record({
    kind: fc.constant('primitive' as const),
    tag: primitiveTag,
    value: fc.uint8Array({ maxLength: 40 }),
    pad,
  }),
  constructed: fc.record({
    kind: fc.constant('constructed' as const),
    tag: constructedTag,
    children: fc.array(tie('node'), { maxLength: 4 }),
    indefinite: fc.boolean(),
    pad,
  }),
}));

type Mutation =
  | { kind: 'set'; at: number; byte: number }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'delete'; at: number; count: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    bytes: fc.uint8Array({ minLength: 1, maxLength: 6 }),
  }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), count: fc.integer({ min: 1, max: 8 }) }),
);

function mutate(der: Buffer, mutations: readonly Mutation[]): Buffer {
  let bytes = Buffer.from(der);
  for (const change of mutations) {
    const at = change.at % (bytes.length + 1);
    if (change.kind === 'set' && at < bytes.length) bytes[at] = change.byte;
    if (change.kind === 'insert') bytes = Buffer.concat([bytes.subarray(0, at), change.bytes, bytes.subarray(at)]);
    if (change.kind === 'delete') bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + change.count)]);
  }
  return bytes;
}

const mutations = fc.array(mutation, { minLength: 1, maxLength: 3 });
const mutatedRealDer = fc.tuple(fc.constantFrom(...REAL_DER), mutations).map(([der, changes]) => mutate(der, changes));

/** Where each element of `der` starts and how long its tag and length are. */
function headers(der: Buffer): Array<{ at: number; header: number }> {
  return nodes(walk(readAsn(der))).map(({ bytes }) => {
    const element = readAsn(bytes);
    return { at: bytes.byteOffset - der.byteOffset, header: element.value.byteOffset - bytes.byteOffset };
  });
}

/** A length of `octets` octets claiming more than any input here holds (a megabyte to 2^72-1). */
const hugeLength = fc
  .tuple(fc.integer({ min: 3, max: 9 }), fc.constantFrom(0xff, 0x7f, 0x10))
  .map(([octets, lead]) => Buffer.from([0x80 | octets, lead, ...new Array<number>(octets - 1).fill(0xff)]));

/** One element of a real structure given a huge length in place of its own. */
const withHugeLength = fc.tuple(fc.constantFrom(...REAL_DER), fc.nat(), hugeLength).map(([der, pick, length]) => {
  const all = headers(der);
  const { at, header } = all[pick % all.length];
  return Buffer.concat([der.subarray(0, at + 1), length, der.subarray(at + header)]);
});

/** Elements inside elements, thousands deep, definite or indefinite, around one OCTET STRING. */
const deeplyNested = fc
  .tuple(fc.integer({ min: 1, max: 3000 }), fc.constantFrom(0x30, 0x24, 0xa0, 0x31), fc.boolean())
  .map(([depth, tag, indefinite]) => nest(Buffer.from('040161', 'hex'), depth, tag, indefinite));

function nest(inner: Buffer, depth: number, tag: number, indefinite: boolean): Buffer {
  if (indefinite)
    return Buffer.concat([Buffer.alloc(depth * 2, Buffer.from([tag, 0x80])), inner, Buffer.alloc(depth * 2)]);
  // Headers from the inside out, joined once: concatenating level by level is quadratic.
  const headers: Buffer[] = [];
  let length = inner.length;
  for (let level = 0; level < depth; level++) {
    headers.push(Buffer.concat([Buffer.from([tag]), lengthOctets(length)]));
    length += headers[headers.length - 1].length;
  }
  return Buffer.concat([...headers.reverse(), inner]);
}

const anyInput = fc.oneof(
  fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
  neutralTree.map(encode),
  fc.tuple(neutralTree, mutations).map(([tree, changes]) => mutate(encode(tree), changes)),
  mutatedRealDer,
  withHugeLength,
  deeplyNested,
);

/**
 * asn1js's reading when it takes the whole input as one element. It is laxer than BER where the
 * reader is not, which counts as a refusal here: an element inside a definite one may run past its
 * container's end (30 02 04 06 …: the SEQUENCE comes out 10 bytes long), and an indefinite length
 * ends at the input's end (a warning, or nothing for 30 80 alone) or at any tag 0 (00 01 too).
 */
function oracleRead(der: Buffer): asn1js.AsnType | undefined {
  let parsed: ReturnType<typeof asn1js.fromBER>;
  try {
    // It throws on a malformed time (GeneralizedTime.fromString) rather than answering an error.
    parsed = asn1js.fromBER(new Uint8Array(der));
  } catch {
    return undefined;
  }
  const { offset, result } = parsed;
  if (offset !== der.length || result.error !== '') return undefined;
  return oracleNodes(result).every(framed) ? result : undefined;
}

function framed(block: asn1js.AsnType): boolean {
  const { idBlock, lenBlock, valueBeforeDecodeView: bytes } = block;
  if (!lenBlock.isIndefiniteForm) return bytes.length === idBlock.blockLength + lenBlock.blockLength + lenBlock.length;
  // The children, then 00 00 and nothing else: asn1js ends at any tag 0 (00 01 too), or at the input's end.
  const contents = oracleChildren(block).reduce((sum, child) => sum + child.valueBeforeDecodeView.length, 0);
  return bytes.length === idBlock.blockLength + 1 + contents + 2 && bytes.at(-2) === 0 && bytes.at(-1) === 0;
}

function oracleChildren(block: asn1js.AsnType): asn1js.AsnType[] {
  const value = (block as asn1js.Constructed).valueBlock.value as unknown;
  return block.idBlock.isConstructed && Array.isArray(value) ? (value as asn1js.AsnType[]) : [];
}

function oracleNodes(block: asn1js.AsnType): asn1js.AsnType[] {
  return [block, ...oracleChildren(block).flatMap(oracleNodes)];
}

const oracleTag = ({ idBlock }: asn1js.AsnType): number =>
  ((idBlock.tagClass - 1) << 6) | (idBlock.isConstructed ? 0x20 : 0) | idBlock.tagNumber;

/** asn1js's tree in the reader's terms: the tag byte, the whole encoding, the children. */
function oracleTree(block: asn1js.AsnType): Tree {
  const tag = oracleTag(block);
  const bytes = Buffer.from(block.valueBeforeDecodeView);
  if (!block.idBlock.isConstructed) return { tag, bytes };
  return { tag, bytes, children: oracleChildren(block).map(oracleTree) };
}

/**
 * Only tags both read alike, all in one octet (the reader refuses the high-tag-number form), and no length
 * of more than the 4 octets the reader takes (asn1js takes 8).
 */
function strictlyComparable(block: asn1js.AsnType): boolean {
  return oracleNodes(block).every(
    (n) => n.idBlock.blockLength === 1 && neutral(oracleTag(n)) && n.lenBlock.blockLength <= 5,
  );
}

const readerTree = (der: Buffer): Tree | undefined => {
  try {
    return walk(readAsn(der));
  } catch (error) {
    if (error instanceof AsnError) return undefined;
    throw error;
  }
};

const treeText = (tree: Tree | undefined): string => describe(tree);

t.test('on any bytes, the reader answers or throws its AsnError, and reads nothing past its input', async (t) => {
  let refused = 0;
  fc.assert(
    fc.property(anyInput, (der) => {
      for (const [name, read] of ENTRY_POINTS) {
        const alone = outcome(read, der);
        assert.equal(outcome(read, padded(der)), alone, `${name} read past its input`);
        if (alone.startsWith('refused')) refused++;
      }
    }),
    options(),
  );
  // A generator that made only well-formed inputs would test the refusals of nothing.
  t.ok(refused > RUNS, `${refused} refusals`);
});

t.test('a putCert body of any bytes is a certificate or an ArchiveLinkError', async (t) => {
  const body = fc.oneof(
    anyInput,
    fc.tuple(fc.constantFrom(...PUT_CERT_BODIES), mutations).map(([der, changes]) => mutate(der, changes)),
  );
  fc.assert(
    fc.property(body, (der) => {
      try {
        readCertificateFile(der);
      } catch (error) {
        assert.ok(error instanceof ArchiveLinkError, `${(error as Error).name}: ${(error as Error).message}`);
      }
    }),
    options(0.5),
  );
  t.ok(readCertificateFile(PUT_CERT_BODIES[1]).der.length > 0, 'the unmutated SSF body is read');
});

t.test('a length claiming more than the input is refused before anything is made of it', async (t) => {
  // Buffer.alloc of gigabytes would be slow or a RangeError: the refusal is an AsnError at once.
  fc.assert(
    fc.property(withHugeLength, (der) => {
      assert.throws(() => readEverything(der), AsnError);
      assert.equal(oracleRead(der), undefined, 'asn1js took the huge length');
    }),
    options(),
  );
  const gigabytes = Buffer.from('3084ffffffff0400', 'hex');
  const started = performance.now();
  t.throws(() => readAsn(gigabytes), /a length beyond its container/);
  t.throws(() => readAsn(Buffer.from('3089ffffffffffffffffff', 'hex')), /a length that cannot be/);
  t.ok(performance.now() - started < 100, 'refused at once');
});

t.test('every truncation of a real secKey or certificate is refused, as asn1js refuses it', async (t) => {
  let cuts = 0;
  for (const der of REAL_DER.slice(0, 4).concat(CERTIFICATES.slice(0, 2))) {
    for (let length = 0; length < der.length; length++) {
      const cut = der.subarray(0, length);
      assert.equal(readerTree(cut), undefined, `the reader took ${length} bytes`);
      // asn1js is slower than the reader: every seventh cut is enough to keep the two honest.
      if (length % 7 === 0) assert.equal(oracleRead(cut), undefined, `asn1js took ${length} bytes`);
      cuts++;
    }
  }
  t.ok(cuts > 1000, `${cuts} truncations`);
});

/** What `read` throws; undefined when it returns. */
function refusal(read: () => unknown): unknown {
  try {
    read();
    return undefined;
  } catch (error) {
    return error;
  }
}

t.test('deep nesting ends in an AsnError or a reading, never in a stack overflow', async (t) => {
  for (const tag of [0x30, 0x24, 0xa0])
    for (const indefinite of [false, true]) {
      const der = nest(Buffer.from('040161', 'hex'), 3000, tag, indefinite);
      const started = performance.now();
      for (const [name, read] of ENTRY_POINTS) t.doesNotThrow(() => outcome(read, der), name);
      t.type(
        refusal(() => octetsOf(readAsn(nest(Buffer.from('040161', 'hex'), 20_000, 0x24, indefinite)), 'x')),
        AsnError,
      );
      t.ok(performance.now() - started < 2000, `${tag.toString(16)} ${indefinite ? 'indefinite' : 'definite'} fast`);
    }
});

t.test('on OCTET STRINGs, SEQUENCEs, SETs and tagged elements, the reader and asn1js frame alike', async (t) => {
  let compared = 0;
  const input = fc.oneof(
    neutralTree.map((tree) => ({ der: encode(tree), mutated: false })),
    fc.tuple(neutralTree, mutations).map(([tree, changes]) => ({ der: mutate(encode(tree), changes), mutated: true })),
  );
  fc.assert(
    fc.property(input, ({ der, mutated }) => {
      const mine = readerTree(der);
      const theirs = oracleRead(der);
      // Unmutated, both must read it; mutated, they must agree wherever asn1js's verdict is about framing.
      if (!mutated) assert.ok(mine !== undefined && theirs !== undefined, 'a well-formed structure refused');
      if (mine !== undefined && nodes(mine).every((n) => neutral(n.tag))) {
        assert.ok(theirs !== undefined, 'the reader took what asn1js refuses');
        assert.equal(treeText(mine), treeText(oracleTree(theirs)));
        compared++;
      }
      if (theirs !== undefined && strictlyComparable(theirs)) {
        assert.ok(mine !== undefined, 'the reader refused what asn1js takes');
        compared++;
      }
    }),
    options(2),
  );
  t.ok(compared > RUNS, `${compared} comparisons`);
});

/** Object identifiers as DER writes them, and any bytes. */
const oidContents = fc.oneof(
  fc
    .tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 39 }), fc.array(fc.nat(), { maxLength: 6 }))
    .map(([first, second, rest]) => Buffer.concat([first * 40 + second, ...rest].map(base128))),
  fc.uint8Array({ maxLength: 12 }).map((bytes) => Buffer.from(bytes)),
);

function base128(arc: number): Buffer {
  const digits = [arc & 0x7f];
  for (let rest = Math.floor(arc / 128); rest > 0; rest = Math.floor(rest / 128)) digits.unshift(0x80 | (rest & 0x7f));
  return Buffer.from(digits);
}

/** Whether every subidentifier fits a double exactly: asn1js writes a larger first one as garbage, the reader rounds. */
function smallArcs(contents: Buffer): boolean {
  let arc = 0;
  for (const byte of contents) {
    arc = arc * 128 + (byte & 0x7f);
    if (arc > Number.MAX_SAFE_INTEGER / 128) return false;
    if ((byte & 0x80) === 0) arc = 0;
  }
  return true;
}

t.test('an OBJECT IDENTIFIER the reader decodes is the one asn1js decodes', async (t) => {
  let compared = 0;
  fc.assert(
    fc.property(oidContents, (contents) => {
      const der = Buffer.concat([Buffer.from([TAG.oid]), lengthOctets(contents.length), contents]);
      let mine: string | undefined;
      try {
        mine = oidOf(readAsn(der), 'x');
      } catch (error) {
        assert.ok(error instanceof AsnError);
      }
      const theirs = oracleRead(der) as asn1js.ObjectIdentifier | undefined;
      // asn1js takes an empty OID (X.690 §8.19 requires a subidentifier); the reader does not.
      if (theirs === undefined) assert.equal(mine, undefined, 'the reader decoded what asn1js refuses');
      if (mine !== undefined && smallArcs(contents)) {
        assert.equal(mine, theirs?.getValue());
        compared++;
      }
    }),
    options(),
  );
  t.ok(compared > RUNS / 4, `${compared} comparisons`);
});

const hexOf = (bytes: ArrayBuffer | Uint8Array): string => Buffer.from(bytes as ArrayBuffer).toString('hex');
const normalName = (der: ArrayBuffer | Uint8Array): string =>
  hexOf(AsnSerializer.serialize(AsnParser.parse(der, Name)));

/** What the general CMS parser reads from a secKey, in the terms the verifier keeps. */
function oracleSignedData(der: Buffer): unknown {
  const info = AsnParser.parse(der, ContentInfo);
  if (info.contentType !== id_signedData) return undefined;
  const signedData = AsnParser.parse(info.content, SignedData);
  const single = signedData.encapContentInfo.eContent?.single;
  return {
    content: single === undefined ? undefined : hexOf(single.buffer),
    signers: signedData.signerInfos.map((signer) => {
      const { issuerAndSerialNumber: named, subjectKeyIdentifier: keyId } = signer.sid;
      return {
        sid:
          named === undefined
            ? { keyId: hexOf((keyId as SubjectKeyIdentifier).buffer) }
            : { issuer: normalName(AsnSerializer.serialize(named.issuer)), serialNumber: hexOf(named.serialNumber) },
        digest: signer.digestAlgorithm.algorithm,
        // By type, as the verifier keeps them: of two attributes of one type, the last (RFC 5652 §11
        // forbids two messageDigests; the signature covers them all, so the signer would have made them).
        signedAttrs:
          signer.signedAttrs === undefined
            ? undefined
            : [...new Map(signer.signedAttrs.map(({ attrType, attrValues: [first] }) => [attrType, first]))].map(
                ([type, first]) => [type, first === undefined ? undefined : hexOf(first)],
              ),
        signature: hexOf(signer.signature.buffer),
      };
    }),
  };
}

/** The verifier's reading of a secKey, in the same terms. */
function readerSignedData({ content, signers }: ReturnType<typeof readSignedData>): unknown {
  return {
    content: content?.toString('hex'),
    signers: signers.map(({ sid, digest, signedAttrs, signature }) => ({
      sid:
        'keyId' in sid
          ? { keyId: sid.keyId.toString('hex') }
          : { issuer: normalName(sid.issuer), serialNumber: sid.serialNumber.toString('hex') },
      digest,
      signedAttrs:
        signedAttrs === undefined
          ? undefined
          : [...signedAttrs.values].map(([type, value]) => [type, value?.bytes.toString('hex')]),
      signature: signature.toString('hex'),
    })),
  };
}

/** A reading, or undefined where the reader refuses with its AsnError or the oracle with anything. */
function attempt(read: () => unknown, typed: boolean): unknown {
  try {
    return read();
  } catch (error) {
    if (typed && !(error instanceof AsnError)) throw error;
    return undefined;
  }
}

/**
 * Both sides read every original alike, and, where both read a mutation of one, they read the same:
 * `mine` reads with the verifier's code (refusing with AsnError), `theirs` with the oracle, each
 * turned into the same terms.
 */
function comparedOnMutations<T>(
  t: Test,
  originals: Buffer[],
  sides: { mine: (der: Buffer) => T; readerTerms: (read: T) => unknown; theirs: (der: Buffer) => unknown },
  share = 1,
): void {
  let compared = 0;
  for (const der of originals) t.same(sides.readerTerms(sides.mine(der)), sides.theirs(der), 'an unmutated original');
  fc.assert(
    fc.property(fc.tuple(fc.constantFrom(...originals), mutations), ([original, changes]) => {
      const der = mutate(original, changes);
      const theirs = oracleRead(der) === undefined ? undefined : attempt(() => sides.theirs(der), false);
      const mine = attempt(() => sides.mine(der), true) as T | undefined;
      if (mine === undefined || theirs === undefined) return;
      assert.equal(describe(sides.readerTerms(mine)), describe(theirs));
      compared++;
    }),
    options(share),
  );
  t.ok(compared > 0, `${compared} comparisons`);
}

t.test('where asn1-cms and the verifier both read a mutated secKey, they read the same signers', async (t) => {
  comparedOnMutations(
    t,
    SEC_KEYS,
    { mine: readSignedData, readerTerms: readerSignedData, theirs: oracleSignedData },
    2,
  );
});

/** What asn1-x509 reads of a certificate, in identityOf's terms. */
function oracleIdentity(der: Buffer): unknown {
  const { tbsCertificate } = AsnParser.parse(der, Certificate);
  const extension = tbsCertificate.extensions?.find((e) => e.extnID === id_ce_subjectKeyIdentifier);
  return {
    issuer: normalName(AsnSerializer.serialize(tbsCertificate.issuer)),
    serialNumber: hexOf(tbsCertificate.serialNumber),
    keyId:
      extension === undefined ? undefined : hexOf(AsnParser.parse(extension.extnValue, SubjectKeyIdentifier).buffer),
  };
}

function readerIdentity({ issuer, serialNumber, keyId }: ReturnType<typeof identityOf>): unknown {
  return { issuer: normalName(issuer), serialNumber: serialNumber.toString('hex'), keyId: keyId?.toString('hex') };
}

t.test('where asn1-x509 and identityOf both read a mutated certificate, they name it alike', async (t) => {
  comparedOnMutations(t, CERTIFICATES, { mine: identityOf, readerTerms: readerIdentity, theirs: oracleIdentity });
});
