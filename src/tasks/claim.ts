/** The status facet's claim: which run is working on a document, and until when. */
export const CLAIMED_BY = 'erpTaskStatus:claimedBy';
export const CLAIM_EXPIRES = 'erpTaskStatus:claimExpires';

/**
 * The claim of run `runId`, holding for `ms` from `at`. Written with the document's
 * changeToken, so a 409 means another run claimed it first; after it expires, any run may
 * take the document over.
 */
export function claim(runId: string, at: Date, ms: number): Record<string, string> {
  return { [CLAIMED_BY]: runId, [CLAIM_EXPIRES]: new Date(at.getTime() + ms).toISOString() };
}

/** A claim given up, written together with the outcome. */
export const UNCLAIMED = { [CLAIMED_BY]: null, [CLAIM_EXPIRES]: null };
