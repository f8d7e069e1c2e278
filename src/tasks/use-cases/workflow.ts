import { perDocument } from './types.js';

/**
 * Store for subsequent entry: `ARCHIV_PROCESS_RFCINPUT`. A bar code alone may stand in for the
 * archive id, document id and type (spec §2.3). The agent goes in `DOCUMENT_DATA` as OTYPE/OBJID.
 */
export const workflow = perDocument(async (v, erp) => {
  const entry = {
    ARCHIV_ID: v.char('erpHttpContent:archiveId', 'ARCHIV_ID', 2),
    ARC_DOC_ID: v.char('erpHttpContent:docId', 'ARC_DOC_ID', 40),
    AR_OBJECT: v.char('erpStartWorkflow:erpArchiveObject', 'AR_OBJECT', 10),
    DOC_TYPE: v.char('erpStartWorkflow:erpDocumentTyp', 'DOC_TYPE', 20),
    BARCODE: v.char('erpStartWorkflow:erpBarcode', 'BARCODE', 40),
    LATE: v.flag('erpStartWorkflow:erpLateArchiving'),
  };
  const agent = [
    { NAME: 'OTYPE', WERT: v.char('erpStartWorkflow:erpOTyp', 'OTYPE', 2) },
    { NAME: 'OBJID', WERT: v.char('erpStartWorkflow:erpObjId', 'OBJID', 45) },
  ].filter((row) => row.WERT !== '');
  await erp.write('ARCHIV_PROCESS_RFCINPUT', { DOCUMENT_ENTRY: entry, DOCUMENT_DATA: agent });
  return entry.BARCODE || entry.ARC_DOC_ID;
});
