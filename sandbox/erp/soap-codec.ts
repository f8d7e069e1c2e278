import { XMLBuilder } from 'fast-xml-parser';
import { SaxesParser } from 'saxes';

/**
 * SOAP-RFC as SAP's ICF service `/sap/bc/soap/rfc` speaks it, written for the ERP sandbox from
 * SAP's documentation and public callers, never from the job's own codec (which the sandbox
 * checks). Sources, and the golden envelopes each rule is tested against, are in
 * test/fixtures/soap-rfc/README.md:
 * - the request body is one element `<FM>` in the namespace `urn:sap-com:document:sap:rfc:functions`,
 *   holding the import and table parameters; a structure is nested elements; a table's rows are
 *   `<item>` elements; a `/` in a name is written `_-` (SAP help, "Structure of a SOAP Message";
 *   Perl SAP::WAS::SOAP);
 * - the answer is `<FM.Response>` with the export and table parameters (SAP::WAS::SOAP);
 * - an ABAP exception is a SOAP 1.1 fault whose detail is `<FM.Exception>` with `Name`, `Text` and
 *   `Message` (`ID`, `Number`), as in the RFC WSDLs SAP generates (inferred for this service).
 */

export type SapValue = string | SapStructure | SapStructure[];
export interface SapStructure {
  [field: string]: SapValue;
}

const RFC_FUNCTIONS_NS = 'urn:sap-com:document:sap:rfc:functions';
const SOAP_ENV_NS = 'http://schemas.xmlsoap.org/soap/envelope/';

const builder = new XMLBuilder({ ignoreAttributes: false, suppressEmptyNode: true });

const toAbap = (xml: string): string => xml.replace(/_-/g, '/');
const toXml = (abap: string): string => abap.replace(/\//g, '_-');

/** An element as read: its namespace, its text and its child elements in order. */
interface Element {
  local: string;
  uri: string;
  text: string;
  children: Element[];
}

/**
 * The request as a tree of elements, read by a conforming XML parser (saxes, namespaces resolved),
 * or why it is not XML: a request that is not well-formed (a tag left open, two root elements, an
 * undefined entity such as `&nbsp;`, an unescaped `&` or `<` in a value) is refused: XML 1.0 makes
 * each a fatal error that a conforming processor reports and does not read past (§1.2, §5.1), and
 * SAP's documentation does not list anything its SOAP runtime tolerates (the stricter reading).
 */
function parseElements(xml: string): Element | string {
  const parser = new SaxesParser({ xmlns: true, position: false });
  const open: Element[] = [];
  const top: Element[] = [];
  parser.on('opentag', (tag) => {
    const element: Element = { local: tag.local, uri: tag.uri, text: '', children: [] };
    (open.at(-1)?.children ?? top).push(element);
    open.push(element);
  });
  parser.on('text', (text) => {
    const current = open.at(-1);
    if (current !== undefined) current.text += text;
  });
  parser.on('closetag', () => open.pop());
  try {
    parser.write(xml).close();
  } catch (error) {
    return `The request is not well-formed XML: ${(error as Error).message}`;
  }
  // A well-formed document has exactly one root element (saxes refuses none and a second).
  return top[0];
}

const isTable = (element: Element): boolean =>
  element.children.length > 0 && element.children.every((child) => child.local === 'item');

/** A field given twice in one structure, anywhere below `element`: refused, as no source says which would count (the stricter reading). */
function fieldTwice(element: Element): string | undefined {
  if (!isTable(element)) {
    const names = element.children.map((child) => child.local);
    const twice = names.find((name, i) => names.indexOf(name) !== i);
    if (twice !== undefined) return `${toAbap(element.local)} has the field ${toAbap(twice)} twice`;
  }
  for (const child of element.children) {
    const found = fieldTwice(child);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * An element's content as SAP values: text, a structure, or a table when it holds `<item>`s. Text
 * as asXML takes it into a CHAR field: leading blanks kept (`" Hi"` is `" Hi"`, ABAP keyword
 * documentation, "asXML - Mapping of Elementary ABAP Types"), trailing ones dropped, as a CHAR
 * field holds none of its own.
 */
function read(element: Element): SapValue {
  if (element.children.length === 0) return element.text.trimEnd();
  if (isTable(element)) return element.children.map((row) => read(row) as SapStructure);
  return Object.fromEntries(element.children.map((child) => [toAbap(child.local), read(child)]));
}

function write(value: SapValue): unknown {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return { item: value.map(write) };
  return Object.fromEntries(Object.entries(value).map(([name, field]) => [toXml(name), write(field)]));
}

/**
 * The call a request envelope asks for, or why the SOAP runtime refuses it: a SOAP 1.1 `Envelope`
 * whose `Body` holds one element in the RFC functions' namespace, named after the function
 * module (test/fixtures/soap-rfc/README.md). An envelope or body in another namespace, or a body
 * element outside the RFC namespace, is refused, not read by its local name.
 */
export function readCall(xml: string): { functionName: string; params: SapStructure } | { refused: string } {
  const envelope = parseElements(xml);
  if (typeof envelope === 'string') return { refused: envelope };
  if (envelope.local !== 'Envelope' || envelope.uri !== SOAP_ENV_NS)
    return { refused: `The request is not a SOAP 1.1 envelope (${SOAP_ENV_NS})` };
  const body = envelope.children.find((child) => child.local === 'Body' && child.uri === SOAP_ENV_NS);
  const [call] = body?.children ?? [];
  if (call === undefined) return { refused: 'The request is not a SOAP envelope with a function module' };
  if (call.uri !== RFC_FUNCTIONS_NS)
    return { refused: `The body's element ${call.local} is not in the namespace ${RFC_FUNCTIONS_NS}` };
  const twice = fieldTwice(call);
  if (twice !== undefined) return { refused: twice };
  const params = read(call);
  return {
    functionName: toAbap(call.local),
    params: typeof params === 'object' && !Array.isArray(params) ? params : {},
  };
}

function envelope(body: Record<string, unknown>): string {
  return `<?xml version="1.0" encoding="utf-8"?>${builder.build({ 'soap-env:Envelope': { '@_xmlns:soap-env': SOAP_ENV_NS, 'soap-env:Body': body } })}`;
}

/** `<FM.Response>` with the exports and the tables. */
export function responseXml(functionName: string, exports: SapStructure): string {
  return envelope({
    [`rfc:${toXml(functionName)}.Response`]: { '@_xmlns:rfc': RFC_FUNCTIONS_NS, ...(write(exports) as object) },
  });
}

export interface SapException {
  name: string;
  text: string;
  /** SAP's message class and number, where a public source gives them. */
  message?: { id: string; number: string };
}

/** A fault for an ABAP exception raised by the function. */
export function exceptionXml(functionName: string, exception: SapException): string {
  const message =
    exception.message === undefined ? {} : { Message: { ID: exception.message.id, Number: exception.message.number } };
  return envelope({
    'soap-env:Fault': {
      faultcode: 'soap-env:Client',
      faultstring: exception.name,
      detail: {
        [`rfc:${toXml(functionName)}.Exception`]: {
          '@_xmlns:rfc': RFC_FUNCTIONS_NS,
          Name: exception.name,
          Text: exception.text,
          ...message,
        },
      },
    },
  });
}

/** A fault raised before or around the function: a value the runtime cannot read, a system failure. */
export function runtimeFaultXml(code: 'Client' | 'Server', text: string): string {
  return envelope({ 'soap-env:Fault': { faultcode: `soap-env:${code}`, faultstring: text } });
}
