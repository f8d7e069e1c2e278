import type { Customizing } from './customizing.js';
import { dateXml, EMPTY_RETURN } from './interfaces.js';
import { fieldInfo, functionInterface } from './dictionary.js';
import { readTable } from './read-table.js';
import { fail, rows, text, type CallContext, type ErpTables } from './call-context.js';
import type { SapStructure } from './soap-codec.js';

type RfcFunction = (ctx: CallContext) => SapStructure;

const today = (): string => new Date().toISOString().slice(0, 10).replace(/-/g, '');

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
    const found = this.byDocument.get(key);
    if (found) found.push(row);
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

/** OAC3 decides which document type an object type takes, and the content repository (TOAOM). */
const connectionInsert: RfcFunction = ({ client, params, tables, customizing }) => {
  const row = {
    client,
    SAP_OBJECT: text(params, 'SAP_OBJECT'),
    OBJECT_ID: text(params, 'OBJECT_ID'),
    ARCHIV_ID: text(params, 'ARCHIV_ID'),
    ARC_DOC_ID: text(params, 'ARC_DOC_ID'),
    AR_OBJECT: text(params, 'AR_OBJECT'),
    AR_DATE: text(params, 'AR_DATE') || today(),
    FILENAME: text(params, 'FILENAME'),
    DESCR: text(params, 'DESCR'),
    CREATOR: text(params, 'CREATOR'),
  };
  if (row.OBJECT_ID === '' || row.ARC_DOC_ID === '')
    fail('ERROR_CONNECTIONTABLE', 'OBJECT_ID and ARC_DOC_ID are required');
  const link = customizing.links.find((l) => l.objectType === row.SAP_OBJECT && l.documentType === row.AR_OBJECT);
  if (link === undefined)
    fail(
      'ERROR_CONNECTIONTABLE',
      `Combination of object type ${row.SAP_OBJECT} and document type ${row.AR_OBJECT} not maintained (->Cust)`,
      { id: 'OA', number: '806' },
    );
  if (!customizing.contentRepositories.includes(row.ARCHIV_ID) || link.contentRepository !== row.ARCHIV_ID) {
    fail(
      'ERROR_CONNECTIONTABLE',
      `Content repository ${row.ARCHIV_ID} is not the one of object type ${row.SAP_OBJECT} and document type ${row.AR_OBJECT} (OAC3)`,
    );
  }
  const same = (l: LinkRow): boolean =>
    l.client === client &&
    l.SAP_OBJECT === row.SAP_OBJECT &&
    l.OBJECT_ID === row.OBJECT_ID &&
    l.ARCHIV_ID === row.ARCHIV_ID &&
    l.ARC_DOC_ID === row.ARC_DOC_ID;
  const index = linkIndex(tables.links);
  if (index.of(client, row.ARC_DOC_ID).some(same))
    fail('ERROR_CONNECTIONTABLE', 'SAP ArchiveLink (double entry in link table not permitted)', {
      id: 'OA',
      number: '403',
    });
  tables.links.push(row);
  index.add(row);
  return {};
};

