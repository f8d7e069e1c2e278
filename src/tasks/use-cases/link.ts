import { RfcFault } from '../../erp/rfc-client.js';
import { tableRows } from '../../erp/soap.js';
import type { ErpPort } from '../../erp/port.js';
import { perDocument } from './types.js';

/**
 * ArchiveLink: `ARCHIV_GET_CONNECTIONS` first, then `ARCHIV_CONNECTION_INSERT`. A link that
 * exists already (found first, or SAP answering OA403) counts as done, so no retry ever
 * creates a second link.
 */
export const link = perDocument(async (v, erp) => {
  const key = {
    SAP_OBJECT: v.char('erpCreateALDocument:erpObject', 'SAP_OBJECT', 10),
    OBJECT_ID: v.char('erpCreateALDocument:erpObjectId', 'OBJECT_ID', 50),
    ARCHIV_ID: v.char('erpHttpContent:archiveId', 'ARCHIV_ID', 2),
    ARC_DOC_ID: v.char('erpHttpContent:docId', 'ARC_DOC_ID', 40),
  };
  const params = {
    ...key,
    AR_OBJECT: v.char('erpCreateALDocument:erpArchiveObject', 'AR_OBJECT', 10),
    AR_DATE: v.date('erpCreateALDocument:erpArchiveDate', 'AR_DATE'),
    MANDANT: v.char('erpCreateALDocument:erpClient', 'MANDANT', 3),
    DOC_TYPE: v.char('erpCreateALDocument:erpDocumentTyp', 'DOC_TYPE', 20),
    FILENAME: v.char('erpCreateALDocument:erpFilename', 'FILENAME', 255),
    DESCR: v.char('erpCreateALDocument:erpDescription', 'DESCR', 60),
    CREATOR: v.char('erpCreateALDocument:erpCreator', 'CREATOR', 12),
  };
  const reference = `${key.SAP_OBJECT} ${key.OBJECT_ID}`;
  if (await linked(erp, key)) return reference;
  try {
    await erp.write('ARCHIV_CONNECTION_INSERT', params);
  } catch (error) {
    if (!(error instanceof RfcFault && error.messageKey === 'OA403')) throw error;
  }
  return reference;
});

async function linked(erp: ErpPort, key: Record<string, string>): Promise<boolean> {
  try {
    const answer = await erp.read('ARCHIV_GET_CONNECTIONS', {
      OBJECTTYPE: key.SAP_OBJECT, OBJECT_ID: key.OBJECT_ID, ARCHIV_ID: key.ARCHIV_ID, ARC_DOC_ID: key.ARC_DOC_ID, CONNECTIONS: [],
    });
    return tableRows(answer.CONNECTIONS).length > 0;
  } catch (error) {
    if (error instanceof RfcFault && error.fault.exception === 'NOTHING_FOUND') return false;
    throw error;
  }
}
