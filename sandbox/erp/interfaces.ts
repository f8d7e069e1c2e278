import type { SapStructure, SapValue } from './soap-codec.js';

/**
 * The interfaces of the function modules the ERP sandbox serves, as SAP declares them (sources in
 * test/fixtures/soap-rfc/README.md and ../shared/reference/sap-interfaces.md §1), and how the
 * SOAP runtime reads their values: SAP's asXML rules (help.sap.com, "Mapping Rules": ABAP `d` is
 * `YYYY-MM-DD`, `t` is `hh:mm:ss`, `n` a string of digits), as the RFC WSDLs SAP generates declare
 * them (`date10`: `\d\d\d\d-\d\d-\d\d`). A value the runtime cannot read, a name not in the
 * interface, or a value longer than its field is refused before the function runs: where SAP's
 * own behaviour is not documented, the stricter reading.
 */

export type Field = { kind: 'CHAR'; length: number } | { kind: 'DATS' };
export type Fields = Record<string, Field>;

export interface FunctionInterface {
  /** Scalars and structures the caller sends. */
  imports: Record<string, Field | Fields>;
  /** Tables, sent and answered. */
  tables: Record<string, Fields>;
  /** What the function answers; a caller may name them (to ask for them), never give them values. */
  exports: string[];
}

const char = (length: number): Field => ({ kind: 'CHAR', length });
const DATS: Field = { kind: 'DATS' };

/** BAPIRET2, the return structure of BAPIs. */
const BAPIRET2 = [
  'TYPE',
  'ID',
  'NUMBER',
  'MESSAGE',
  'LOG_NO',
  'LOG_MSG_NO',
  'MESSAGE_V1',
  'MESSAGE_V2',
  'MESSAGE_V3',
  'MESSAGE_V4',
  'PARAMETER',
  'ROW',
  'FIELD',
  'SYSTEM',
];
export const EMPTY_RETURN: SapStructure = Object.fromEntries(
  BAPIRET2.map((field) => [field, field === 'NUMBER' ? '000' : '']),
);

/** TOAV0, the rows of ARCHIV_GET_CONNECTIONS. */
const TOAV0: Fields = {
  MANDT: char(3),
  SAP_OBJECT: char(10),
  OBJECT_ID: char(50),
  ARCHIV_ID: char(2),
  ARC_DOC_ID: char(40),
  AR_OBJECT: char(10),
  AR_DATE: DATS,
  DEL_DATE: DATS,
  RESERVE: char(10),
};

export const INTERFACES: Record<string, FunctionInterface> = {
  RFC_PING: { imports: {}, tables: {}, exports: [] },
  ARCHIV_CONNECTION_INSERT: {
    imports: {
      ARCHIV_ID: char(2),
      ARC_DOC_ID: char(40),
      AR_OBJECT: char(10),
      OBJECT_ID: char(50),
      SAP_OBJECT: char(10),
      AR_DATE: DATS,
      DEL_DATE: DATS,
      MANDANT: char(3),
      DOC_TYPE: char(20),
      BARCODE: char(40),
      FILENAME: char(255),
      DESCR: char(60),
      CREATOR: char(12),
    },
    tables: {},
    exports: [],
  },
  ARCHIV_GET_CONNECTIONS: {
    imports: {
      OBJECTTYPE: char(10),
      OBJECT_ID: char(50),
      DOCUMENTTYPE: char(10),
      ARCHIV_ID: char(2),
      ARC_DOC_ID: char(40),
      // The storage-date range (public ABAP call sites of ARCHIV_GET_CONNECTIONS list both, with CLIENT,
      // DOCUMENTCLASS, DEL_DATE, LIMITED and LIMIT, which the job never sends).
      FROM_AR_DATE: DATS,
      UNTIL_AR_DATE: DATS,
    },
    tables: { CONNECTIONS: TOAV0 },
    exports: ['COUNT'],
  },
  BAPI_BARCODE_SENDLIST: {
    imports: {},
    // BAPIBARC's lengths are not published: those of the table it fills (BDS_BAR_EX) and of ARCHIV_ID.
    tables: { BARCODETABLE: { BARCODE: char(40), CONTREP: char(2), DOCID: char(40), ARDATE: DATS, DOCTYPE: char(20) } },
    exports: ['RETURN'],
  },
  ARCHIV_PROCESS_RFCINPUT: {
    // OARFCIN, 113 characters: BARCODE (40) is inferred from that length and from callers that start by bar code alone.
    imports: {
      DOCUMENT_ENTRY: {
        ARCHIV_ID: char(2),
        ARC_DOC_ID: char(40),
        AR_OBJECT: char(10),
        DOC_TYPE: char(20),
        BARCODE: char(40),
        LATE: char(1),
      },
    },
    // OARFCDATA, 510 characters: workflow container elements, read back with SAP_WAPI_READ_CONTAINER.
    tables: { DOCUMENT_DATA: { NAME: char(255), WERT: char(255) } },
    exports: [],
  },
  SAP_WAPI_START_WORKFLOW: {
    imports: { TASK: char(14), USER: char(12), LANGUAGE: char(1), DO_COMMIT: char(1), START_ASYNCHRONOUS: char(1) },
    // SWRAGENT: OTYPE (2) and OBJID (12), 14 in all. SWR_CONT: a container element and its value.
    tables: {
      AGENTS: { OTYPE: char(2), OBJID: char(12) },
      INPUT_CONTAINER: { ELEMENT: char(32), VALUE: char(255) },
      MESSAGE_LINES: { LINE: char(255) },
    },
    exports: ['RETURN_CODE', 'WORKITEM_ID', 'NEW_STATUS'],
  },
  /**
   * RFC_READ_TABLE: the generic, read-only table reader, as public callers pass it (PyRFC and
   * node-rfc scripts): QUERY_TABLE, DELIMITER, OPTIONS rows of at most 72 characters forming the
   * WHERE clause, FIELDS by FIELDNAME, the rows in DATA's WA (512 characters). Its ROWCOUNT,
   * ROWSKIPS and NO_DATA are not modelled, so a call with them is refused as an unknown
   * parameter: connect2erp never sends them.
   */
  RFC_READ_TABLE: {
    imports: { QUERY_TABLE: char(30), DELIMITER: char(1) },
    tables: {
      OPTIONS: { TEXT: char(72) },
      FIELDS: { FIELDNAME: char(30), OFFSET: char(6), LENGTH: char(6), TYPE: char(1), FIELDTEXT: char(60) },
      DATA: { WA: char(512) },
    },
    exports: [],
  },
};

