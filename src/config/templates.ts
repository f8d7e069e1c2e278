import { stringify } from 'yaml';
import { restCallSchema, rfcCallSchema, type RestCallConfig, type RfcCallConfig } from './call-schema.js';
import type { TaskConfig, UseCase } from './task-schema.js';

/**
 * The built-in calls. A task without its own `rfc:` or `rest:` section uses the one for its use
 * case and transport; `connect2erp template <name> <RFC|Rest>` prints one to start from. Lengths
 * are the ABAP field lengths (sap-interfaces.md §1). SAP offers no standard REST service for bar
 * codes or workflow starts: a task of those over Rest declares its own call.
 */

const p = (property: string, length: number) => ({ property, length });
const date = (property: string) => ({ property, transform: ['date'] });

const LINK_RFC = {
  function: 'ARCHIV_CONNECTION_INSERT',
  parameters: {
    SAP_OBJECT: p('erpCreateALDocument:erpObject', 10),
    OBJECT_ID: p('erpCreateALDocument:erpObjectId', 50),
    ARCHIV_ID: p('erpHttpContent:archiveId', 2),
    ARC_DOC_ID: p('erpHttpContent:docId', 40),
    AR_OBJECT: p('erpCreateALDocument:erpArchiveObject', 10),
    AR_DATE: date('erpCreateALDocument:erpArchiveDate'),
    MANDANT: p('erpCreateALDocument:erpClient', 3),
    DOC_TYPE: p('erpCreateALDocument:erpDocumentTyp', 20),
    FILENAME: p('erpCreateALDocument:erpFilename', 255),
    DESCR: p('erpCreateALDocument:erpDescription', 60),
    CREATOR: p('erpCreateALDocument:erpCreator', 12),
  },
  // A repeat (an earlier attempt may have reached SAP) is looked up first, and OA403 ("double
  // entry in link table not permitted") counts as done: a retry never links twice.
  lookup: {
    function: 'ARCHIV_GET_CONNECTIONS',
    parameters: {
      OBJECTTYPE: '{SAP_OBJECT}',
      OBJECT_ID: '{OBJECT_ID}',
      ARCHIV_ID: '{ARCHIV_ID}',
      ARC_DOC_ID: '{ARC_DOC_ID}',
    },
    found: { list: 'CONNECTIONS' },
    notFound: 'NOTHING_FOUND',
  },
  alreadyDone: ['OA403'],
  result: { erpReference: '{SAP_OBJECT} {OBJECT_ID}' },
};

/** SAP's technical document classes (TOADD) for the MIME types a scan usually comes as. */
const DOCUMENT_CLASSES = { 'application/pdf': 'PDF', 'image/tiff': 'TIF', 'image/jpeg': 'JPG', 'image/png': 'PNG' };

const BARCODE_RFC = {
  function: 'BAPI_BARCODE_SENDLIST',
  parameters: {
    'BARCODETABLE[].BARCODE': p('erpBarcode:barcode', 40),
    'BARCODETABLE[].CONTREP': p('erpHttpContent:archiveId', 2),
    'BARCODETABLE[].DOCID': p('erpHttpContent:docId', 40),
    'BARCODETABLE[].ARDATE': date('erpHttpContent:created'),
    // DOCTYPE is the technical document class (BDS_BAR_EX keeps it as DOCUCLASS), not the ArchiveLink document type.
    'BARCODETABLE[].DOCTYPE': {
      property: 'file:content.mime-type',
      transform: [{ map: DOCUMENT_CLASSES }],
      length: 20,
    },
  },
  failWhen: { field: 'RETURN.TYPE', in: ['E', 'A'], message: 'RETURN.MESSAGE' },
  // No source says what SAP does with a row it has already, so a bar code whose answer was lost (or
  // whose run was interrupted) is looked up before it is sent again: in the external bar-code table,
  // BDS_BAR_EX (key BARCODE, CONTREP, EX_DOC_ID; no client field: leanx.eu and docsfortec.com), and,
  // as SAP deletes that row once it has matched the bar code and linked the document (the Hold bar
  // code entry flag, KEEP_FLAG, says otherwise), in the links of the document.
  lookup: [
    {
      table: 'BDS_BAR_EX',
      where: {
        BARCODE: '{BARCODETABLE[].BARCODE}',
        CONTREP: '{BARCODETABLE[].CONTREP}',
        EX_DOC_ID: '{BARCODETABLE[].DOCID}',
      },
    },
    {
      function: 'ARCHIV_GET_CONNECTIONS',
      parameters: { ARCHIV_ID: '{BARCODETABLE[].CONTREP}', ARC_DOC_ID: '{BARCODETABLE[].DOCID}' },
      found: { list: 'CONNECTIONS' },
      notFound: 'NOTHING_FOUND',
    },
  ],
  repeatable: false,
  result: { erpReference: '{BARCODETABLE[].BARCODE}' },
};