const getConnections: RfcFunction = ({ client, params, tables }) => {
  const filters: Array<[keyof LinkRow, string]> = [
    ['SAP_OBJECT', 'OBJECTTYPE'],
    ['OBJECT_ID', 'OBJECT_ID'],
    ['ARCHIV_ID', 'ARCHIV_ID'],
    ['ARC_DOC_ID', 'ARC_DOC_ID'],
    ['AR_OBJECT', 'DOCUMENTTYPE'],
  ];
  const docId = text(params, 'ARC_DOC_ID');
  const [from, until] = [text(params, 'FROM_AR_DATE'), text(params, 'UNTIL_AR_DATE')];
  const candidates = docId === '' ? tables.links : linkIndex(tables.links).of(client, docId);
  const found = candidates.filter(
    (l) =>
      l.client === client &&
      filters.every(([field, param]) => text(params, param) === '' || l[field] === text(params, param)) &&
      (from === '' || l.AR_DATE >= from) &&
      (until === '' || l.AR_DATE <= until),
  );
  if (found.length === 0) fail('NOTHING_FOUND', 'No entries found');
  return {
    CONNECTIONS: found.map((l) => ({
      MANDT: l.client,
      SAP_OBJECT: l.SAP_OBJECT,
      OBJECT_ID: l.OBJECT_ID,
      ARCHIV_ID: l.ARCHIV_ID,
      ARC_DOC_ID: l.ARC_DOC_ID,
      AR_OBJECT: l.AR_OBJECT,
      AR_DATE: dateXml(l.AR_DATE),
      DEL_DATE: dateXml(''),
      RESERVE: '',
    })),
    COUNT: String(found.length),
  };
};

/**
 * BAPI: errors come back in RETURN, not as exceptions, and a list with an error stores none of its
 * rows. DOCTYPE is a technical document class (TOADD), the column BDS_BAR_EX keeps as DOCUCLASS.
 * The key of the external table is bar code, repository and document: the same row twice in a
 * list, or a row the table has already, is refused (no source says what SAP does: the stricter
 * reading). The same bar code for another document is refused unless OAC5 allows duplicates.
 */
const barcodeSendList: RfcFunction = ({ client, params, tables, customizing }) => {
  const list = rows(params.BARCODETABLE);
  const error = (message: string, barcode: string, id = '', number = '000') => ({
    RETURN: { ...EMPTY_RETURN, TYPE: 'E', ID: id, NUMBER: number, MESSAGE: message, MESSAGE_V1: barcode },
  });
  const assigned = documentsOf(tables.barcodes, client, new Set(list.map((row) => text(row, 'BARCODE'))));
  const inList = new Set<string>();
  for (const row of list) {
    const [barcode, docId] = [text(row, 'BARCODE'), text(row, 'DOCID')];
    if (!new RegExp(customizing.barcode.check).test(barcode))
      return error(`Enter a permitted bar code (bar code check): ${barcode}`, barcode, 'OA', '409');
    if (!customizing.contentRepositories.includes(text(row, 'CONTREP')))
      return error(`Content repository ${text(row, 'CONTREP')} is not defined`, barcode);
    if (!customizing.documentClasses.includes(text(row, 'DOCTYPE')))
      return error(`Document class ${text(row, 'DOCTYPE')} is not defined`, barcode);
    const key = `${barcode}\u0000${text(row, 'CONTREP')}\u0000${docId}`;
    if (inList.has(key)) return error(`Bar code ${barcode} is in the list twice for document ${docId}`, barcode);
    inList.add(key);
    const docs = assigned.get(barcode) as Set<string>;
    if (docs.has(docId)) return error(`Bar code ${barcode} is already stored for document ${docId}`, barcode);
    if (docs.size > 0 && !customizing.barcode.duplicates)
      return error(`Bar code ${barcode} is already assigned to another document`, barcode);
  }
  for (const row of list) {
    tables.barcodes.push({
      client,
      BARCODE: text(row, 'BARCODE'),
      CONTREP: text(row, 'CONTREP'),
      DOCID: text(row, 'DOCID'),
      ARDATE: text(row, 'ARDATE') || today(),
      DOCTYPE: text(row, 'DOCTYPE'),
    });
  }
  return { RETURN: EMPTY_RETURN };
};

const workItemId = (tables: ErpTables): string => String(tables.inbox.length + 1).padStart(12, '0');

/**
 * Storing for subsequent entry: a work item for the agents SAP's presetting names for the document
 * type; the function module takes no agent ("For each document type, you can determine the agents
 * responsible for the work item", SAP's glossary, "presetting"). DOCUMENT_DATA becomes the work
 * item's container; rows naming an agent there route nothing. Without a document type with a
 * presetting, SAP has nobody to send it to.
 */
