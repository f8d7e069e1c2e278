import { XMLBuilder, XMLParser } from 'fast-xml-parser';

/** RFC values as SOAP-RFC carries them: scalars, structures (nested elements) and tables (rows as `<item>`). */
export type RfcScalar = string;
export type RfcStructure = Record<string, RfcScalar>;
export type RfcTable = RfcStructure[];
export type RfcParams = Record<string, RfcScalar | RfcStructure | RfcTable>;

export const RFC_NAMESPACE = 'urn:sap-com:document:sap:rfc:functions';
const SOAP_ENV = 'http://schemas.xmlsoap.org/soap/envelope/';

const builder = new XMLBuilder({ ignoreAttributes: false, suppressEmptyNode: true });
// Every value stays text: SAP's CHAR and NUMC fields keep their leading zeros.
const parser = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  parseTagValue: false,
  isArray: (name) => name === 'item',
});

/** A `/` in an ABAP name is written `_-` in XML (`/BIC/X` → `_-BIC_-X`). */
export const xmlName = (name: string): string => name.replace(/\//g, '_-');
const abapName = (name: string): string => name.replace(/_-/g, '/');

function element(value: RfcScalar | RfcStructure | RfcTable): unknown {
  if (Array.isArray(value)) return { item: value.map((row) => mapKeys(row, xmlName)) };
  return typeof value === 'string' ? value : mapKeys(value, xmlName);
}

function mapKeys<T>(record: Record<string, T>, rename: (name: string) => string): Record<string, T> {
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [rename(k), v]));
}

/** A SOAP 1.1 envelope whose body is one RFC element holding these parameters. */
function envelope(bodyElement: string, values: RfcParams): string {
  const fields = Object.fromEntries(Object.entries(values).map(([k, v]) => [xmlName(k), element(v)]));
  return `<?xml version="1.0" encoding="utf-8"?>${builder.build({
    'soap-env:Envelope': {
      '@_xmlns:soap-env': SOAP_ENV,
      'soap-env:Body': { [`urn:${bodyElement}`]: { '@_xmlns:urn': RFC_NAMESPACE, ...fields } },
    },
  })}`;
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

export type SoapAnswer =
  | { kind: 'response'; values: Record<string, unknown> }
  | { kind: 'fault'; fault: RfcFaultDetail }
  | { kind: 'unreadable' };

type Tree = Record<string, unknown>;

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
