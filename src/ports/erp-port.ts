/** A connection to one SAP system (the SOAP-RFC or the Rest client): it sends one function module call, or one HTTP request. */
export interface ErpConnection<R> {
  readonly system: { name: string };
  send(request: R): Promise<Record<string, unknown>>;
  /** The request as the dry-run report lists it. */
  describe(request: R): PlannedCall;
}

/**
 * Every call the job makes to the ERP. Reads (lookups) always go out; writes (links,
 * bar codes, work items) are one switch away from a dry run, which only records them.
 */
export interface ErpPort<R> {
  read(request: R): Promise<Record<string, unknown>>;
  write(request: R): Promise<Record<string, unknown>>;
}

export function liveErp<R>(transport: ErpConnection<R>): ErpPort<R> {
  return { read: (request) => transport.send(request), write: (request) => transport.send(request) };
}

export interface PlannedCall {
  system: string;
  /** `ARCHIV_CONNECTION_INSERT`, or `POST /sap/opu/odata/…/AttachmentContentSet`. */
  call: string;
  params: Record<string, unknown>;
}

/** What a dry run's write answers instead of SAP: a marker that the call was planned, not made. */
const PLANNED = Symbol('planned');

export const isPlanned = (answer: unknown): boolean =>
  typeof answer === 'object' && answer !== null && PLANNED in answer;

export function dryRunErp<R>(transport: ErpConnection<R>, planned: PlannedCall[]): ErpPort<R> {
  return {
    read: (request) => transport.send(request),
    write: async (request) => {
      planned.push(transport.describe(request));
      return { [PLANNED]: true };
    },
  };
}
