import { PermanentError } from '../../errors.js';
import type { ErpPort } from '../../erp/port.js';
import type { RfcStructure } from '../../erp/soap.js';
import type { RepositoryDocument } from '../../repository/document.js';
import { AbapValues } from '../abap.js';
import { outcomeOf, type CallOutcome, type UseCaseHandler } from './types.js';

/** SAP's BAPI answer said no (`RETURN` type E or A): its message is kept on the document. */
export class BapiError extends PermanentError {}

/**
 * `BAPI_BARCODE_SENDLIST` with all documents of a batch in one table. When SAP refuses the
 * list, the documents are sent one by one, so one bad bar code fails only its own document.
 */
export const barcode: UseCaseHandler = async (docs, erp) => {
  const rows = docs.map((doc) => {
    try {
      return { doc, row: barcodeRow(doc) };
    } catch (error) {
      return { doc, outcome: { error } as CallOutcome };
    }
  });
  const valid = rows.filter((r) => r.row !== undefined) as Array<{ doc: RepositoryDocument; row: RfcStructure }>;
  const sent = await send(valid.map((r) => r.row), erp);
  return rows.map((r) => r.outcome ?? (sent.get(r.row as RfcStructure) as CallOutcome));
};

function barcodeRow(doc: RepositoryDocument): RfcStructure {
  const v = new AbapValues(doc.properties, doc.path);
  return {
    BARCODE: v.char('erpBarcode:barcode', 'BARCODE', 40),
    CONTREP: v.char('erpHttpContent:archiveId', 'CONTREP', 2),
    DOCID: v.char('erpHttpContent:docId', 'DOCID', 40),
    ARDATE: v.date('erpHttpContent:created', 'ARDATE'),
    DOCTYPE: v.char('erpBarcode:docTyp', 'DOCTYPE', 20),
  };
}

async function send(rows: RfcStructure[], erp: ErpPort): Promise<Map<RfcStructure, CallOutcome>> {
  const outcomes = new Map<RfcStructure, CallOutcome>();
  if (rows.length === 0) return outcomes;
  const all = await outcomeOf(async () => {
    const answer = await erp.write('BAPI_BARCODE_SENDLIST', { BARCODETABLE: rows, RETURN: {} });
    const ret = Object(answer.RETURN) as Record<string, string>;
    if (ret.TYPE === 'E' || ret.TYPE === 'A') throw new BapiError(`BAPI_BARCODE_SENDLIST: ${ret.MESSAGE}`, { target: 'BAPI_BARCODE_SENDLIST' });
    return '';
  });
  if (all.error instanceof BapiError && rows.length > 1) {
    for (const row of rows) for (const [r, outcome] of await send([row], erp)) outcomes.set(r, outcome);
    return outcomes;
  }
  for (const row of rows) outcomes.set(row, all.error ? all : { reference: row.BARCODE });
  return outcomes;
}