const processRfcInput: RfcFunction = ({ client, params, tables, customizing }) => {
  const entry = (params.DOCUMENT_ENTRY ?? {}) as SapStructure;
  const barcode = text(entry, 'BARCODE');
  const documentType = text(entry, 'AR_OBJECT');
  if (barcode === '') {
    if (!customizing.contentRepositories.includes(text(entry, 'ARCHIV_ID')))
      fail('ERROR_PARAMETER', `Content repository ${text(entry, 'ARCHIV_ID')} is not defined`);
    if (text(entry, 'ARC_DOC_ID') === '') fail('ERROR_PARAMETER', 'ARC_DOC_ID is required without a bar code');
  }
  if (!(documentType in customizing.documentTypes))
    fail('ERROR_PARAMETER', `Document type ${documentType} is not defined`);
  const presetting = customizing.presettings[documentType];
  if (presetting === undefined)
    fail('NO_WORKITEM_CREATED', `No presetting names the agents for document type ${documentType}`);
  tables.inbox.push({
    client,
    id: workItemId(tables),
    startedBy: 'ARCHIV_PROCESS_RFCINPUT',
    task: '',
    ARCHIV_ID: text(entry, 'ARCHIV_ID'),
    ARC_DOC_ID: text(entry, 'ARC_DOC_ID'),
    AR_OBJECT: documentType,
    BARCODE: barcode,
    LATE: text(entry, 'LATE') === 'X',
    agents: presetting.map((a) => ({ OTYPE: a.otype, OBJID: a.objid })),
    container: Object.fromEntries(rows(params.DOCUMENT_DATA).map((row) => [text(row, 'NAME'), text(row, 'WERT')])),
  });
  return {};
};

/**
 * A workflow template started for the agents given (remote-enabled; RETURN_CODE 0 when started,
 * 1 for a task that does not exist, 4 when it could not be started; no exceptions).
 */
const startWorkflow: RfcFunction = ({ client, params, tables, customizing }) => {
  const task = text(params, 'TASK');
  const agents = rows(params.AGENTS).map((row) => ({ OTYPE: text(row, 'OTYPE'), OBJID: text(row, 'OBJID') }));
  const answer = (code: string, line: string) => ({
    RETURN_CODE: code,
    WORKITEM_ID: '000000000000',
    NEW_STATUS: '',
    MESSAGE_LINES: [{ LINE: line }],
  });
  if (!customizing.workflowTasks.includes(task)) return answer('1', `Task ${task} does not exist`);
  const unknown = agents.find(
    (a) => !(customizing.agents[a.OTYPE as keyof Customizing['agents']] ?? []).includes(a.OBJID),
  );
  if (agents.length === 0 || unknown !== undefined)
    return answer('4', unknown ? `Agent ${unknown.OTYPE} ${unknown.OBJID} does not exist` : 'No agent given');
  const container = Object.fromEntries(
    rows(params.INPUT_CONTAINER).map((row) => [text(row, 'ELEMENT'), text(row, 'VALUE')]),
  );
  const id = workItemId(tables);
  tables.inbox.push({
    client,
    id,
    startedBy: 'SAP_WAPI_START_WORKFLOW',
    task,
    ARCHIV_ID: text(container, 'ARCHIV_ID'),
    ARC_DOC_ID: text(container, 'ARC_DOC_ID'),
    AR_OBJECT: text(container, 'AR_OBJECT'),
    BARCODE: '',
    LATE: false,
    agents,
    container,
  });
  return { RETURN_CODE: '0', WORKITEM_ID: id, NEW_STATUS: 'READY', MESSAGE_LINES: [] };
};

