// What the function modules run with and fail by, below them all: functions.ts lists the modules,
// and those in files of their own (dictionary.ts, read-table.ts) need these without importing it.
import type { Customizing } from './customizing.js';
import type { FunctionInterface } from './interfaces.js';
import type { SapException, SapStructure } from './soap-codec.js';

/** The sandbox's SAP tables, for tests and the demo to inspect. Dates as ABAP keeps them: `YYYYMMDD`. */
export interface ErpTables {
  /** TOA01-like link table. */
  links: Array<{
    client: string;
    SAP_OBJECT: string;
    OBJECT_ID: string;
    ARCHIV_ID: string;
    ARC_DOC_ID: string;
    AR_OBJECT: string;
    AR_DATE: string;
    FILENAME: string;
    DESCR: string;
    CREATOR: string;
  }>;
  /** BDS_BAR_EX-like external bar-code table. */
  barcodes: Array<{ client: string; BARCODE: string; CONTREP: string; DOCID: string; ARDATE: string; DOCTYPE: string }>;
  /** Work items: from storing for subsequent entry (ARCHIV_PROCESS_RFCINPUT) or a workflow started with SAP_WAPI_START_WORKFLOW. */
  inbox: Array<{
    client: string;
    id: string;
    startedBy: string;
    task: string;
    ARCHIV_ID: string;
    ARC_DOC_ID: string;
    AR_OBJECT: string;
    BARCODE: string;
    LATE: boolean;
    agents: Array<{ OTYPE: string; OBJID: string }>;
    container: Record<string, string>;
  }>;
  /** Uploads (a file) and URL attachments (`DocumentURL`) through the S/4HANA attachment service. */
  attachments: Array<{
    client: string;
    BusinessObjectTypeName: string;
    LinkedSAPObjectKey: string;
    FileName: string;
    MimeType: string;
    FileSize: string;
    DocumentURL: string;
    DocumentInfoRecordDocNumber: string;
    ArchiveDocumentID: string;
  }>;
}

/** An ABAP exception, answered as a SOAP fault. */
export class AbapException extends Error {
  constructor(readonly exception: SapException) {
    super(exception.text);
  }
}

export interface CallContext {
  client: string;
  /** The logon user: what S_TABU_NAM lets read. */
  user: string;
  params: SapStructure;
  tables: ErpTables;
  customizing: Customizing;
  /** The interfaces this SAP declares (a test may take a field out of one). */
  interfaces: Record<string, FunctionInterface>;
}

export const text = (record: SapStructure, key: string): string => (typeof record[key] === 'string' ? record[key] : '');
export const rows = (value: unknown): SapStructure[] => (Array.isArray(value) ? (value as SapStructure[]) : []);

/**
 * Raise an ABAP exception. `message`: SAP's message class and number, only where a public source
 * gives them (OA403: "double entry in link table not permitted"; OA806: "Combination of object type
 * & and document type & not maintained (->Cust)"; OA409: "Enter a permitted bar code (bar code
 * check)"; texts as SAP systems show them, erplingo.com); otherwise none.
 */
export function fail(name: string, text: string, message?: SapException['message']): never {
  throw new AbapException({ name, text, message });
}
