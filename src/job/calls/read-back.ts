import type { ReadConfig } from '../../config/call-schema.js';
import type { ScalarType } from '../../../common/nuxeo/schemas.js';
import { errorMessage } from '../../../common/errors.js';
import { shortened } from '../../../common/quote.js';
import type { RestRequest } from '../../erp/rest-client.js';
import type { RfcRequest } from '../../erp/rfc-client.js';
import type { ErpPort } from '../../ports/erp-port.js';
import type { RepositoryDocument } from '../../repository/document.js';
import { buildParameters, dig, fill, mapValues, type DateFormat } from './values.js';

/** When SAP's values were last read onto a document. */
export const READ_AT = 'erpData:readAt';

/** The longest text read onto a property: SAP's text fields are shorter; a longer value is refused. */
const TEXT_MAX = 1_000;

/** What a read leaves on a linked document: the values to write with its outcome, and what could not be read. */
export interface ReadBack {
  properties: Record<string, unknown>;
  problems: string[];
}

/** The read's request, and the port it goes through: reads go out in a dry run too. */
type ReadPort = { transport: 'RFC'; erp: ErpPort<RfcRequest> } | { transport: 'Rest'; erp: ErpPort<RestRequest> };

/**
 * SAP's data about a linked document's business object (a task's `read`), as properties of the
 * document: each converted to its property's type, or left out with why. Never throws: a read
 * that fails is a problem to tell, and the link stands.
 */
export async function readBack(
  read: ReadConfig,
  port: ReadPort,
  doc: RepositoryDocument,
  options: { typeOf: (property: string) => ScalarType | undefined; dateFormat: DateFormat; now: Date },
): Promise<ReadBack> {
  let answer: Record<string, unknown>;
  try {
    answer = await ask(read, port, doc, options.dateFormat);
  } catch (error) {
    return { properties: {}, problems: [`SAP's data could not be read: ${errorMessage(error)}`] };
  }
  const refused = refusal(read, answer);
  if (refused !== undefined) return { properties: {}, problems: [`SAP's data could not be read: ${refused}`] };
  const properties: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [property, field] of Object.entries(read.properties)) {
    const converted = convert(dig(answer, field), options.typeOf(property));
    if (converted.ok) properties[property] = converted.value;
    else problems.push(`${property}: SAP's ${field} ${converted.problem}`);
  }
  if (Object.keys(properties).length > 0 && options.typeOf(READ_AT) !== undefined)
    properties[READ_AT] = options.now.toISOString();
  return { properties, problems };
}

function ask(
  read: ReadConfig,
  port: ReadPort,
  doc: RepositoryDocument,
  dateFormat: DateFormat,
): Promise<Record<string, unknown>> {
  const values = mapValues(read.parameters, doc, dateFormat);
  if (port.transport === 'RFC') {
    const tables = Object.fromEntries(read.tables.map((table) => [table, []]));
    return port.erp.read({
      functionName: read.function as string,
      params: { ...buildParameters([values]), ...tables },
    });
  }
  return port.erp.read({
    method: 'GET',
    service: read.service as string,
    path: fill(read.path as string, values),
    headers: {},
    csrf: false,
  });
}

/** The message of the answer's failing row (`failWhen`), a field of a table read in every row. */
function refusal(read: ReadConfig, answer: Record<string, unknown>): string | undefined {
  const rule = read.failWhen;
  if (rule === undefined) return undefined;
  const cut = rule.field.lastIndexOf('.');
  const holder = cut < 0 ? answer : dig(answer, rule.field.slice(0, cut));
  const rows = Array.isArray(holder) ? (holder as unknown[]) : [holder];
  const field = rule.field.slice(cut + 1);
  const messageField = rule.message.slice(rule.message.lastIndexOf('.') + 1);
  const row = rows.find((r) => rule.in.includes(String(dig(r, field))));
  return row === undefined ? undefined : String(dig(row, messageField) ?? rule.field);
}

type Converted = { ok: true; value: unknown } | { ok: false; problem: string };

/**
 * A value of SAP's answer as the property's type takes it: numbers as SAP writes them (`1190.00`,
 * OData's Edm.Decimal as text, ABAP's trailing minus `5.00-`), dates as asXML (`YYYY-MM-DD`), ABAP
 * (`YYYYMMDD`) or OData V2 (`/Date(ms)/`) write them, SAP's empty date (`0000-00-00`) as none, flags
 * `X`/blank. A property of a schema connect2erp does not know (the administrator's own) takes text.
 */
export function convert(raw: unknown, type: ScalarType | undefined): Converted {
  if (raw === undefined || raw === null) return { ok: false, problem: 'is not in the answer' };
  if (typeof raw === 'object') return { ok: false, problem: 'is a structure or a table, not a value' };
  const text = String(raw).trim();
  const refuse = (what: string): Converted => ({ ok: false, problem: `= "${shortened(text)}" is not ${what}` });
  if (type === 'long' || type === 'double') {
    const signed = text.endsWith('-') ? `-${text.slice(0, -1)}` : text;
    if (!/^-?\d+(\.\d+)?$/.test(signed)) return refuse('a number');
    const value = Number(signed);
    if (type === 'long' && !Number.isSafeInteger(value)) return refuse('a whole number');
    return { ok: true, value };
  }
  if (type === 'date') return sapDateValue(text, refuse);
  if (type === 'boolean') {
    if (text === 'X' || text === 'true') return { ok: true, value: true };
    return text === '' || text === 'false' ? { ok: true, value: false } : refuse('a flag (X or blank)');
  }
  if (text.length > TEXT_MAX)
    return { ok: false, problem: `is longer than the ${TEXT_MAX} characters a value may have` };
  return { ok: true, value: text };
}

function sapDateValue(text: string, refuse: (what: string) => Converted): Converted {
  if (text === '' || /^0{4}-?0{2}-?0{2}$/.test(text)) return { ok: true, value: null };
  const odata = /^\/Date\((-?\d+)(?:[+-]\d{4})?\)\/$/.exec(text);
  if (odata !== null) return { ok: true, value: new Date(Number(odata[1])).toISOString().slice(0, 10) };
  const match = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(text);
  if (match === null || Number.isNaN(Date.parse(`${match[1]}-${match[2]}-${match[3]}`))) return refuse('a date');
  return { ok: true, value: `${match[1]}-${match[2]}-${match[3]}` };
}