/**
 * Storing for subsequent entry. ARCHIV_PROCESS_RFCINPUT takes no agent: SAP gives the work item to
 * the agents its presetting names for the document type (OAWS); erpOTyp and erpObjId are not sent.
 */
const WORKFLOW_RFC = {
  function: 'ARCHIV_PROCESS_RFCINPUT',
  parameters: {
    'DOCUMENT_ENTRY.ARCHIV_ID': p('erpHttpContent:archiveId', 2),
    'DOCUMENT_ENTRY.ARC_DOC_ID': p('erpHttpContent:docId', 40),
    'DOCUMENT_ENTRY.AR_OBJECT': p('erpStartWorkflow:erpArchiveObject', 10),
    'DOCUMENT_ENTRY.DOC_TYPE': p('erpStartWorkflow:erpDocumentTyp', 20),
    'DOCUMENT_ENTRY.BARCODE': p('erpStartWorkflow:erpBarcode', 40),
    'DOCUMENT_ENTRY.LATE': { property: 'erpStartWorkflow:erpLateArchiving', transform: ['flag'] },
  },
  // No remote-enabled read finds a work item by its ArchiveLink document: after an interrupted call,
  // or an answer lost, the document waits for an operator, who looks in SAP.
  repeatable: false,
  manualCheck:
    'SAP transaction SWI1 (work items by date) or the inbox of the agents of document type {DOCUMENT_ENTRY.AR_OBJECT} (SBWP): a work item for document {DOCUMENT_ENTRY.BARCODE|DOCUMENT_ENTRY.ARC_DOC_ID}',
  result: { erpReference: '{DOCUMENT_ENTRY.BARCODE|DOCUMENT_ENTRY.ARC_DOC_ID}' },
};

/**
 * A work item for the document's own agent (erpOTyp, erpObjId): SAP_WAPI_START_WORKFLOW, which is
 * remote-enabled and takes the agents, starts a workflow template of the customer's (TASK: adapt
 * it) with the document in its container. RETURN_CODE 0 means started.
 */
const WORKFLOW_TO_AGENT_RFC = {
  function: 'SAP_WAPI_START_WORKFLOW',
  parameters: {
    TASK: { constant: 'WS90000001' },
    // Its own COMMIT WORK (the default, said aloud): SOAP-RFC keeps no session for a later commit (docs/sap-setup.md, "Commits").
    DO_COMMIT: { constant: 'X' },
    'AGENTS[0].OTYPE': p('erpStartWorkflow:erpOTyp', 2),
    'AGENTS[0].OBJID': p('erpStartWorkflow:erpObjId', 12),
    'INPUT_CONTAINER[0].ELEMENT': { constant: 'ARCHIV_ID' },
    'INPUT_CONTAINER[0].VALUE': p('erpHttpContent:archiveId', 2),
    'INPUT_CONTAINER[1].ELEMENT': { constant: 'ARC_DOC_ID' },
    'INPUT_CONTAINER[1].VALUE': p('erpHttpContent:docId', 40),
    'INPUT_CONTAINER[2].ELEMENT': { constant: 'AR_OBJECT' },
    'INPUT_CONTAINER[2].VALUE': p('erpStartWorkflow:erpArchiveObject', 10),
  },
  failWhen: { field: 'RETURN_CODE', in: ['1', '2', '3', '4', '5', '6', '999'], message: 'MESSAGE_LINES.0.LINE' },
  repeatable: false,
  manualCheck:
    'SAP transaction SWI1: a work item of task {TASK} for agent {AGENTS[0].OTYPE} {AGENTS[0].OBJID} with document {INPUT_CONTAINER[1].VALUE} in its container',
  result: { erpReference: '{response.WORKITEM_ID}' },
};

/**
 * S/4HANA attachment service: the file itself is uploaded. The service has no update, and the
 * file name (Slug) is the only text of the caller's that GetAllOriginals gives back (the service's
 * $metadata: every other property is sap:creatable="false"). So the file is named with the
 * document's uuid in front, and an upload whose answer was lost is looked for among the business
 * object's attachments by that key, never by name and size. FileName is 255 characters: 218 are
 * left for the file's own name.
 */
