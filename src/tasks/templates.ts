import { stringify } from 'yaml';
import { restCallSchema, rfcCallSchema, type RestCallConfig, type RfcCallConfig } from '../config/call-schema.js';
import type { TaskConfig, UseCase } from '../config/task-schema.js';

/**
 * The built-in call for each use case and transport. A task without its own `rfc:` or `rest:`
 * section uses these; `connect2erp template <use case> <RFC|Rest>` prints one to start from.
 * Lengths are the ABAP field lengths (sap-interfaces.md §1).
 */

const p = (property: string, length?: number) => ({ property, ...(length === undefined ? {} : { length }) });
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
  // Looked up first, and OA403 ("already linked") counts as done: a retry never links twice.
  lookup: {
    function: 'ARCHIV_GET_CONNECTIONS',
    parameters: { OBJECTTYPE: '{SAP_OBJECT}', OBJECT_ID: '{OBJECT_ID}', ARCHIV_ID: '{ARCHIV_ID}', ARC_DOC_ID: '{ARC_DOC_ID}' },
    found: { list: 'CONNECTIONS' },
    notFound: 'NOTHING_FOUND',
  },
  alreadyDone: ['OA403'],
  result: { erpReference: '{SAP_OBJECT} {OBJECT_ID}' },
};

const BARCODE_ROW = {
  'BARCODETABLE[].BARCODE': p('erpBarcode:barcode', 40),
  'BARCODETABLE[].CONTREP': p('erpHttpContent:archiveId', 2),
  'BARCODETABLE[].DOCID': p('erpHttpContent:docId', 40),
  'BARCODETABLE[].ARDATE': date('erpHttpContent:created'),
  'BARCODETABLE[].DOCTYPE': p('erpBarcode:docTyp', 20),
};
const BAPI_RETURN = { field: 'RETURN.TYPE', in: ['E', 'A'], message: 'RETURN.MESSAGE' };

const BARCODE = {
  parameters: BARCODE_ROW,
  failWhen: BAPI_RETURN,
  // The external bar-code table is keyed by bar code and document: sending a row again adds none.
  repeatable: true,
  result: { erpReference: '{BARCODETABLE[].BARCODE}' },
};

const WORKFLOW_PARAMETERS = {
  'DOCUMENT_ENTRY.ARCHIV_ID': p('erpHttpContent:archiveId', 2),
  'DOCUMENT_ENTRY.ARC_DOC_ID': p('erpHttpContent:docId', 40),
  'DOCUMENT_ENTRY.AR_OBJECT': p('erpStartWorkflow:erpArchiveObject', 10),
  'DOCUMENT_ENTRY.DOC_TYPE': p('erpStartWorkflow:erpDocumentTyp', 20),
  'DOCUMENT_ENTRY.BARCODE': p('erpStartWorkflow:erpBarcode', 40),
  'DOCUMENT_ENTRY.LATE': { property: 'erpStartWorkflow:erpLateArchiving', transform: ['flag'] },
  // Where the agent goes differs between SAP releases; these rows are the common choice.
  'DOCUMENT_DATA[0].NAME': { constant: 'OTYPE' },
  'DOCUMENT_DATA[0].WERT': p('erpStartWorkflow:erpOTyp', 2),
  'DOCUMENT_DATA[1].NAME': { constant: 'OBJID' },
  'DOCUMENT_DATA[1].WERT': p('erpStartWorkflow:erpObjId', 45),
};

const WORKFLOW = {
  parameters: WORKFLOW_PARAMETERS,
  // A work item cannot be looked up: after an interrupted call the document waits for an operator.
  repeatable: false,
  result: { erpReference: '{DOCUMENT_ENTRY.BARCODE|DOCUMENT_ENTRY.ARC_DOC_ID}' },
};

/** S/4HANA attachment service: the file itself is uploaded, after GetAllOriginals found no copy. */
const LINK_REST = {
  service: '/sap/opu/odata/sap/API_CV_ATTACHMENT_SRV',
  parameters: {
    BusinessObjectTypeName: p('erpCreateALDocument:erpObject', 10),
    LinkedSAPObjectKey: p('erpCreateALDocument:erpObjectId', 90),
    FileName: p('file:content.name', 255),
    FileSize: p('file:content.length'),
    MimeType: p('file:content.mime-type', 128),
  },
  // The service has no update: a second upload is a second attachment, so look first.
  lookup: {
    path: '/GetAllOriginals?BusinessObjectTypeName={q:BusinessObjectTypeName}&LinkedSAPObjectKey={q:LinkedSAPObjectKey}',
    found: { list: 'results', match: { FileName: '{FileName}', FileSize: '{FileSize}' } },
  },
  method: 'POST',
  path: '/AttachmentContentSet',
  headers: {
    Slug: '{FileName}',
    'Content-Type': '{MimeType}',
    BusinessObjectTypeName: '{BusinessObjectTypeName}',
    LinkedSAPObjectKey: '{LinkedSAPObjectKey}',
  },
  body: 'content',
  result: { erpReference: '{BusinessObjectTypeName} {LinkedSAPObjectKey} {response.DocumentInfoRecordDocNumber|response.ArchiveDocumentID}' },
};

/**
 * No released OData API covers bar codes or workflow starts (sap-interfaces.md §2.2): these
 * two call the function modules through a JSON function-module gateway installed on the ABAP
 * side (such as an ICF handler in the style of cesar-sap/abap_fm_json). Adapt `service`.
 */
const FM_GATEWAY = '/sap/bc/fmcall';

const viaGateway = (functionName: string) => ({ service: FM_GATEWAY, method: 'POST', path: `/${functionName}`, body: 'parameters' });

const RAW = {
  link: { RFC: LINK_RFC, Rest: LINK_REST },
  barcode: { RFC: { function: 'BAPI_BARCODE_SENDLIST', ...BARCODE }, Rest: { ...viaGateway('BAPI_BARCODE_SENDLIST'), ...BARCODE } },
  workflow: { RFC: { function: 'ARCHIV_PROCESS_RFCINPUT', ...WORKFLOW }, Rest: { ...viaGateway('ARCHIV_PROCESS_RFCINPUT'), ...WORKFLOW } },
};

export const TEMPLATES: Record<UseCase, { RFC: RfcCallConfig; Rest: RestCallConfig }> = Object.fromEntries(
  Object.entries(RAW).map(([useCase, t]) => [useCase, { RFC: rfcCallSchema.parse(t.RFC), Rest: restCallSchema.parse(t.Rest) }]),
) as Record<UseCase, { RFC: RfcCallConfig; Rest: RestCallConfig }>;

/** A template as YAML, ready to paste under `rfc:` or `rest:` in a task file. */
export function templateYaml(useCase: UseCase, transport: 'RFC' | 'Rest'): string {
  return stringify({ [transport === 'RFC' ? 'rfc' : 'rest']: RAW[useCase][transport] });
}

/** The call a task makes: its own declaration, or the template for its use case and transport. */
export function callFor(task: TaskConfig): RfcCallConfig | RestCallConfig {
  return task.function === 'RFC' ? (task.rfc ?? TEMPLATES[task.useCase].RFC) : (task.rest ?? TEMPLATES[task.useCase].Rest);
}
