import { XMLParser, type EntityDecoderOptions } from 'fast-xml-parser';

/** RFC values as SOAP-RFC carries them: scalars, structures (nested elements) and tables (rows as `<item>`). */
type RfcScalar = string;
export type RfcStructure = Record<string, RfcScalar>;
type RfcTable = RfcStructure[];
export type RfcParams = Record<string, RfcScalar | RfcStructure | RfcTable>;

const RFC_NAMESPACE = 'urn:sap-com:document:sap:rfc:functions';
const SOAP_ENV = 'http://schemas.xmlsoap.org/soap/envelope/';

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', apos: "'", quot: '"' };
const REFERENCE = /&(?:#x([0-9a-fA-F]{1,6})|#([0-9]{1,7})|(lt|gt|amp|apos|quot));/g;

/** Whether a code point is a character XML 1.0 can carry (its Char production, §2.2). */
const isXmlChar = (code: number): boolean =>
  code === 0x9 ||
  code === 0xa ||
  code === 0xd ||
  (code >= 0x20 && code <= 0xd7ff) ||
  (code >= 0xe000 && code <= 0xfffd) ||
  (code >= 0x10000 && code <= 0x10ffff);

function referenced(reference: string, hex?: string, decimal?: string, name?: string): string {
  if (name !== undefined) return PREDEFINED[name];
  const code = hex === undefined ? Number(decimal) : parseInt(hex, 16);
  // A reference to a character XML cannot carry is not well-formed: it stays as it was written.
  return isXmlChar(code) ? String.fromCodePoint(code) : reference;
}

const nothingToKeep = (): void => undefined;

/**
 * XML 1.0's references and no others (§4.1, §4.6): the five predefined entities and character
 * references (`&#xD;`). A DOCTYPE's entities are not expanded and HTML's (`&nbsp;`) are not XML's:
 * both stay as written. One decoder, stateless, for every answer: fast-xml-parser's own is built
 * with its entity tables for each document parsed, which cost more than the parse.
 */
const xmlReferences: EntityDecoderOptions = {
  decode: (text) => (text.includes('&') ? text.replace(REFERENCE, referenced) : text),
  reset: nothingToKeep,
  setXmlVersion: nothingToKeep,
  setExternalEntities: nothingToKeep,
  addInputEntities: nothingToKeep,
};

// Every value stays text: SAP's CHAR and NUMC fields keep their leading zeros.
const parser = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  parseTagValue: false,
  entityDecoder: xmlReferences,
  isArray: (name) => name === 'item',
});

/** Characters XML 1.0 cannot carry (its Char production, §2.2): C0 controls but tab and line ends, U+FFFE/U+FFFF, lone surrogates. */
const NOT_XML =
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The first character of a value a SOAP-RFC request cannot carry, as U+XXXX; undefined when it has none. */
export function notInXml(value: string): string | undefined {
  const found = NOT_XML.exec(value)?.[0];
  return found === undefined ? undefined : `U+${found.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** A `/` in an ABAP name is written `_-` in XML (`/BIC/X` → `_-BIC_-X`). */
const xmlName = (name: string): string => name.replace(/\//g, '_-');
const abapName = (name: string): string => name.replace(/_-/g, '/');

// A carriage return as a reference: a parser reads a raw one as a line feed (XML 1.0 §2.11).
const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
  '\r': '&#13;',
};
const escaped = (text: string): string => text.replace(/[&<>"'\r]/g, (c) => ENTITIES[c]);

/** `<name>content</name>`, or `<name/>` when empty: an empty value and an empty table read alike. */
const tag = (name: string, content: string, attributes = ''): string =>
  content === '' ? `<${name}${attributes}/>` : `<${name}${attributes}>${content}</${name}>`;

const structure = (fields: RfcStructure): string =>
  Object.entries(fields)
    .map(([name, value]) => tag(xmlName(name), escaped(value)))
    .join('');

function field(value: RfcScalar | RfcStructure | RfcTable): string {
  if (Array.isArray(value)) return value.map((row) => tag('item', structure(row))).join('');
  return typeof value === 'string' ? escaped(value) : structure(value);
}

/**
 * A SOAP 1.1 envelope whose body is one RFC element holding these parameters, written as text: the
 * envelope is always this one shape, so no generic XML builder runs per call. Names are ABAP names
 * (letters, digits, `_` and `/`), values are escaped.
 */
function envelope(bodyElement: string, values: RfcParams): string {
  const fields = Object.entries(values)
    .map(([name, value]) => tag(xmlName(name), field(value)))
    .join('');
  const body = tag(`urn:${bodyElement}`, fields, ` xmlns:urn="${RFC_NAMESPACE}"`);
  return `<?xml version="1.0" encoding="utf-8"?><soap-env:Envelope xmlns:soap-env="${SOAP_ENV}"><soap-env:Body>${body}</soap-env:Body></soap-env:Envelope>`;
}

/** The SOAP 1.1 request for one function module call. */
export function requestEnvelope(functionName: string, params: RfcParams): string {
  return envelope(xmlName(functionName), params);
}

/** An ABAP exception as a SOAP fault carries it: exception name, message text and message id/number. */
export interface RfcFaultDetail {
  exception: string;
  text: string;
  messageId?: string;
  messageNumber?: string;
  /** The SOAP runtime's own fault, before any function ran (a request it could not read): no ABAP exception. */
  runtime?: true;
}

type SoapAnswer =
  | { kind: 'response'; values: Record<string, unknown> }
  | { kind: 'fault'; fault: RfcFaultDetail }
  | { kind: 'unreadable' };

type Tree = Record<string, unknown>;

function mapKeys<T>(record: Record<string, T>, rename: (name: string) => string): Record<string, T> {
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [rename(k), v]));
}

function normalise(value: unknown): unknown {
  if (value === '' || value === undefined) return '';
  if (typeof value !== 'object' || value === null) return value;
  const record = value as Tree;
  if ('item' in record) return (record.item as unknown[]).map(normalise);
  return mapKeys(Object.fromEntries(Object.entries(record).map(([k, v]) => [k, normalise(v)])), abapName);
}

/** Read a SOAP-RFC answer: `<FM>.Response` values, or the fault with the ABAP exception. */
export function parseAnswer(functionName: string, xml: string): SoapAnswer {
  let tree: Tree;
  try {
    tree = parser.parse(xml) as Tree;
  } catch {
    return { kind: 'unreadable' };
  }
  const body = (tree.Envelope as Tree | undefined)?.Body as Tree | undefined;
  const response = body?.[`${xmlName(functionName)}.Response`];
  if (response !== undefined) {
    // An empty `<FM.Response/>` (nothing exported) reads as an empty string.
    const values = normalise(response);
    return { kind: 'response', values: typeof values === 'object' ? (values as Record<string, unknown>) : {} };
  }
  const fault = body?.Fault as Tree | undefined;
  if (fault === undefined) return { kind: 'unreadable' };
  const detail = Object.values((fault.detail as Tree | undefined) ?? {})[0] as Tree | undefined;
  const message = detail?.Message as Tree | undefined;
  return {
    kind: 'fault',
    fault: {
      exception: String(detail?.Name ?? fault.faultstring),
      text: String(detail?.Text ?? fault.faultstring),
      messageId: message?.ID as string | undefined,
      messageNumber: message?.Number as string | undefined,
      ...(detail === undefined ? { runtime: true as const } : {}),
    },
  };
}

/** A table in an answer: its rows, or none when SAP left it out or sent it empty. */
export function tableRows(value: unknown): RfcStructure[] {
  return Array.isArray(value) ? (value as RfcStructure[]) : [];
}
