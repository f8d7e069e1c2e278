import { batches, type LookupFound, type RestCallConfig, type RfcCallConfig } from '../../../config/call-schema.js';
import { AuthenticationError, PermanentError, type Connect2ErpError } from '../../../../common/errors.js';
import { isPlanned } from '../../../ports/erp-port.js';
import type { RepositoryDocument } from '../../../repository/document.js';
import { dig, fill, mapValues, type DateFormat, type MappedValue } from '../mapping.js';
import type { PlannedFor } from '../../records.js';

/**
 * What one document's ERP work came to: done with SAP's reference, or the error that stopped it.
 * In a dry run, `planned` is the call it would have got, with its values.
 */
export type CallOutcome =
  { reference: string; message?: string; planned?: PlannedFor; error?: undefined } | { error: Connect2ErpError };

export interface MappedDocument {
  doc: RepositoryDocument;
  values: MappedValue[];
}

/** The transport-specific half of a call: how to look, how to send, what counts as done already. */
export interface CallAdapter {
  readonly config: RfcCallConfig | RestCallConfig;
  /** How the call's dates go out (the system's `rfc.dateFormat`; asXML's for OData). */
  readonly dateFormat: DateFormat;
  /** `ARCHIV_CONNECTION_INSERT` or `POST /…/AttachmentContentSet`, for messages. */
  readonly name: string;
  /** The row showing the work is done already, or undefined. */
  lookup?(values: MappedValue[]): Promise<unknown>;
  /** One call for these documents: one, or a batch when the call has `TABLE[].FIELD` columns. */
  send(documents: MappedDocument[]): Promise<Record<string, unknown>>;
  alreadyDone(error: unknown): boolean;
}

/** The answer came back but says no (BAPI `RETURN` type E): SAP's message is kept on the document. */
export class ErpRefusal extends PermanentError {}

/** Run one document's work, turning a thrown error into its outcome. */
async function outcomeOf(work: () => Promise<CallOutcome>): Promise<CallOutcome> {
  try {
    return await work();
  } catch (error) {
    return { error: error as Connect2ErpError };
  }
}

function done(adapter: CallAdapter, values: MappedValue[], answer: unknown): CallOutcome {
  const { erpReference, message } = adapter.config.result;
  const planned = isPlanned(answer)
    ? { planned: { call: adapter.name, values: Object.fromEntries(values.map((v) => [v.target, v.value])) } }
    : {};
  return {
    reference: fill(erpReference, values, answer),
    ...(message === undefined ? {} : { message: fill(message, values, answer) }),
    ...planned,
  };
}

function checkAnswer(adapter: CallAdapter, answer: Record<string, unknown>): void {
  const rule = adapter.config.failWhen;
  if (rule === undefined || !rule.in.includes(String(dig(answer, rule.field)))) return;
  throw new ErpRefusal(`${adapter.name}: ${String(dig(answer, rule.message))}`, { target: adapter.name });
}

/**
 * The row of a lookup answer that shows the work is done: the first of its `found.list` table,
 * or the first matching every `found.match` field; undefined when there is none.
 */
export function foundIn(answer: unknown, found: LookupFound, values: MappedValue[]): unknown {
  const rows = dig(answer, found.list);
  const list = Array.isArray(rows) ? (rows as Array<Record<string, unknown>>) : [];
  return list.find((row) =>
    Object.entries(found.match ?? {}).every(([field, template]) => String(row[field]) === fill(template, values)),
  );
}

async function single(adapter: CallAdapter, item: MappedDocument & { repeat: boolean }): Promise<CallOutcome> {
  return outcomeOf(async () => {
    // Looked up only when an earlier attempt may have reached SAP: a first attempt is one call.
    const found = item.repeat ? await adapter.lookup?.(item.values) : undefined;
    if (found !== undefined) return done(adapter, item.values, found);
    let answer: Record<string, unknown> = {};
    try {
      answer = await adapter.send([item]);
    } catch (error) {
      if (!adapter.alreadyDone(error)) throw error;
    }
    checkAnswer(adapter, answer);
    return done(adapter, item.values, answer);
  });
}

/** One call for the batch; when SAP refuses it, each document alone, so one bad row fails only itself. */
async function batch(adapter: CallAdapter, items: MappedDocument[]): Promise<CallOutcome[]> {
  let answer: Record<string, unknown>;
  try {
    answer = await adapter.send(items);
    checkAnswer(adapter, answer);
  } catch (thrown) {
    const error = thrown as Connect2ErpError;
    const refused = !error.transient && !(error instanceof AuthenticationError);
    if (refused && items.length > 1) return (await Promise.all(items.map((item) => batch(adapter, [item])))).flat();
    return items.map(() => ({ error }));
  }
  return items.map((item) => done(adapter, item.values, answer));
}

/** One promise per document for the answer of a call they share. */
const spread = (all: Promise<CallOutcome[]>, n: number): Array<Promise<CallOutcome>> =>
  Array.from({ length: n }, (_, i) => all.then((outcomes) => outcomes[i]));

/**
 * A task's call for its claimed documents of one ERP system: one outcome per document, in
 * order. Values are mapped and checked first: a value that does not fit never reaches SAP. A
 * document whose earlier attempt may have reached SAP (`repeat`) is looked up before it is sent.
 */
export function execute(
  adapter: CallAdapter,
  items: Array<{ doc: RepositoryDocument; repeat: boolean }>,
): Array<Promise<CallOutcome>> {
  const mapped = items.map(({ doc, repeat }) => {
    try {
      return { doc, repeat, values: mapValues(adapter.config.parameters, doc, adapter.dateFormat) };
    } catch (error) {
      return { doc, error: error as Connect2ErpError };
    }
  });
  const valid = mapped.filter(
    (m): m is MappedDocument & { repeat: boolean; error?: undefined } => m.error === undefined,
  );
  const pending =
    batches(adapter.config.parameters) && valid.length > 0
      ? spread(batch(adapter, valid), valid.length)
      : valid.map((item) => single(adapter, item));
  const byDoc = new Map(valid.map((item, i) => [item.doc, pending[i]]));
  return mapped.map((m) =>
    m.error === undefined ? (byDoc.get(m.doc) as Promise<CallOutcome>) : Promise.resolve({ error: m.error }),
  );
}
