import type { LookupFound, RestCallConfig, RfcCallConfig } from '../../config/call-schema.js';
import {
  BusinessRefusal,
  Connect2ErpError,
  DocumentError,
  PermanentError,
  UncertainError,
} from '../../../common/errors.js';
import { isPlanned } from '../../ports/erp-port.js';
import type { RepositoryDocument } from '../../repository/document.js';
import type { Claim } from '../claims/claim.js';
import { dig, fill, mapValues, type DateFormat, type MappedValue } from './values.js';
import type { PlannedFor } from '../records.js';
import type { DocumentUrls } from './document-url.js';
import { withoutSignature } from '../../document-link.js';

/**
 * What one document's ERP work came to: done with SAP's reference, or the error that stopped it, or
 * (`alone`) a list SAP refused or that ended in a runtime error, so that the document goes again
 * alone, in a unit and under a claim of its own. In a dry run, `planned` is the call it would have
 * got, with its values.
 */
export type CallOutcome =
  | {
      reference: string;
      message?: string;
      planned?: PlannedFor;
      /** Written with the DONE: "Open in SAP" and SAP's data (after-link.ts). */
      written?: Record<string, unknown>;
      error?: undefined;
      alone?: undefined;
    }
  | {
      error: Connect2ErpError;
      alone?: undefined;
      /** The call was sent again after a runtime error: SAP may have done the first (it goes unsent only as taken over). */
      repeated?: true;
    }
  | { alone: true; error?: undefined };

/** An outcome a document's status can be written from. */
export type SettledOutcome = Exclude<CallOutcome, { alone: true }>;

export interface MappedDocument {
  doc: RepositoryDocument;
  values: MappedValue[];
}

/** A document to send, and what its earlier attempts leave to settle first. */
export interface CallItem {
  doc: RepositoryDocument;
  /** An earlier attempt may have reached SAP (it failed, its answer was lost, its run stopped): SAP is asked first. */
  repeat: boolean;
  /** Its attempts are used up: it is looked up (its last answer was lost), and never sent again. */
  lastLook: boolean;
  /**
   * Claimed by this run already — with its labels (claims/claims.ts `label`), or for the list SAP
   * refused that it was in: nothing more to write to send it.
   */
  held?: Claim;
}

/** The transport-specific half of a call: how to look, how to send, what counts as done already. */
export interface CallAdapter {
  readonly config: RfcCallConfig | RestCallConfig;
  /** How the call's dates go out (the system's `rfc.dateFormat`; asXML's for OData). */
  readonly dateFormat: DateFormat;
  /** The documents' addresses for `documentUrl` values (the system's `documentLinks`), when it has them. */
  readonly urls?: DocumentUrls;
  /** `ARCHIV_CONNECTION_INSERT` or `POST /…/AttachmentContentSet`, for messages. */
  readonly name: string;
  /** Why the transport cannot carry a value (SOAP-RFC's XML: a control character), or undefined. */
  unsendable?(value: string): string | undefined;
  /** The row showing the document's work is done already, or undefined. */
  lookup?(values: MappedValue[]): Promise<unknown>;
  /** One call for these documents: one, or a batch when the call has `TABLE[].FIELD` columns. */
  send(documents: MappedDocument[]): Promise<Record<string, unknown>>;
  alreadyDone(error: unknown): boolean;
  /** A call that changes nothing, to tell whether the system answers at all (RFC_PING, the service document). */
  probe(): Promise<unknown>;
}

/** The answer came back but says no (BAPI `RETURN` type E): SAP's message is kept on the document. */
export class ErpRefusal extends BusinessRefusal {}

/**
 * A lookup that could not tell whether SAP has the document's work (refused, or no answer): the
 * document is not sent again blind. Transient as its cause: a lookup that may answer later is asked
 * again at the next attempt.
 */
export class LookupFailedError extends Connect2ErpError {
  readonly transient: boolean;

  constructor(adapter: CallAdapter, cause: Connect2ErpError) {
    super(`${adapter.name}: whether SAP has it already cannot be told, the lookup failed: ${cause.message}`, {
      status: cause.status,
      target: cause.target,
    });
    this.transient = cause.transient;
  }
}

/** Looked up after its answer was lost, not found, and its attempts used up: it never reached SAP. */
export class AttemptsUsedUp extends PermanentError {}

