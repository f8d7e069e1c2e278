/**
 * Typed errors, raised where the failure is known, so that retry logic asks
 * `error.transient` instead of parsing messages.
 */
export interface ErrorDetails {
  /** HTTP status of the answer, when there was one. */
  status?: number;
  /** What was being accessed: a URL path, a file, a document. */
  target?: string;
}

export abstract class Connect2ErpError extends Error {
  abstract readonly transient: boolean;
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

export class BadRequestError extends PermanentError {}
export class NotFoundError extends PermanentError {}
export class ForbiddenError extends PermanentError {}

/** Credentials refused: a configuration problem that stops the run, not a per-document failure. */
export class AuthenticationError extends PermanentError {}

/**
 * SAP refused the call for a reason of its own, not the document's: the user may not call the
 * function module (S_RFC), the service is inactive in SICF, the function module does not exist,
 * or the system failed (SYSTEM_FAILURE). It stops the task as refused credentials do: the
 * documents go back to READY instead of failing one by one.
 */
export class SystemRefusalError extends AuthenticationError {}

/**
 * The server's TLS certificate was not trusted (an unknown CA, expired, another host name): a
 * configuration problem, so it stops the run as refused credentials do and is never retried.
 */
export class UntrustedServerError extends AuthenticationError {}

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
