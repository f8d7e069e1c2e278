import { XMLBuilder, XMLParser } from 'fast-xml-parser';

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

export const RFC_FUNCTIONS_NS = 'urn:sap-com:document:sap:rfc:functions';
const SOAP_ENV_NS = 'http://schemas.xmlsoap.org/soap/envelope/';

const parser = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  parseTagValue: false,
  trimValues: true,
  // Character references (`&#13;`) read as their characters, as every XML parser must (XML 1.0 §4.1);
  // fast-xml-parser decodes them only with its HTML entities, which a strict parser would refuse.
  htmlEntities: true,
  isArray: (name) => name === 'item',
});
const builder = new XMLBuilder({ ignoreAttributes: false, suppressEmptyNode: true });

const toAbap = (xml: string): string => xml.replace(/_-/g, '/');
const toXml = (abap: string): string => abap.replace(/\//g, '_-');

/** An element's content as SAP values: text, a structure, or a table when it holds `<item>`s. */
function read(node: unknown): SapValue {
  if (node === undefined || node === null || node === '') return '';
  if (typeof node !== 'object') return String(node);
  const record = node as Record<string, unknown>;
  if (Array.isArray(record.item)) return record.item.map((row) => read(row) as SapStructure);
  return Object.fromEntries(Object.entries(record).map(([name, value]) => [toAbap(name), read(value)]));
}

function write(value: SapValue): unknown {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return { item: value.map(write) };
  return Object.fromEntries(Object.entries(value).map(([name, field]) => [toXml(name), write(field)]));
}

/** The call a request envelope asks for; undefined when the body holds no function element. */
export function readCall(xml: string): { functionName: string; params: SapStructure } | undefined {
  let tree: { Envelope?: { Body?: Record<string, unknown> } };
  try {
    tree = parser.parse(xml) as typeof tree;
  } catch {
    return undefined;
  }
  const body = tree.Envelope?.Body;
  const [name, content] = Object.entries(body ?? {})[0] ?? [];
  if (name === undefined) return undefined;
  const params = read(content);
  return { functionName: toAbap(name), params: typeof params === 'object' && !Array.isArray(params) ? params : {} };
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
