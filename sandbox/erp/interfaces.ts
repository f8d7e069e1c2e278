import type { SapStructure, SapValue } from './soap-codec.js';

/**
 * The interfaces of the function modules the ERP sandbox serves, as SAP declares them (sources in
 * test/fixtures/soap-rfc/README.md and docs/reference/sap-interfaces.md §1), and how the
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
  /** The imports a call must give (the others are optional); a call without one is refused. */
  mandatory?: string[];
  /** The dictionary structure of each structured import and table, as SAP names it in the interface. */
  types?: Record<string, string>;
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

/** BAPIRET2 as a table's rows (lengths from the dictionary structure as SE11 shows it, se80.co.uk). */
const BAPIRET2_ROW: Fields = {
  TYPE: char(1),
  ID: char(20),
  NUMBER: char(3),
  MESSAGE: char(220),
  LOG_NO: char(20),
  LOG_MSG_NO: char(6),
  MESSAGE_V1: char(50),
  MESSAGE_V2: char(50),
  MESSAGE_V3: char(50),
  MESSAGE_V4: char(50),
  PARAMETER: char(32),
  ROW: char(10),
  FIELD: char(30),
  SYSTEM: char(10),
};

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
    // The vendor wrapper mirroring the signature marks the others optional (sap-interfaces.md §1.1).
    mandatory: ['ARC_DOC_ID', 'AR_OBJECT', 'OBJECT_ID', 'SAP_OBJECT'],
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
    types: { CONNECTIONS: 'TOAV0' },
    exports: ['COUNT'],
  },
  BAPI_BARCODE_SENDLIST: {
    imports: {},
    // BAPIBARC's lengths are not published: those of the table it fills (BDS_BAR_EX) and of ARCHIV_ID.
    tables: { BARCODETABLE: { BARCODE: char(40), CONTREP: char(2), DOCID: char(40), ARDATE: DATS, DOCTYPE: char(20) } },
    types: { BARCODETABLE: 'BAPIBARC' },
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
    types: { DOCUMENT_ENTRY: 'OARFCIN', DOCUMENT_DATA: 'OARFCDATA' },
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
    mandatory: ['TASK'],
    types: { AGENTS: 'SWRAGENT', INPUT_CONTAINER: 'SWR_CONT', MESSAGE_LINES: 'SWR_MSTRUC' },
    exports: ['RETURN_CODE', 'WORKITEM_ID', 'NEW_STATUS'],
  },
  /**
   * A supplier invoice (BUS2081) read (SE37's documentation as stechno.net and consolut.com copy
   * it): INVOICEDOCNUMBER (CHAR 10) and FISCALYEAR (NUMC 4); HEADERDATA (BAPI_INCINV_DETAIL_HEADER)
   * and ADDRESSDATA answered; RETURN a BAPIRET2 table. Its other tables (ITEMDATA, ACCOUNTINGDATA,
   * TAXDATA, …) are not modelled: a call that sends them is refused.
   */
  BAPI_INCOMINGINVOICE_GETDETAIL: {
    imports: { INVOICEDOCNUMBER: char(10), FISCALYEAR: char(4) },
    mandatory: ['INVOICEDOCNUMBER', 'FISCALYEAR'],
    tables: { RETURN: BAPIRET2_ROW },
    types: { RETURN: 'BAPIRET2' },
    exports: ['HEADERDATA', 'ADDRESSDATA'],
  },
  /**
   * A purchase order (BUS2012) read (se80.co.uk, consolut.com): PURCHASEORDER (CHAR 10); POHEADER
   * (BAPIMEPOHEADER) answered; RETURN a BAPIRET2 table; POITEM and the other tables not modelled.
   */
  BAPI_PO_GETDETAIL1: {
    imports: { PURCHASEORDER: char(10) },
    mandatory: ['PURCHASEORDER'],
    tables: { RETURN: BAPIRET2_ROW },
    types: { RETURN: 'BAPIRET2' },
    exports: ['POHEADER', 'POEXPIMPHEADER'],
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
    mandatory: ['QUERY_TABLE'],
    types: { OPTIONS: 'RFC_DB_OPT', FIELDS: 'RFC_DB_FLD', DATA: 'TAB512' },
    exports: [],
  },
  /**
   * A function module's interface, read-only (sources: SAP::WAS::SOAP, SAP::Rfc, R3::rfcapi and
   * saprfclib's captures; sap-interfaces.md §2.1): a row of PARAMS per parameter, PARAMCLASS I
   * (import), E (export), C (changing), T (table) or X (exception); EXID the ABAP type (C, D, N;
   * u a structure, h a table), TABNAME its dictionary structure; INTLENGTH in bytes, of a Unicode
   * system unless NONE_UNICODE_LENGTH is X. FU_NOT_FOUND for a module that does not exist or is
   * not remote-enabled. The number fields are INT4 in SAP's RFC_FUNINT; text here, as SOAP carries them.
   */
  RFC_GET_FUNCTION_INTERFACE: {
    imports: { FUNCNAME: char(30), LANGUAGE: char(1), NONE_UNICODE_LENGTH: char(1) },
    mandatory: ['FUNCNAME'],
    tables: {
      PARAMS: {
        PARAMCLASS: char(1),
        PARAMETER: char(30),
        TABNAME: char(30),
        FIELDNAME: char(30),
        EXID: char(1),
        POSITION: char(10),
        OFFSET: char(10),
        INTLENGTH: char(10),
        DECIMALS: char(10),
        DEFAULT: char(21),
        PARAMTEXT: char(79),
        OPTIONAL: char(1),
      },
      RESUMABLE_EXCEPTIONS: { EXCEPTION: char(30) },
    },
    types: { PARAMS: 'RFC_FUNINT' },
    exports: ['REMOTE_BASXML_SUPPORTED', 'REMOTE_CALL', 'UPDATE_TASK'],
  },
  /**
   * A dictionary structure's or table's fields, read-only and remote-enabled (function group
   * SDIFRUNTIME; saprfclib's capture of a live answer, a PyRFC script; sap-interfaces.md §2.1):
   * DFIES_TAB, a row per field with LENG its length in characters, INTTYPE and DATATYPE its type.
   * NOT_FOUND for a name the dictionary lacks. DFIES has some sixty fields; the ones modelled here
   * are those callers read, and a caller naming another in a row it sends is refused.
   */
  DDIF_FIELDINFO_GET: {
    imports: { TABNAME: char(30), FIELDNAME: char(30), LANGU: char(1), LFIELDNAME: char(132), ALL_TYPES: char(1) },
    mandatory: ['TABNAME'],
    tables: {
      DFIES_TAB: {
        TABNAME: char(30),
        FIELDNAME: char(30),
        POSITION: char(4),
        OFFSET: char(6),
        LENG: char(6),
        INTLEN: char(6),
        DATATYPE: char(4),
        INTTYPE: char(1),
        FIELDTEXT: char(60),
        KEYFLAG: char(1),
      },
      FIXED_VALUES: { LOW: char(10), HIGH: char(10), OPTION: char(2), DDLANGUAGE: char(1), DDTEXT: char(60) },
    },
    types: { DFIES_TAB: 'DFIES', FIXED_VALUES: 'DDFIXVALUE' },
    exports: ['X030L_WA', 'DDOBJTYPE', 'DFIES_WA', 'LINES_DESCR'],
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
    // asXML's date is XML Schema's, whose white space is collapsed: blanks around it are not part of it.
    const date = value.trim();
    if (date === '') return '';
    if (!validDate(date)) throw new UnreadableValue(`value "${value}" of ${name} is not a date (YYYY-MM-DD)`);
    return date.replace(/-/g, '');
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
  const missing = (iface.mandatory ?? []).find((name) => params[name] === undefined);
  if (missing !== undefined) throw new UnreadableValue(`${missing} is a mandatory parameter of ${functionName}`);
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
