/**
 * A reader for the few ASN.1 structures the content server takes apart: the CMS SignedData of a
 * secKey or of a putCert body, and an X.509 certificate's issuer, serial number and key id.
 * A general parser (pkijs) read them before and cost most of a signed `get`'s CPU
 * (BENCHMARKS.md) for structures whose shape is fixed; this one only finds elements, and its
 * callers check the tags they rely on. Every length is checked against its parent's, nothing
 * is read past the buffer, and BER's indefinite lengths are read too (RFC 5652 §5.1 allows BER
 * for a SignedData outside its signed attributes).
 */

export class AsnError extends Error {}

/** One element: its tag byte, its whole encoding and its contents. */
export interface Element {
  tag: number;
  /** The element as encoded, tag and length included. */
  bytes: Buffer;
  /** Its contents (for an indefinite length, without the end-of-contents octets). */
  value: Buffer;
}

export const TAG = {
  integer: 0x02,
  octetString: 0x04,
  constructedOctetString: 0x24,
  oid: 0x06,
  sequence: 0x30,
  set: 0x31,
  /** [n] of a constructed element: 0xa0 + n. */
  context: (n: number): number => 0xa0 + n,
  /** [n] IMPLICIT of a primitive element: 0x80 + n. */
  implicit: (n: number): number => 0x80 + n,
} as const;

const CONSTRUCTED = 0x20;
/** Far deeper than any structure read here; a bound on what a crafted secKey can make us recurse. */
const MAX_DEPTH = 32;

interface Span {
  tag: number;
  valueAt: number;
  valueEnd: number;
  end: number;
}

function span(buffer: Buffer, at: number, limit: number, depth: number): Span {
  if (depth > MAX_DEPTH) throw new AsnError('nested too deeply');
  if (at + 2 > limit) throw new AsnError('cut short');
  const tag = buffer[at];
  if ((tag & 0x1f) === 0x1f) throw new AsnError('a tag number above 30');
  const first = buffer[at + 1];
  if (first === 0x80) return indefinite(buffer, tag, at + 2, limit, depth);
  const count = first & 0x7f;
  if (first < 0x80) return definite(tag, at + 2, first, limit);
  if (count > 4 || at + 2 + count > limit) throw new AsnError('a length that cannot be');
  const length = buffer.readUIntBE(at + 2, count);
  return definite(tag, at + 2 + count, length, limit);
}

function definite(tag: number, valueAt: number, length: number, limit: number): Span {
  const end = valueAt + length;
  if (end > limit) throw new AsnError('a length beyond its container');
  return { tag, valueAt, valueEnd: end, end };
}

/** BER: the contents run to two zero octets, which close it. */
function indefinite(buffer: Buffer, tag: number, valueAt: number, limit: number, depth: number): Span {
  if ((tag & CONSTRUCTED) === 0) throw new AsnError('an indefinite length on a primitive element');
  let at = valueAt;
  while (!(buffer[at] === 0 && buffer[at + 1] === 0 && at + 2 <= limit)) at = span(buffer, at, limit, depth + 1).end;
  return { tag, valueAt, valueEnd: at, end: at + 2 };
}

function elementAt(buffer: Buffer, { tag, valueAt, valueEnd, end }: Span, start: number): Element {
  return { tag, bytes: buffer.subarray(start, end), value: buffer.subarray(valueAt, valueEnd) };
}

/** The one element a buffer holds; bytes after it are refused. */
export function readAsn(buffer: Buffer): Element {
  const whole = span(buffer, 0, buffer.length, 0);
  if (whole.end !== buffer.length) throw new AsnError('bytes after the structure');
  return elementAt(buffer, whole, 0);
}

/** `element` when it has `tag`; `what` names it in the error otherwise. */
export function expect(element: Element | undefined, tag: number, what: string): Element {
  if (element?.tag !== tag) throw new AsnError(`${what} is missing or malformed`);
  return element;
}

/** The elements inside `element`, in order, once it is checked to be the constructed `tag`. */
export function childrenOf(element: Element | undefined, tag: number, what: string): Element[] {
  const { value } = expect(element, tag, what);
  if ((tag & CONSTRUCTED) === 0) throw new AsnError(`${what} is not a constructed element`);
  const children: Element[] = [];
  for (let at = 0; at < value.length;) {
    const child = span(value, at, value.length, 1);
    children.push(elementAt(value, child, at));
    at = child.end;
  }
  return children;
}

/** An OBJECT IDENTIFIER's dotted form. */
export function oidOf(element: Element | undefined, what: string): string {
  const { value } = expect(element, TAG.oid, what);
  const arcs: number[] = [];
  let arc = 0;
  for (const byte of value) {
    arc = arc * 128 + (byte & 0x7f);
    if (byte & 0x80) continue;
    arcs.push(arc);
    arc = 0;
  }
  if (arcs.length === 0 || value[value.length - 1] & 0x80) throw new AsnError(`${what} is cut short`);
  const [first, ...rest] = arcs;
  const head = first < 80 ? [Math.floor(first / 40), first % 40] : [2, first - 80];
  return [...head, ...rest].join('.');
}

/** An OCTET STRING's bytes, BER's constructed form (chunks) included. */
export function octetsOf(element: Element | undefined, what: string): Buffer {
  return joined(element, what, 0);
}

/** Chunks may hold chunks (X.690 §8.7.3.2): bounded as span's nesting is, or a few kilobytes of secKey overflow the stack. */
function joined(element: Element | undefined, what: string, depth: number): Buffer {
  if (element?.tag !== TAG.constructedOctetString) return expect(element, TAG.octetString, what).value;
  if (depth >= MAX_DEPTH) throw new AsnError(`${what} is nested too deeply`);
  const chunks = childrenOf(element, TAG.constructedOctetString, what);
  return Buffer.concat(chunks.map((chunk) => joined(chunk, what, depth + 1)));
}
