import { PLACEHOLDER, TARGET, type Transform, type ValueSpec } from '../../config/call-schema.js';
import { DocumentError } from '../../../common/errors.js';
import { shortened } from '../../../common/quote.js';
import { withoutSignature } from '../../document-link.js';
import type { RfcParams, RfcStructure } from '../../erp/soap.js';
import type { RepositoryDocument } from '../../repository/document.js';
import type { DocumentUrls } from './document-url.js';

/** One mapped value of one document, after its transforms and length check. */
export interface MappedValue {
  target: string;
  value: string;
  /** False for constants: a fixed table row with no value from the document is left out. */
  fromDocument: boolean;
}

/** A value found at `prefix:name` or, for complex properties, `prefix:name.field`. */
function propertyValue(properties: Record<string, unknown>, property: string): unknown {
  const [key, ...fields] = property.split('.');
  return fields.reduce<unknown>(
    (value, field) =>
      value === null || typeof value !== 'object' ? undefined : (value as Record<string, unknown>)[field],
    properties[key],
  );
}

const text = (value: unknown): string => (value === undefined || value === null ? '' : String(value));

/** Why a value cannot be sent, naming the document, the property and the SAP field. */
class ValueRefused extends DocumentError {
  constructor(doc: RepositoryDocument, source: string, value: string, problem: string) {
    super(`${source} = "${shortened(withoutSignature(value))}" ${problem}`, { target: doc.path });
  }
}

/** How a date goes to SAP: SAP's SOAP runtime reads asXML's `YYYY-MM-DD`; other gateways may want `YYYYMMDD`. */
export type DateFormat = 'YYYY-MM-DD' | 'YYYYMMDD';

/** A text that starts with a date (`YYYY-MM-DD…`, as Nuxeo writes them) in the form SAP is sent; undefined for any other. */
export function sapDate(text: string, dates: DateFormat): string | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(text);
  if (match === null) return undefined;
  return dates === 'YYYYMMDD' ? `${match[1]}${match[2]}${match[3]}` : `${match[1]}-${match[2]}-${match[3]}`;
}

function applyTransform(
  value: unknown,
  transform: Transform,
  refuse: (problem: string) => never,
  dates: DateFormat,
): unknown {
  if (transform === 'flag') return value === true || value === 'true' || value === 'X' ? 'X' : '';
  const s = text(value);
  if (transform === 'upper') return s.toUpperCase();
  if (transform === 'trim') return s.trim();
  if (transform === 'date') {
    if (s === '') return '';
    return sapDate(s, dates) ?? refuse('is not a date (YYYY-MM-DD) for');
  }
  if ('pad' in transform) {
    const { length, with: fill, side } = transform.pad;
    if (s === '') return '';
    return side === 'left' ? s.padStart(length, fill) : s.padEnd(length, fill);
  }
  if ('map' in transform)
    return Object.hasOwn(transform.map, s) ? transform.map[s] : refuse(`has no entry in the map of`);
  const { start, length } = transform.substring;
  return s.substring(start, length === undefined ? undefined : start + length);
}

/** A parameter's value before its transforms: the document's property, the constant, or the document's address. */
function rawValue(spec: ValueSpec, doc: RepositoryDocument, urls: DocumentUrls | undefined): unknown {
  if (spec.property !== undefined) return propertyValue(doc.properties, spec.property);
  if (spec.documentUrl === undefined) return spec.constant;
  if (urls === undefined)
    throw new DocumentError(`its system has no documentLinks in erpHttp.yaml: no address to link it by`, {
      target: doc.path,
    });
  return urls[spec.documentUrl](doc);
}

