import { tableRows, type RfcFaultDetail, type RfcParams } from '../../erp/soap.js';
import type { Customizing } from './customizing.js';

/** The sandbox's SAP tables, for tests and the demo to inspect. */
export interface ErpTables {
  /** TOA01-like link table. */
  links: Array<{ client: string; SAP_OBJECT: string; OBJECT_ID: string; ARCHIV_ID: string; ARC_DOC_ID: string; AR_OBJECT: string; AR_DATE: string; FILENAME: string; DESCR: string; CREATOR: string }>;
  /** BDS_BAR_EX-like external bar-code table. */
  barcodes: Array<{ client: string; BARCODE: string; CONTREP: string; DOCID: string; ARDATE: string; DOCTYPE: string }>;
  /** Work items from "store for subsequent entry". */
  inbox: Array<{ client: string; id: string; ARCHIV_ID: string; ARC_DOC_ID: string; AR_OBJECT: string; BARCODE: string; LATE: boolean; OTYPE: string; OBJID: string }>;
  /** Uploads through the S/4HANA attachment service. */
  attachments: Array<{
    client: string; BusinessObjectTypeName: string; LinkedSAPObjectKey: string; FileName: string; MimeType: string; FileSize: string;
    DocumentInfoRecordDocNumber: string; ArchiveDocumentID: string;
  }>;
}

/** An ABAP exception, answered as a SOAP fault. */
export class AbapException extends Error {
  constructor(readonly detail: RfcFaultDetail) {
    super(detail.text);
  }
}

export interface CallContext {
  client: string;
  params: Record<string, unknown>;
  tables: ErpTables;
  customizing: Customizing;
}

type RfcFunction = (ctx: CallContext) => RfcParams;

const text = (params: Record<string, unknown>, key: string): string => (typeof params[key] === 'string' ? (params[key] as string) : '');


const today = (): string => new Date().toISOString().slice(0, 10).replace(/-/g, '');

function fail(exception: string, message: string, id?: string, number?: string): never {
  throw new AbapException({ exception, text: message, messageId: id, messageNumber: number });
}

/** Field lengths SAP enforces by truncating or dumping; the sandbox refuses, so a long value shows. */
function checkLength(exception: string, values: Record<string, string>, lengths: Record<string, number>): void {
  for (const [field, max] of Object.entries(lengths)) {
    if (values[field].length > max) fail(exception, `${field} is longer than ${max} characters`);
  }
}

type LinkRow = ErpTables['links'][number];

/**
 * The links by client and ARC_DOC_ID, as TOA01 has an index on the document: without it, every
 * lookup and insert would read the whole table, and a benchmark of 10,000 links would measure
 * the sandbox. Rebuilt when rows were added or removed other than by an insert (tests do); a
 * row edited in place is re-checked by the caller, so it is never found under a value it lost.
 */
class LinkIndex {
  rows = 0;
  private readonly byDocument = new Map<string, LinkRow[]>();

  add(row: LinkRow): void {
    const key = `${row.client}\u0000${row.ARC_DOC_ID}`;
    const rows = this.byDocument.get(key);
    if (rows) rows.push(row);
    else this.byDocument.set(key, [row]);
    this.rows++;
  }

  of(client: string, docId: string): LinkRow[] {
    return this.byDocument.get(`${client}\u0000${docId}`) ?? [];
  }
}

const linkIndexes = new WeakMap<LinkRow[], LinkIndex>();

function linkIndex(links: LinkRow[]): LinkIndex {
  const known = linkIndexes.get(links);
  if (known?.rows === links.length) return known;
  const index = new LinkIndex();
  for (const row of links) index.add(row);
  linkIndexes.set(links, index);
  return index;
}

/** The documents each of `barcodes` is assigned to in the client: one pass over the table for a whole list. */
function documentsOf(table: ErpTables['barcodes'], client: string, barcodes: Set<string>): Map<string, Set<string>> {
  const assigned = new Map([...barcodes].map((barcode): [string, Set<string>] => [barcode, new Set()]));
  for (const row of table) {
    if (row.client === client) assigned.get(row.BARCODE)?.add(row.DOCID);
  }
  return assigned;
}

