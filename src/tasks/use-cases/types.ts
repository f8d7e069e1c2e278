import type { Connect2ErpError } from '../../errors.js';
import type { ErpPort } from '../../erp/port.js';
import type { RepositoryDocument } from '../../repository/document.js';
import { AbapValues } from '../abap.js';

/** What one document's ERP work came to: done with SAP's reference, or the error that stopped it. */
export type CallOutcome = { reference: string; error?: undefined } | { error: Connect2ErpError };

/** A use case turns claimed documents into ERP calls; one outcome per document, in order. */
export type UseCaseHandler = (docs: RepositoryDocument[], erp: ErpPort) => Promise<CallOutcome[]>;

/** A handler that makes one call per document, each with the document's values as ABAP fields. */
export function perDocument(call: (v: AbapValues, erp: ErpPort) => Promise<string>): UseCaseHandler {
  return (docs, erp) => Promise.all(docs.map((doc) => outcomeOf(() => call(new AbapValues(doc.properties, doc.path), erp))));
}

/** Run one document's work, turning a thrown error into its outcome. */
export async function outcomeOf(work: () => Promise<string>): Promise<CallOutcome> {
  try {
    return { reference: await work() };
  } catch (error) {
    return { error: error as Connect2ErpError };
  }
}