const LINK_REST = {
  service: '/sap/opu/odata/sap/API_CV_ATTACHMENT_SRV',
  parameters: {
    BusinessObjectTypeName: p('erpCreateALDocument:erpObject', 10),
    LinkedSAPObjectKey: p('erpCreateALDocument:erpObjectId', 90),
    DocumentKey: p('erpHttpContent:docId', 36),
    FileName: p('file:content.name', 218),
    MimeType: p('file:content.mime-type', 128),
  },
  method: 'POST',
  path: '/AttachmentContentSet',
  lookup: {
    path: '/GetAllOriginals?BusinessObjectTypeName={q:BusinessObjectTypeName}&LinkedSAPObjectKey={q:LinkedSAPObjectKey}',
    found: { list: 'results', startsWith: { FileName: '{DocumentKey}_' } },
  },
  headers: {
    Slug: '{DocumentKey}_{FileName}',
    'Content-Type': '{MimeType}',
    BusinessObjectTypeName: '{BusinessObjectTypeName}',
    LinkedSAPObjectKey: '{LinkedSAPObjectKey}',
  },
  body: 'content',
  csrf: true,
  repeatable: false,
  result: {
    erpReference:
      '{BusinessObjectTypeName} {LinkedSAPObjectKey} {response.DocumentInfoRecordDocNumber|response.ArchiveDocumentID}',
  },
};

/**
 * Link by reference: the attachment service's CreateUrlAsAttachment, a function import (POST, its
 * parameters OData string literals in the query; SAP's API documentation of API_CV_ATTACHMENT_SRV,
 * the SAP Cloud SDK's parameter list; lengths from the service's generated ABAP proxy: UrlDescription
 * 255, MIMEType 40; Url an unbounded string, 4,096 as the CDS model of CV_ATTACHMENT_SRV declares it).
 * SAP stores the address, not the file: users open the document where it lives, through `serve` or
 * Web UI (the system's `documentLinks`). The address is the one text of the caller's that
 * GetAllOriginals gives back (DocumentURL), so an attachment whose answer was lost is found again by
 * the document's stable address, never by its description.
 */
const LINK_BY_REFERENCE_REST = {
  service: '/sap/opu/odata/sap/API_CV_ATTACHMENT_SRV',
  parameters: {
    BusinessObjectTypeName: p('erpCreateALDocument:erpObject', 10),
    LinkedSAPObjectKey: p('erpCreateALDocument:erpObjectId', 90),
    Url: { documentUrl: 'open', length: 4096 },
    Address: { documentUrl: 'stable' },
    UrlDescription: p('file:content.name', 255),
  },
  method: 'POST',
  path: "/CreateUrlAsAttachment?BusinessObjectTypeName={q:BusinessObjectTypeName}&LinkedSAPObjectKey={q:LinkedSAPObjectKey}&Url={q:Url}&UrlDescription={q:UrlDescription}&MIMEType='text/url'",
  lookup: {
    path: '/GetAllOriginals?BusinessObjectTypeName={q:BusinessObjectTypeName}&LinkedSAPObjectKey={q:LinkedSAPObjectKey}',
    found: { list: 'results', startsWith: { DocumentURL: '{Address}' } },
  },
  body: 'none',
  csrf: true,
  repeatable: false,
  result: {
    erpReference:
      '{BusinessObjectTypeName} {LinkedSAPObjectKey} {response.DocumentInfoRecordDocNumber|response.ArchiveDocumentID}',
  },
};

/**
 * Reads of SAP's data after a link (a task's `read:`). The supplier invoice (BUS2081): its
 * ArchiveLink key is the document number (10) and the fiscal year (4), read with
 * BAPI_INCOMINGINVOICE_GETDETAIL (HEADERDATA, BAPI_INCINV_DETAIL_HEADER: DIFF_INV the invoicing
 * party, GROSS_AMNT; RETURN a BAPIRET2 table) or OData API_SUPPLIERINVOICE_PROCESS_SRV's
 * A_SupplierInvoice. The purchase order (BUS2012), key the order number (10): BAPI_PO_GETDETAIL1
 * (POHEADER, BAPIMEPOHEADER) or API_PURCHASEORDER_PROCESS_SRV's A_PurchaseOrder. Sources:
 * docs/reference/sap-interfaces.md, "Reading SAP's data".
 */
const objectIdPart = (start: number, length: number) => ({
  property: 'erpCreateALDocument:erpObjectId',
  transform: [{ substring: { start, length } }],
  length,
});
const INVOICE_KEY = { INVOICE: objectIdPart(0, 10), YEAR: objectIdPart(10, 4) };
const RETURN_ERRORS = { field: 'RETURN.TYPE', in: ['E', 'A'], message: 'RETURN.MESSAGE' };

const READ_SUPPLIER_INVOICE_RFC = {
  function: 'BAPI_INCOMINGINVOICE_GETDETAIL',
  parameters: { INVOICEDOCNUMBER: INVOICE_KEY.INVOICE, FISCALYEAR: INVOICE_KEY.YEAR },
  tables: ['RETURN'],
  failWhen: RETURN_ERRORS,
  properties: {
    'erpData:vendor': 'HEADERDATA.DIFF_INV',
    'erpData:companyCode': 'HEADERDATA.COMP_CODE',
    'erpData:amount': 'HEADERDATA.GROSS_AMNT',
    'erpData:currency': 'HEADERDATA.CURRENCY',
    'erpData:documentDate': 'HEADERDATA.DOC_DATE',
    'erpData:postingDate': 'HEADERDATA.PSTNG_DATE',
    'erpData:reference': 'HEADERDATA.REF_DOC_NO',
  },
};

