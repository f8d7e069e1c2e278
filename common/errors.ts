/**
 * Typed errors, raised where the failure is known, so that retry logic asks `error.transient`
 * and `error.scope` instead of parsing messages.
 */
interface ErrorDetails {
  /** HTTP status of the answer, when there was one. */
  status?: number;
  /** What was being accessed: a URL path, a file, a document. */
  target?: string;
}

/**
 * Whose failure it is, and so what it stops (the README's "Failure scope"):
 * - `document`: that document's own outcome (attempts, back-off, FAILED); its neighbours go on;
 * - `lane`: one task's calls to one SAP system (its function module refused): that lane stops,
 *   its documents wait with no attempt charged;
 * - `system`: one SAP system (unreachable, logon or certificate refused, the service off): every
 *   lane of that system stops, its documents wait with no attempt charged, other systems go on;
 * - `suspect`: an ABAP runtime error, the document's data or the system's; the document is sent
 *   alone to tell (src/job/lanes/lane.ts);
 * - `run`: the repository or the configuration; the run stops.
 */
type FailureScope = 'document' | 'lane' | 'system' | 'suspect' | 'run';

export abstract class Connect2ErpError extends Error {
  abstract readonly transient: boolean;
  readonly scope: FailureScope = 'document';
  readonly status?: number;
  readonly target?: string;

  constructor(message: string, details: ErrorDetails = {}) {
    super(message);
    this.name = new.target.name;
    this.status = details.status;
    this.target = details.target;
  }
}

/** Worth trying again later: connection errors, time-outs, 429, 502/503/504. */
export class TransientError extends Connect2ErpError {
  readonly transient = true;
}

/**
 * The request left but no answer came back (a time-out while waiting, a connection lost, a
 * bare 500 or 504): the ERP may have done the work. Only a call that is safe to repeat is retried.
 */
export class UncertainError extends TransientError {}

/** Another writer changed the document first (stale changeToken, HTTP 409). */
export class ConflictError extends TransientError {}

/** The run is stopping (a signal or its --max-duration): the call was never sent, so nothing is uncertain. */
export class NotSentError extends TransientError {}

/** Trying again will not help until somebody changes something. */
export class PermanentError extends Connect2ErpError {
  readonly transient = false;
}

/**
 * The ERP answered the call and said no (an ABAP exception, BAPI `RETURN` type E, an OData error):
 * the document's outcome, and proof that the system and its function module work.
 */
export class BusinessRefusal extends PermanentError {}

export class BadRequestError extends PermanentError {}
export class NotFoundError extends PermanentError {}
/**
 * A 404 without the server's error entity: the address is not served to this caller (a REST binding
 * refusing an Automation chain, a proxy's rule), rather than a thing the server does not have.
 */
export class NotServedError extends NotFoundError {}
export class ForbiddenError extends PermanentError {}

/** The repository refused the credentials: a configuration problem that stops the run. */
export class AuthenticationError extends PermanentError {
  override readonly scope = 'run';
}

/**
 * The repository's TLS certificate was not trusted (an unknown CA, expired, another host name): a
 * configuration problem, so it stops the run as refused credentials do and is never retried.
 */
export class UntrustedServerError extends AuthenticationError {}

/**
 * An SAP system could not be reached, or would not take the call now: connection refused, no such
 * host, the connection's time-out, 429, 502, 503. Nothing reached the function module; the system
 * is down, not the document.
 */
export class SystemUnavailableError extends TransientError {
  override readonly scope = 'system';
}

/**
 * An SAP system refuses the connector itself: the logon (401), its TLS certificate, the SOAP-RFC
 * service inactive in SICF, a redirect away from the configured address. A person must change
 * something; until then the system's documents wait, uncharged.
 */
export class SystemRefusalError extends PermanentError {
  override readonly scope = 'system';
}

/**
 * An SAP system refuses one function module: the user may not call it (S_RFC, RFC_NO_AUTHORITY)
 * or it does not exist (FU_NOT_FOUND). The lane that calls it stops; other calls to the system go on.
 */
export class FunctionRefusalError extends PermanentError {
  override readonly scope = 'lane';
}

/**
 * An ABAP runtime error (SYSTEM_FAILURE) or a failed connection inside SAP (COMMUNICATION_FAILURE)
 * in a call: a runtime error rolls back the call's database work, so nothing was done. It comes
 * from one document's data (a dump) or from the system: the document is sent alone to tell, and
 * one judged the document's is tried again after its back-off, as a runtime error may pass.
 */
export class SystemFailureError extends TransientError {
  override readonly scope = 'suspect';
}

/** A document's own data is wrong or incomplete (missing `$` value, property that did not stick). */
export class DocumentError extends PermanentError {}

export interface ConfigProblem {
  file: string;
  /** Dotted key path inside the file, empty for the whole file. */
  path: string;
  message: string;
}

/** Configuration that cannot be used; carries every problem found, not just the first. */
export class ConfigError extends PermanentError {
  override readonly scope = 'run';
  readonly problems: ConfigProblem[];

  constructor(problems: ConfigProblem[]) {
    super(problems.map(formatProblem).join('\n'));
    this.problems = problems;
  }
}

export function formatProblem(problem: ConfigProblem): string {
  return problem.path === ''
    ? `${problem.file}: ${problem.message}`
    : `${problem.file}: ${problem.path}: ${problem.message}`;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
