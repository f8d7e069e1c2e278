import type { RepositoryDocument } from '../../repository/document.js';

/**
 * A document this run holds for one task's attempt: status IN_PROGRESS with `token`, until
 * `expires`. `doc` is the document as it was read, with the changeToken the claim's write left, so
 * the outcome is written only if nobody changed the document since (a run that took it over once
 * the claim expired is never overwritten).
 */
export interface Claim {
  doc: RepositoryDocument;
  task: string;
  token: string;
  /** When the claim was written. */
  at: Date;
  expires: Date;
}

/** What a claim is written for: a task, and how long its claims hold (task.yaml `claimTimeoutMs`). */
export interface ClaimTerms {
  name: string;
  claimTimeoutMs: number;
}

/** How a claimed document's attempt ends in the repository. */
export type Ending =
  | {
      status: 'DONE';
      reference: string | undefined;
      message: string | undefined;
      /** Written with the DONE: "Open in SAP" and SAP's data. */
      written?: Record<string, unknown>;
    }
  | {
      status: 'RETRY' | 'FAILED';
      message: string;
      attempts: number;
      /** When a RETRY is due; none for FAILED. */
      retryAt?: Date;
    };