/** SAP's ALPHA conversion of a number (the customizing's vendors are numbers): kept with leading zeros to its field's length (LIFNR, 10). */
const alpha = (value: string, length: number): string => value.padStart(length, '0');
/** An ABAP date (`YYYYMMDD`) as asXML writes it. */
const asXmlDate = (date: string): string => `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}`;
/** A BAPI's RETURN table with one error row (BAPIRET2). */
const errorReturn = (id: string, number: string, message: string): SapStructure[] => [
  { ...EMPTY_RETURN, TYPE: 'E', ID: id, NUMBER: number, MESSAGE: message },
];

/**
 * A supplier invoice's header (BAPI_INCOMINGINVOICE_GETDETAIL; BAPI_INCINV_DETAIL_HEADER's fields,
 * se80.co.uk): the invoicing party (DIFF_INV) in its internal form, the gross amount GROSS_AMNT.
 * One that does not exist: RETURN E M8 184 "Invoice document & & does not exist" (SE37's text).
 */
const invoiceDetail: RfcFunction = ({ params, customizing }): SapStructure => {
  const [number, year] = [text(params, 'INVOICEDOCNUMBER'), text(params, 'FISCALYEAR')];
  const invoice = customizing.supplierInvoices.find((row) => row.BELNR === number && row.GJAHR === year);
  if (invoice === undefined)
    return {
      HEADERDATA: {},
      ADDRESSDATA: {},
      RETURN: errorReturn('M8', '184', `Invoice document ${number} ${year} does not exist`),
    };
  return {
    HEADERDATA: {
      INV_DOC_NO: invoice.BELNR,
      FISC_YEAR: invoice.GJAHR,
      DOC_DATE: asXmlDate(invoice.BLDAT),
      PSTNG_DATE: asXmlDate(invoice.BUDAT),
      REF_DOC_NO: invoice.XBLNR,
      COMP_CODE: invoice.BUKRS,
      DIFF_INV: alpha(invoice.LIFNR, 10),
      CURRENCY: invoice.WAERS,
      CURRENCY_ISO: invoice.WAERS,
      GROSS_AMNT: invoice.RMWWR,
    },
    ADDRESSDATA: {},
    RETURN: [],
  };
};

/**
 * A purchase order's header (BAPI_PO_GETDETAIL1; BAPIMEPOHEADER's fields, datapanda.eu). One that
 * does not exist: RETURN type E; its message number is not published, so the sandbox gives none.
 */
const purchaseOrderDetail: RfcFunction = ({ params, customizing }): SapStructure => {
  const number = text(params, 'PURCHASEORDER');
  const order = customizing.purchaseOrders.find((row) => row.EBELN === number);
  if (order === undefined)
    return {
      POHEADER: {},
      POEXPIMPHEADER: {},
      RETURN: errorReturn('', '000', `Purchase order ${number} does not exist`),
    };
  return {
    POHEADER: {
      PO_NUMBER: order.EBELN,
      COMP_CODE: order.BUKRS,
      VENDOR: alpha(order.LIFNR, 10),
      PURCH_ORG: order.EKORG,
      CURRENCY: order.WAERS,
      DOC_DATE: asXmlDate(order.BEDAT),
    },
    POEXPIMPHEADER: {},
    RETURN: [],
  };
};

export const RFC_FUNCTIONS: Record<string, RfcFunction> = {
  RFC_PING: () => ({}),
  ARCHIV_CONNECTION_INSERT: connectionInsert,
  ARCHIV_GET_CONNECTIONS: getConnections,
  BAPI_BARCODE_SENDLIST: barcodeSendList,
  ARCHIV_PROCESS_RFCINPUT: processRfcInput,
  SAP_WAPI_START_WORKFLOW: startWorkflow,
  BAPI_INCOMINGINVOICE_GETDETAIL: invoiceDetail,
  BAPI_PO_GETDETAIL1: purchaseOrderDetail,
  RFC_READ_TABLE: readTable,
  RFC_GET_FUNCTION_INTERFACE: functionInterface,
  DDIF_FIELDINFO_GET: fieldInfo,
};
