/**
 * SAP Content Server HTTP interface 4.5: its commands, the access mode each needs and the
 * parameters each signs (docs/reference/sap-interfaces.md §3, "Commands" and "Security").
 */

type AccessMode = 'r' | 'c' | 'u' | 'd';

export type CommandName =
  | 'serverInfo'
  | 'getCert'
  | 'putCert'
  | 'info'
  | 'get'
  | 'docGet'
  | 'search'
  | 'attrSearch'
  | 'create'
  | 'mCreate'
  | 'append'
  | 'update'
  | 'delete';

type Method = 'GET' | 'PUT' | 'POST';

interface CommandRule {
  /** The methods it takes, each with what it signs besides contRep, accessMode, authId and expiration. */
  signed: Partial<Record<Method, readonly string[]>>;
  /** The access mode the URL's `accessMode` must include; none for the unsigned commands. */
  mode?: AccessMode;
}

const DOC_ID = ['docId'] as const;

export const COMMANDS: Record<CommandName, CommandRule> = {
  serverInfo: { signed: { GET: [] } },
  // pVersion 0046, for SAP's cache server: unsigned, contRep and pVersion only.
  getCert: { signed: { GET: [] } },
  putCert: { signed: { PUT: [] } },
  info: { mode: 'r', signed: { GET: DOC_ID } },
  // compId is not signed for get even when present (SAP-signed URLs seen in public code, §3).
  get: { mode: 'r', signed: { GET: DOC_ID } },
  docGet: { mode: 'r', signed: { GET: DOC_ID } },
  search: { mode: 'r', signed: { GET: DOC_ID } },
  attrSearch: { mode: 'r', signed: { GET: DOC_ID } },
  create: { mode: 'c', signed: { PUT: ['docId', 'compId', 'docProt'], POST: ['docId', 'docProt'] } },
  mCreate: { mode: 'c', signed: { POST: ['docId', 'docProt'] } },
  append: { mode: 'u', signed: { PUT: ['docId', 'compId'] } },
  // update POST signs docId only (Lamiv's and BeOne's verifiers; its compIds are in the parts).
  update: { mode: 'u', signed: { PUT: ['docId', 'compId'], POST: DOC_ID } },
  delete: { mode: 'd', signed: { GET: ['docId', 'compId'] } },
};

/** Always signed, whatever the command. */
export const ALWAYS_SIGNED = ['contRep', 'accessMode', 'authId', 'expiration'] as const;

export const isCommand = (name: string): name is CommandName => Object.hasOwn(COMMANDS, name);

/** The status codes the protocol names (SAP "Error Codes"). */
export const STATUS = {
  ok: 200,
  created: 201,
  missingCreated: 250,
  badRequest: 400,
  securityBreach: 401,
  exists: 403,
  notFound: 404,
  certificateNotRecognised: 406,
  inaccessible: 409,
  internal: 500,
  /** HTTP's own, not the protocol's: too many requests at once (maxRequestsInFlight), with Retry-After. */
  unavailable: 503,
} as const;

/**
 * A refusal or failure the protocol has a status for: the answer is that status with the
 * reason in `X-ErrorDescription` (plain ASCII).
 */
export class ArchiveLinkError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The standard component when none is named: `data`, else `data1` (§3, "compId conventions"). */
export const DEFAULT_COMPONENTS = ['data', 'data1'] as const;

/** SAP's dates and times are UTC: `YYYY-MM-DD` and `HH:MM:SS`. */
export function sapDateTime(date: Date): { date: string; time: string } {
  const iso = date.toISOString();
  return { date: iso.slice(0, 10), time: iso.slice(11, 19) };
}
