import type { TaskCall } from '../../config/templates.js';
import type { UseCase } from '../../config/task-schema.js';
import { readTableRequest, readTableRows } from '../../erp/read-table.js';
import type { RfcRequest } from '../../erp/rfc-client.js';
import { RfcFault } from '../../erp/rfc-fault.js';
import { tableRows } from '../../erp/soap.js';
import { sapDate, type DateFormat } from '../../job/calls/values.js';
import type { ErpPort } from '../../ports/erp-port.js';

/** A row SAP holds in a content repository: the ArchiveLink document id, and what it is (a link, a bar code). */
export interface SapRow {
  docId: string;
  what: string;
  /** A link's business object, `BKPF 100019000000222023`. */
  object?: string;
}

/** The days a reconciliation covers (UTC), both included. */
export interface DayRange {
  from: Date;
  until: Date;
}

/** How SAP lists the rows of one content repository for a task's use case, a read at a time; each read-only. */
type SapListing = (
  erp: ErpPort<RfcRequest>,
  repository: string,
  range: DayRange,
  dates: DateFormat,
) => AsyncIterable<SapRow[]>;

const DAY_MS = 24 * 3600 * 1000;

/**
 * The links stored in a content repository on the range's days (their AR_DATE, the storage date
 * the link carries): ARCHIV_GET_CONNECTIONS by ARCHIV_ID with FROM_AR_DATE and UNTIL_AR_DATE, as
 * public ABAP callers pass them (sap-interfaces.md §1); NOTHING_FOUND is none.
 */
async function* links(
  erp: ErpPort<RfcRequest>,
  repository: string,
  range: DayRange,
  dates: DateFormat,
): AsyncIterable<SapRow[]> {
  // A day at a time: an answer is held whole (at most 4 MiB), and a month of links would not fit.
  for (let at = range.from.getTime(); at <= range.until.getTime(); at += DAY_MS) {
    const day = sapDate(new Date(at).toISOString(), dates) as string;
    yield await linksOn(erp, repository, day);
  }
}

async function linksOn(erp: ErpPort<RfcRequest>, repository: string, day: string): Promise<SapRow[]> {
  try {
    const answer = await erp.read({
      functionName: 'ARCHIV_GET_CONNECTIONS',
      params: { ARCHIV_ID: repository, FROM_AR_DATE: day, UNTIL_AR_DATE: day, CONNECTIONS: [] },
    });
    return tableRows(answer.CONNECTIONS).map((row) => {
      const object = `${String(row.SAP_OBJECT)} ${String(row.OBJECT_ID)}`;
      return { docId: String(row.ARC_DOC_ID), what: `link ${object}`, object };
    });
  } catch (error) {
    if (error instanceof RfcFault && error.fault.exception === 'NOTHING_FOUND') return [];
    throw error;
  }
}

/**
 * The external bar codes of a content repository SAP has not matched yet (BDS_BAR_EX, read with
 * RFC_READ_TABLE; SAP deletes a row once a user's bar code matched it and the document is linked,
 * which `links` then shows). The table has no date: every row, whatever the range.
 */
async function* barcodes(erp: ErpPort<RfcRequest>, repository: string): AsyncIterable<SapRow[]> {
  const request = readTableRequest('BDS_BAR_EX', ['BARCODE', 'EX_DOC_ID'], { CONTREP: repository });
  yield readTableRows(await erp.read(request)).map((row) => ({
    docId: row.EX_DOC_ID,
    what: `bar code ${row.BARCODE}`,
  }));
}

/** No remote-enabled read lists work items by document (templates.ts): a workflow start has none. */
const LISTINGS: Record<UseCase, SapListing[]> = { link: [links], barcode: [barcodes, links], workflow: [] };

/** How SAP's side of a task is listed, over SOAP-RFC; none for a workflow start (no remote read lists work items by document) or a Rest call. */
export const sapListings = (useCase: UseCase, call: TaskCall): SapListing[] =>
  call.transport === 'RFC' ? LISTINGS[useCase] : [];