const connectionInsert: RfcFunction = ({ client, params, tables, customizing }) => {
  const row = {
    client, SAP_OBJECT: text(params, 'SAP_OBJECT'), OBJECT_ID: text(params, 'OBJECT_ID'), ARCHIV_ID: text(params, 'ARCHIV_ID'),
    ARC_DOC_ID: text(params, 'ARC_DOC_ID'), AR_OBJECT: text(params, 'AR_OBJECT'), AR_DATE: text(params, 'AR_DATE') || today(),
    FILENAME: text(params, 'FILENAME'), DESCR: text(params, 'DESCR'), CREATOR: text(params, 'CREATOR'),
  };
  checkLength('ERROR_CONNECTIONTABLE', row, { SAP_OBJECT: 10, OBJECT_ID: 50, ARCHIV_ID: 2, ARC_DOC_ID: 40, AR_OBJECT: 10, FILENAME: 255, DESCR: 60, CREATOR: 12 });
  const allowed = customizing.links[row.SAP_OBJECT];
  if (allowed === undefined) fail('ERROR_CONNECTIONTABLE', `Object type ${row.SAP_OBJECT} is not defined`, 'OA', '012');
  if (!allowed.includes(row.AR_OBJECT)) fail('ERROR_CONNECTIONTABLE', `Document type ${row.AR_OBJECT} is not linked to object type ${row.SAP_OBJECT} (OAC3)`, 'OA', '020');
  if (!customizing.contentRepositories.includes(row.ARCHIV_ID)) fail('ERROR_CONNECTIONTABLE', `Content repository ${row.ARCHIV_ID} is not defined`, 'OA', '031');
  if (row.OBJECT_ID === '' || row.ARC_DOC_ID === '') fail('ERROR_CONNECTIONTABLE', 'OBJECT_ID and ARC_DOC_ID are required', 'OA', '000');
  const same = (l: LinkRow): boolean =>
    l.client === client && l.SAP_OBJECT === row.SAP_OBJECT && l.OBJECT_ID === row.OBJECT_ID && l.ARCHIV_ID === row.ARCHIV_ID && l.ARC_DOC_ID === row.ARC_DOC_ID;
  const index = linkIndex(tables.links);
  if (index.of(client, row.ARC_DOC_ID).some(same)) fail('ERROR_CONNECTIONTABLE', 'Document already assigned', 'OA', '403');
  tables.links.push(row);
  index.add(row);
  return {};
};

const getConnections: RfcFunction = ({ client, params, tables }) => {
  const filters: Array<[string, string]> = [['SAP_OBJECT', 'OBJECTTYPE'], ['OBJECT_ID', 'OBJECT_ID'], ['ARCHIV_ID', 'ARCHIV_ID'], ['ARC_DOC_ID', 'ARC_DOC_ID'], ['AR_OBJECT', 'DOCUMENTTYPE']];
  const docId = text(params, 'ARC_DOC_ID');
  const candidates = docId === '' ? tables.links : linkIndex(tables.links).of(client, docId);
  const found = candidates.filter((l) => l.client === client && filters.every(([field, param]) => text(params, param) === '' || l[field as keyof typeof l] === text(params, param)));
  if (found.length === 0) fail('NOTHING_FOUND', 'No entries found');
  return { CONNECTIONS: found.map(({ SAP_OBJECT, OBJECT_ID, ARCHIV_ID, ARC_DOC_ID, AR_OBJECT, AR_DATE }) => ({ SAP_OBJECT, OBJECT_ID, ARCHIV_ID, ARC_DOC_ID, AR_OBJECT, AR_DATE })) };
};