/** The document's values for every mapped parameter, refused before any call when one does not fit. */
export function mapValues(
  parameters: Record<string, ValueSpec>,
  doc: RepositoryDocument,
  dates: DateFormat = 'YYYY-MM-DD',
  urls?: DocumentUrls,
): MappedValue[] {
  return Object.entries(parameters).map(([target, spec]) => {
    const source = spec.property ?? (spec.documentUrl === undefined ? `constant ${target}` : `documentUrl ${target}`);
    const raw = rawValue(spec, doc, urls);
    const refuse = (problem: string): never => {
      throw new ValueRefused(doc, source, text(raw), `${problem} SAP field ${target}`);
    };
    const value = text(spec.transform.reduce((v, t) => applyTransform(v, t, refuse, dates), raw));
    if (spec.length !== undefined && value.length > spec.length)
      refuse(`is longer than the ${spec.length} characters of`);
    return { target, value, fromDocument: spec.constant === undefined };
  });
}

/**
 * Parameters as the ERP takes them, from one document or (for `TABLE[].FIELD` columns) a batch:
 * blank scalars and structure fields are left out so SAP applies its own defaults.
 */
export function buildParameters(documents: MappedValue[][]): RfcParams {
  const params: RfcParams = {};
  const fixedRows = new Map<string, Map<number, { row: RfcStructure; used: boolean }>>();
  documents.forEach((values, index) => {
    for (const { target, value, fromDocument } of values) {
      const [, name, row, field] = TARGET.exec(target) as RegExpExecArray;
      if (row === '') {
        const table = (params[name] ??= []) as RfcStructure[];
        (table[index] ??= {})[field] = value;
      } else if (index > 0) {
        continue; // in a batch only the columns differ between documents
      } else if (row !== undefined) {
        const rows = fixedRows.get(name) ?? fixedRows.set(name, new Map()).get(name)!;
        const entry = rows.get(Number(row)) ?? rows.set(Number(row), { row: {}, used: false }).get(Number(row))!;
        entry.row[field] = value;
        entry.used ||= fromDocument && value !== '';
      } else if (field === undefined) {
        if (value !== '') params[name] = value;
      } else {
        const structure = (params[name] ??= {}) as RfcStructure;
        if (value !== '') structure[field] = value;
      }
    }
  });
  for (const [name, rows] of fixedRows) {
    params[name] = [...rows.entries()]
      .sort(([a], [b]) => a - b)
      .filter(([, r]) => r.used)
      .map(([, r]) => r.row);
  }
  return params;
}

/** A dotted path into an answer: `RETURN.TYPE`, `results`. */
export function dig(tree: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>(
      (node, key) => (node === null || typeof node !== 'object' ? undefined : (node as Record<string, unknown>)[key]),
      tree,
    );
}

/** OData V2 string literal: single quotes, a quote inside doubled. */
const odataString = (value: string): string => `'${value.replace(/'/g, "''")}'`;

/**
 * Fill `{NAME}` placeholders from the mapped values (and `{response.x}` from the answer).
 * Only substitution: nothing in a template is ever evaluated.
 */
export function fill(template: string, values: MappedValue[], response?: unknown): string {
  const byTarget = new Map(values.map((v) => [v.target, v.value]));
  return template.replace(PLACEHOLDER, (_, encoding: string | undefined, names: string) => {
    const value =
      names
        .split('|')
        .map((name) =>
          name.startsWith('response.')
            ? text(dig(response, name.slice('response.'.length)))
            : (byTarget.get(name) ?? ''),
        )
        .find((v) => v !== '') ?? '';
    if (encoding === 'q') return encodeURIComponent(odataString(value));
    return encoding === 'u' ? urlPart(value, names) : value;
  });
}

/**
 * A value percent-encoded for a path segment or a query value. `.` and `..` stay what they are
 * however encoded (a URL parser reads `%2E%2E` as `..` too) and would move up the path: refused.
 */
function urlPart(value: string, names: string): string {
  if (value === '.' || value === '..')
    throw new DocumentError(
      `{u:${names}} = "${shortened(value)}" cannot be placed into a URL: it would name another path`,
    );
  return encodeURIComponent(value);
}