/** A value the SOAP runtime refuses before the function runs (a Client fault). */
export class UnreadableValue extends Error {}

const validDate = (text: string): boolean => {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (match === null) return false;
  if (text === '0000-00-00') return true;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(text);
};

/** One value read as its field declares it; a date is kept as ABAP keeps it, `YYYYMMDD`. */
function scalar(name: string, field: Field, value: SapValue): string {
  if (typeof value !== 'string') throw new UnreadableValue(`${name} is a ${field.kind} field, not a structure`);
  if (field.kind === 'DATS') {
    if (value === '') return '';
    if (!validDate(value)) throw new UnreadableValue(`value "${value}" of ${name} is not a date (YYYY-MM-DD)`);
    return value.replace(/-/g, '');
  }
  if (value.length > field.length)
    throw new UnreadableValue(`value of ${name} is longer than its ${field.length} characters`);
  return value;
}

function structure(name: string, fields: Fields, value: SapValue): SapStructure {
  if (typeof value === 'string' && value === '') return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new UnreadableValue(`${name} is a structure`);
  return Object.fromEntries(
    Object.entries(value).map(([field, v]) => {
      const declared = fields[field];
      if (declared === undefined) throw new UnreadableValue(`${name} has no field ${field}`);
      return [field, scalar(`${name}-${field}`, declared, v)];
    }),
  );
}

/** A table's rows: its `<item>`s; an empty element is no rows. */
function rowsOf(name: string, value: SapValue): SapValue[] {
  if (value === '') return [];
  if (!Array.isArray(value)) throw new UnreadableValue(`${name} is a table: its rows are <item> elements`);
  return value;
}

/** The request's parameters read against the interface; throws UnreadableValue. */
export function readParams(functionName: string, iface: FunctionInterface, params: SapStructure): SapStructure {
  const read: SapStructure = {};
  for (const [name, value] of Object.entries(params)) {
    const imported = iface.imports[name];
    const table = iface.tables[name];
    if (imported !== undefined)
      read[name] = 'kind' in imported ? scalar(name, imported as Field, value) : structure(name, imported, value);
    else if (table !== undefined) read[name] = rowsOf(name, value).map((row) => structure(name, table, row));
    else if (!iface.exports.includes(name)) throw new UnreadableValue(`${name} is not a parameter of ${functionName}`);
  }
  return read;
}

/** A date as the runtime writes it back, from ABAP's `YYYYMMDD`. */
export const dateXml = (abap: string): string =>
  abap === '' ? '0000-00-00' : `${abap.slice(0, 4)}-${abap.slice(4, 6)}-${abap.slice(6, 8)}`;