const READ_SUPPLIER_INVOICE_REST = {
  service: '/sap/opu/odata/sap/API_SUPPLIERINVOICE_PROCESS_SRV',
  path: '/A_SupplierInvoice(SupplierInvoice={q:INVOICE},FiscalYear={q:YEAR})',
  parameters: INVOICE_KEY,
  properties: {
    'erpData:vendor': 'InvoicingParty',
    'erpData:companyCode': 'CompanyCode',
    'erpData:amount': 'InvoiceGrossAmount',
    'erpData:currency': 'DocumentCurrency',
    'erpData:documentDate': 'DocumentDate',
    'erpData:postingDate': 'PostingDate',
    'erpData:reference': 'SupplierInvoiceIDByInvcgParty',
  },
};

const READ_PURCHASE_ORDER_RFC = {
  function: 'BAPI_PO_GETDETAIL1',
  parameters: { PURCHASEORDER: objectIdPart(0, 10) },
  tables: ['RETURN'],
  failWhen: RETURN_ERRORS,
  properties: {
    'erpData:vendor': 'POHEADER.VENDOR',
    'erpData:companyCode': 'POHEADER.COMP_CODE',
    'erpData:currency': 'POHEADER.CURRENCY',
    'erpData:documentDate': 'POHEADER.DOC_DATE',
    'erpData:purchasingOrganization': 'POHEADER.PURCH_ORG',
  },
};

const READ_PURCHASE_ORDER_REST = {
  service: '/sap/opu/odata/sap/API_PURCHASEORDER_PROCESS_SRV',
  path: '/A_PurchaseOrder({q:ORDER})',
  parameters: { ORDER: objectIdPart(0, 10) },
  properties: {
    'erpData:vendor': 'Supplier',
    'erpData:companyCode': 'CompanyCode',
    'erpData:currency': 'DocumentCurrency',
    'erpData:documentDate': 'PurchaseOrderDate',
    'erpData:purchasingOrganization': 'PurchasingOrganization',
  },
};

/** Every template by name, for `connect2erp template`: the use cases, the other workflow start, and the reads. */
const RAW = {
  link: { RFC: LINK_RFC, Rest: LINK_REST },
  'link-by-reference': { Rest: LINK_BY_REFERENCE_REST },
  barcode: { RFC: BARCODE_RFC },
  workflow: { RFC: WORKFLOW_RFC },
  'workflow-to-agent': { RFC: WORKFLOW_TO_AGENT_RFC },
  'read-supplier-invoice': { RFC: READ_SUPPLIER_INVOICE_RFC, Rest: READ_SUPPLIER_INVOICE_REST },
  'read-purchase-order': { RFC: READ_PURCHASE_ORDER_RFC, Rest: READ_PURCHASE_ORDER_REST },
};

export type TemplateName = keyof typeof RAW;
export const TEMPLATE_NAMES = Object.keys(RAW) as TemplateName[];

const RFC_TEMPLATES: Record<UseCase, RfcCallConfig> = {
  link: rfcCallSchema.parse(LINK_RFC),
  barcode: rfcCallSchema.parse(BARCODE_RFC),
  workflow: rfcCallSchema.parse(WORKFLOW_RFC),
};
const LINK_REST_TEMPLATE: RestCallConfig = restCallSchema.parse(LINK_REST);

/** A template as YAML, ready to paste in a task file (under `rfc:`, `rest:` or `read:`); undefined when there is none. */
export function templateYaml(name: TemplateName, transport: 'RFC' | 'Rest'): string | undefined {
  const raw = (RAW[name] as Partial<Record<'RFC' | 'Rest', unknown>>)[transport];
  const key = name.startsWith('read-') ? 'read' : transport === 'RFC' ? 'rfc' : 'rest';
  return raw === undefined ? undefined : stringify({ [key]: raw });
}

/** The call a task makes: its own declaration, or the template for its use case and transport (validation makes sure one exists). */
/** A task's call with the transport that sends it: the transport says which kind of call it is. */
export type TaskCall = { transport: 'RFC'; call: RfcCallConfig } | { transport: 'Rest'; call: RestCallConfig };

export function callFor(task: TaskConfig): TaskCall {
  return task.function === 'RFC'
    ? { transport: 'RFC', call: task.rfc ?? RFC_TEMPLATES[task.useCase] }
    : { transport: 'Rest', call: task.rest ?? LINK_REST_TEMPLATE };
}