function done(adapter: CallAdapter, values: MappedValue[], answer: unknown): CallOutcome {
  const { erpReference, message } = adapter.config.result;
  const planned = isPlanned(answer)
    ? {
        planned: {
          call: adapter.name,
          // A document link's signature opens the document: a plan shows the link without it.
          values: Object.fromEntries(values.map((v) => [v.target, withoutSignature(v.value)])),
        },
      }
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
 * The row of a lookup answer that shows the work is done: the first of its `found.list` table
 * whose fields equal every `match` value and start with every `startsWith` value; undefined when
 * there is none.
 */
export function foundIn(answer: unknown, found: LookupFound, values: MappedValue[]): unknown {
  const rows = dig(answer, found.list);
  const list = Array.isArray(rows) ? (rows as Array<Record<string, unknown>>) : [];
  const holds = (kind: 'match' | 'startsWith', row: Record<string, unknown>): boolean =>
    Object.entries(found[kind] ?? {}).every(([field, template]) => {
      const [value, wanted] = [String(row[field]), fill(template, values)];
      return kind === 'match' ? value === wanted : value.startsWith(wanted);
    });
  return list.find((row) => holds('match', row) && holds('startsWith', row));
}

/**
 * What SAP already has of a document an earlier attempt may have reached: its work found (done),
 * not found with its attempts used up (it never reached SAP), or undefined to send it. A lookup
 * that fails says so (LookupFailedError); a system's failure stays the system's.
 */
async function lookedUp(adapter: CallAdapter, item: MappedDocument & CallItem): Promise<CallOutcome | undefined> {
  if (!item.repeat || adapter.lookup === undefined) return undefined;
  let found: unknown;
  try {
    found = await adapter.lookup(item.values);
  } catch (error) {
    const failure = error as Connect2ErpError;
    return { error: failure.scope === 'document' ? new LookupFailedError(adapter, failure) : failure };
  }
  if (found !== undefined) return done(adapter, item.values, found);
  if (item.lastLook)
    return {
      error: new AttemptsUsedUp(
        `${adapter.name}: not in SAP (looked up after its answer was lost), and its attempts are used up`,
      ),
    };
  return undefined;
}

/**
 * A document an earlier attempt may have reached SAP with, refused now: SAP may have done the
 * earlier attempt's work after its lookup (an answer that came too late, the work still on its way
 * when the lookup read), and refuse the repeat for it ("already stored for this document"). It is
 * looked up once more before the refusal is the document's: found, it is done. A lookup that
 * cannot say leaves the refusal as it was.
 */
async function doneMeanwhile(adapter: CallAdapter, item: MappedDocument & CallItem): Promise<CallOutcome | undefined> {
  if (!item.repeat || adapter.lookup === undefined) return undefined;
  const found = await adapter.lookup(item.values).catch(() => undefined);
  return found === undefined ? undefined : done(adapter, item.values, found);
}

/**
 * One call for the documents of a unit. A document whose earlier attempt may have reached SAP is
 * looked up first (it goes alone: in its lane it holds its claim no longer than its lookups and
 * its call). When SAP refuses a list, or a runtime error ends it, each document is to go again
 * alone (`alone`: its lane sends it in a unit of its own, under a claim of its own, looked up
 * first), so one bad row fails only itself; a document alone that meets a runtime error is sent
 * once more (looked up first) before its outcome is the runtime error (its lane decides whose).
 */
async function sendUnit(
  adapter: CallAdapter,
  items: Array<MappedDocument & CallItem>,
  retried = false,
): Promise<CallOutcome[]> {
  const [first] = items;
  const settled = items.length === 1 ? await lookedUp(adapter, first) : undefined;
  if (settled !== undefined) return [settled];
  let answer: Record<string, unknown>;
  try {
    answer = await adapter.send(items);
    checkAnswer(adapter, answer);
  } catch (thrown) {
    const error = thrown as Connect2ErpError;
    if (adapter.alreadyDone(error)) return items.map((item) => done(adapter, item.values, {}));
    const meanwhile =
      items.length === 1 && error instanceof ErpRefusal ? await doneMeanwhile(adapter, first) : undefined;
    if (meanwhile !== undefined) return [meanwhile];
    const refused = error.scope === 'document' && !error.transient;
    if ((refused || error.scope === 'suspect') && items.length > 1) return items.map(() => ({ alone: true as const }));
    if (error.scope === 'suspect' && !retried)
      return (await sendUnit(adapter, [{ ...first, repeat: true }], true)).map((outcome) =>
        outcome.error === undefined ? outcome : { ...outcome, repeated: true as const },
      );
    return items.map(() => ({ error }));
  }
  if (!adapter.config.verify || isPlanned(answer)) return items.map((item) => done(adapter, item.values, answer));
  return Promise.all(items.map((item) => verified(adapter, item, answer)));
}

/**
 * `verify`: SAP's answer is taken once a separate read finds the work. Not found (or the read
 * failed), the outcome is uncertain: the document's next attempt looks it up before sending again.
 */
async function verified(
  adapter: CallAdapter,
  item: MappedDocument,
  answer: Record<string, unknown>,
): Promise<CallOutcome> {
  const lookup = adapter.lookup as NonNullable<CallAdapter['lookup']>;
  const found = await lookup(item.values).catch((error: unknown) => error as Error);
  if (found !== undefined && !(found instanceof Error)) return done(adapter, item.values, answer);
  const why =
    found === undefined
      ? 'finds nothing: it may not have been kept (committed)'
      : `could not be made (${found.message}): whether SAP kept it is not known`;
  return {
    error: new UncertainError(
      `${adapter.name}: SAP answered, but reading the work back (verify) ${why}; looked up again at the next attempt`,
      { target: adapter.name },
    ),
  };
}

/**
 * A task's call for one unit of claimed documents of one ERP system: one outcome per document, in
 * order. Values are mapped and checked first: a value that does not fit never reaches SAP.
 */
export async function execute(adapter: CallAdapter, items: CallItem[]): Promise<CallOutcome[]> {
  const mapped = items.map(
    (item): (MappedDocument & CallItem) | { doc: RepositoryDocument; error: Connect2ErpError } => {
      try {
        const values = mapValues(adapter.config.parameters, item.doc, adapter.dateFormat, adapter.urls);
        for (const { target, value } of values) {
          const why = adapter.unsendable?.(value);
          if (why !== undefined)
            throw new DocumentError(`the value for SAP field ${target} ${why}`, { target: item.doc.path });
        }
        return { ...item, values };
      } catch (error) {
        return { doc: item.doc, error: error as Connect2ErpError };
      }
    },
  );
  const valid = mapped.filter((m): m is MappedDocument & CallItem => !('error' in m));
  const outcomes = valid.length === 0 ? [] : await sendUnit(adapter, valid);
  const byDoc = new Map(valid.map((item, i) => [item.doc, outcomes[i]]));
  return mapped.map((m) => ('error' in m ? { error: m.error } : (byDoc.get(m.doc) as CallOutcome)));
}