/** BAPI: errors come back in RETURN, not as exceptions; the whole list is checked before anything is stored. */
const barcodeSendList: RfcFunction = ({ client, params, tables, customizing }) => {
  const list = tableRows(params.BARCODETABLE);
  const classes = new Set([...Object.keys(customizing.documentTypes), ...Object.values(customizing.documentTypes)]);
  const error = (message: string, v1: string) => ({ RETURN: { TYPE: 'E', ID: 'OA', NUMBER: '100', MESSAGE: message, MESSAGE_V1: v1 } });
  const assigned = documentsOf(tables.barcodes, client, new Set(list.map((row) => text(row, 'BARCODE'))));
  for (const row of list) {
    const barcode = text(row, 'BARCODE');
    if (!/^[A-Z0-9-]{1,40}$/.test(barcode)) return error(`Bar code ${barcode} is not valid`, barcode);
    if (!customizing.contentRepositories.includes(text(row, 'CONTREP'))) return error(`Content repository ${text(row, 'CONTREP')} is not defined`, barcode);
    if (!classes.has(text(row, 'DOCTYPE'))) return error(`Document class ${text(row, 'DOCTYPE')} is not defined`, barcode);
    const other = [...(assigned.get(barcode) as Set<string>)].some((docId) => docId !== text(row, 'DOCID'));
    if (other && !customizing.barcode.duplicates) return error(`Bar code ${barcode} is already assigned to another document`, barcode);
  }
  for (const row of list) {
    const [barcode, docId] = [text(row, 'BARCODE'), text(row, 'DOCID')];
    const docIds = assigned.get(barcode) as Set<string>;
    // The same bar code for the same document again changes nothing: a repeated call is harmless.
    if (docIds.has(docId)) continue;
    docIds.add(docId);
    tables.barcodes.push({ client, BARCODE: barcode, CONTREP: text(row, 'CONTREP'), DOCID: docId, ARDATE: text(row, 'ARDATE') || today(), DOCTYPE: text(row, 'DOCTYPE') });
  }
  return { RETURN: { TYPE: '', ID: '', NUMBER: '000', MESSAGE: '', MESSAGE_V1: '' } };
};

const processRfcInput: RfcFunction = ({ client, params, tables, customizing }) => {
  const entry = Object(params.DOCUMENT_ENTRY) as Record<string, unknown>;
  const data = Object.fromEntries(tableRows(params.DOCUMENT_DATA).map((d) => [text(d, 'NAME'), d.WERT]));
  const value = (name: string): string => text(data, name);
  const barcode = text(entry, 'BARCODE');
  if (barcode === '') {
    if (!customizing.contentRepositories.includes(text(entry, 'ARCHIV_ID'))) fail('ERROR_PARAMETER', `Content repository ${text(entry, 'ARCHIV_ID')} is not defined`);
    if (!(text(entry, 'AR_OBJECT') in customizing.documentTypes)) fail('ERROR_PARAMETER', `Document type ${text(entry, 'AR_OBJECT')} is not defined`);
    if (text(entry, 'ARC_DOC_ID') === '') fail('ERROR_PARAMETER', 'ARC_DOC_ID is required without a bar code');
  }
  const otype = value('OTYPE');
  const objid = value('OBJID');
  const agents = customizing.agents[otype as keyof Customizing['agents']] ?? [];
  if (otype !== '' && !agents.includes(objid)) {
    fail('NO_WORKITEM_CREATED', `Agent ${otype} ${objid} does not exist`);
  }
  tables.inbox.push({
    client, id: String(tables.inbox.length + 1).padStart(12, '0'), ARCHIV_ID: text(entry, 'ARCHIV_ID'), ARC_DOC_ID: text(entry, 'ARC_DOC_ID'),
    AR_OBJECT: text(entry, 'AR_OBJECT'), BARCODE: barcode, LATE: entry.LATE === 'X', OTYPE: otype, OBJID: objid,
  });
  return {};
};

export const RFC_FUNCTIONS: Record<string, RfcFunction> = {
  RFC_PING: () => ({}),
  ARCHIV_CONNECTION_INSERT: connectionInsert,
  ARCHIV_GET_CONNECTIONS: getConnections,
  BAPI_BARCODE_SENDLIST: barcodeSendList,
  ARCHIV_PROCESS_RFCINPUT: processRfcInput,
};
