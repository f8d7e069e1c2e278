import { ConflictError, Connect2ErpError } from '../../../common/errors.js';
import { notStored, PropertiesDroppedError, type RepositoryReader } from '../../repository/client.js';
import type { RepositoryDocument } from '../../repository/document.js';
import type { RepositoryWriter } from '../../ports/repository-writer.js';
import { attemptsOf, claimedBy, claimExpires, heldBy, messageOf, STATUS, statusOf } from '../../status/facet.js';
import {
  attemptFailed,
  claim as claimFor,
  claimTokens,
  done,
  failed,
  inProgress,
  released,
  runOf,
  UNCLAIMED,
} from '../../status/transitions.js';
import type { ClaimedDocument } from '../records.js';
import type { Claim, ClaimTerms, Ending } from './claim.js';

interface ClaimsDeps {
  client: RepositoryReader;
  writer: RepositoryWriter;
  runId: string;
  /** The clock claims are written and judged by (a test moves it on). */
  now: () => Date;
}

/** A claim written again before its call: renewed, refused (it was not written), or not even read back after a 409. */
export type Renewal = { claim: Claim } | { refused: unknown } | { unread: unknown };

/** Why the intake leaves a document it found changed under it to the next run. */
export const CHANGED_FIRST =
  'changed by another run or a user while being labelled; the next run looks at it again if it is still unlabelled';

/** How often an outcome's write meets a user's edit before it is given up (a document being edited by the second). */
const WRITES = 3;

/**
 * The one owner of a run's claims: the only code that writes IN_PROGRESS or takes it away, and
 * the registry of what this run holds. Every claim is written with the document's changeToken, so
 * a 409 means another run, another attempt or a user changed it first — or that this very write
 * went through and its answer was lost (the client sent it again with the token the first write
 * used up). Either way the document is read again (`reread`), and only this claim's own token
 * makes it ours. Tokens name one attempt of one run (status/transitions.ts `claimTokens`), so a
 * run never mistakes another run's claim, or another of its own, for the one it wrote.
 */
export class Claims {
  /** A new token for each claim of the run. */
  private readonly token: () => string;
  /** Documents claimed and not settled yet, by uid: what a run cut short leaves claimed. */
  private readonly held = new Map<string, Claim>();
  /**
   * Claims written with a document's labels, until a lane of their task takes them. What no lane
   * took (the run stopped reading before the intake's page was handed over) is given back when the
   * run ends; at most the intake's round of documents (storage.yaml `intakeRoundSize`) is here.
   */
  private readonly labelled = new Map<string, Claim>();

  constructor(private readonly deps: ClaimsDeps) {
    this.token = claimTokens(deps.runId);
  }

  /**
   * Claim a document for `task` just before its call goes out. Answers the claim, or undefined when
   * another run, attempt or user has the document; a repository error is thrown.
   */
  async acquire(doc: RepositoryDocument, task: ClaimTerms): Promise<Claim | undefined> {
    const claim = this.fresh(doc, task);
    try {
      const { changeToken } = await this.deps.writer.update(doc, this.inProgress(claim));
      return this.hold(claim, changeToken);
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
    }
    return this.readBack(claim);
  }

  /**
   * A claim written again as its call goes out, with a new token (it waited long for its slot), so
   * that a 409 (a user's edit meanwhile) reads as the renewal not written, never as a claim that
   * holds when its expiry was not moved on. An error of the run's scope is thrown.
   */
  async renew(claim: Claim): Promise<Renewal> {
    const renewed = this.fresh(claim.doc, { name: claim.task, claimTimeoutMs: timeoutOf(claim) });
    let refused: unknown;
    try {
      const { changeToken } = await this.deps.writer.update(claim.doc, this.inProgress(renewed));
      return { claim: this.hold(renewed, changeToken) };
    } catch (error) {
      if (error instanceof Connect2ErpError && error.scope === 'run') throw error;
      if (!(error instanceof ConflictError)) return { refused: error };
      refused = error;
    }
    try {
      const mine = await this.readBack(renewed);
      return mine === undefined ? { refused } : { claim: mine };
    } catch (unread) {
      return { unread };
    }
  }

  /**
   * The intake's labelling write: `properties`, and either the claim of `task` (a document ready as
   * it is labelled, sources/claim-at-label.ts) or the intake's own claim given up. `doc` carries
   * the facets it has once labelled. After a 409 the document as this write left it is labelled,
   * as if the answer had come: with a claim, one that holds it and every value; without one, one
   * that holds every value. Answers the document as labelled, or undefined when somebody else
   * changed it first; a value the repository dropped throws PropertiesDroppedError.
   */
  async label(
    doc: RepositoryDocument,
    properties: Record<string, unknown>,
    task?: ClaimTerms,
  ): Promise<RepositoryDocument | undefined> {
    const claim = task === undefined ? undefined : this.fresh(doc, task);
    const written = { ...properties, ...(claim === undefined ? UNCLAIMED : this.inProgress(claim)) };
    try {
      const { changeToken } = await this.deps.writer.update(doc, written);
      return this.labelledAs(claim, { ...doc, changeToken, properties: { ...doc.properties, ...written } });
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
    }
    const now = await this.reread(doc);
    const dropped = notStored(now, written);
    const ours = claim === undefined ? dropped.length === 0 : heldBy(now.properties, claim.token, claim.task);
    if (!ours) return undefined;
    if (dropped.length > 0) throw new PropertiesDroppedError(now, dropped);
    return this.labelledAs(claim, now);
  }

  /**
   * The intake's claim on a file before it makes the file's archive-link folder, so that two runs
   * never both make one. Answers the file claimed, or why it is left: another run's unexpired claim,
   * or a change first (CHANGED_FIRST). A run that dies holding it is taken over once it expires.
   */
  async forFolder(doc: RepositoryDocument, timeoutMs: number): Promise<RepositoryDocument | string> {
    const at = this.deps.now();
    const owner = claimedBy(doc.properties);
    const expires = claimExpires(doc.properties);
    if (typeof owner === 'string' && typeof expires === 'string' && new Date(expires) > at)
      return `being labelled by run ${runOf(owner)} (claim until ${expires})`;
    const token = this.token();
    try {
      return await this.deps.writer.update(doc, claimFor(token, at, timeoutMs));
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
    }
    const now = await this.reread(doc);
    return claimedBy(now.properties) === token ? now : CHANGED_FIRST;
  }

  /** The claim this run wrote with the document's labels for `task`, taken for a lane. */
  takeLabelled(task: string, uid: string): Claim | undefined {
    const claim = this.labelled.get(uid);
    if (claim?.task !== task) return undefined;
    this.labelled.delete(uid);
    return claim;
  }

  /** Whether the intake claimed the document as it labelled it, and no lane has taken the claim yet. */
  awaitsLane(uid: string): boolean {
    return this.labelled.has(uid);
  }

  /** The claims written with labels that no lane took; they are the caller's to give back. */
  notTaken(): Claim[] {
    const left = [...this.labelled.values()];
    this.labelled.clear();
    return left;
  }

  /**
   * An attempt's outcome, written with the claim's changeToken. False: another run took the
   * document over (the claim expired meanwhile), and it is left to that run.
   */
  async settle(claim: Claim, ending: Ending): Promise<boolean> {
    const properties =
      ending.status === 'DONE'
        ? { ...done(ending.reference, ending.message), ...ending.written }
        : attemptFailed(ending.message, ending.attempts, ending.retryAt);
    return this.write(claim, properties);
  }

  /**
   * A claim given up unsent: back to READY. But one that may be in SAP already, and that READY would
   * have the next run send blind — taken over from an interrupted run, or `repeated` (sent again,
   * for a call SAP can be asked about, after a list SAP refused or a runtime error) with no attempt
   * charged — stays taken over, its claim expired at once: the next run takes it over again and
   * looks it up before anything is sent. (READY with attempts charged is looked up by the next run
   * anyway.) False: taken over.
   */
  async release(claim: Claim, repeated: boolean): Promise<boolean> {
    const { properties } = claim.doc;
    const interrupted = statusOf(properties) === 'IN_PROGRESS' && runOf(claimedBy(properties)) !== this.deps.runId;
    const mayBeInSap = interrupted || (repeated && attemptsOf(properties) === 0);
    return this.write(claim, mayBeInSap ? { [STATUS.claimExpires]: this.deps.now().toISOString() } : released());
  }

  /**
   * Taken away for an operator: FAILED with `message`, whatever claim the document had (an
   * interrupted run's on a call SAP cannot be asked about, or the intake's on a half-labelled file),
   * with `also` written beside it.
   */
  async fail(doc: RepositoryDocument, message: string, also: Record<string, unknown> = {}): Promise<void> {
    await this.deps.writer.update(doc, { ...also, ...UNCLAIMED, ...failed(message) });
  }

  /** The claim's record is made: no longer listed as this run's. */
  letGo(claim: Claim): void {
    this.held.delete(claim.doc.uid);
  }

  /** What this run holds and has not settled: what a run cut short leaves claimed. */
  inFlight(): ClaimedDocument[] {
    return [...this.held.values()].map(({ doc, task }) => ({ uid: doc.uid, path: doc.path, task }));
  }

  private fresh(doc: RepositoryDocument, task: ClaimTerms): Claim {
    const at = this.deps.now();
    return { doc, task: task.name, token: this.token(), at, expires: new Date(at.getTime() + task.claimTimeoutMs) };
  }

  private inProgress(claim: Claim): Record<string, unknown> {
    return inProgress(claim.token, claim.task, claim.at, timeoutOf(claim));
  }

  /** After a 409 on `claim`: held when the document carries its token (the write went through, its answer lost). */
  private async readBack(claim: Claim): Promise<Claim | undefined> {
    const now = await this.reread(claim.doc);
    // The call works on the values as they were read, with the changeToken the claim left.
    return heldBy(now.properties, claim.token, claim.task) ? this.hold(claim, now.changeToken) : undefined;
  }

  private hold(claim: Claim, changeToken: string | null): Claim {
    const held = { ...claim, doc: { ...claim.doc, changeToken } };
    this.held.set(held.doc.uid, held);
    return held;
  }

  private labelledAs(claim: Claim | undefined, doc: RepositoryDocument): RepositoryDocument {
    if (claim === undefined) return doc;
    const held = this.hold({ ...claim, doc }, doc.changeToken);
    this.labelled.set(doc.uid, held);
    return doc;
  }

  /** The one read-back after a 409: the document as it is now. */
  private reread(doc: RepositoryDocument): Promise<RepositoryDocument> {
    return this.deps.client.getById(doc.uid);
  }

  /**
   * Writes with the changeToken the claim left. A 409 is read again: still this claim (a user's edit
   * came in between) is written again on top of the edit, which it leaves as it is; the outcome
   * already there (an answer lost) is done. False: taken over.
   */
  private async write(claim: Claim, properties: Record<string, unknown>, doc = claim.doc, tries = 1): Promise<boolean> {
    try {
      await this.deps.writer.update(doc, properties);
      return true;
    } catch (error) {
      if (!(error instanceof ConflictError) || tries === WRITES) throw error;
    }
    const now = await this.reread(doc);
    if (landed(now.properties, properties)) return true;
    if (!heldBy(now.properties, claim.token, claim.task)) return false;
    return this.write(claim, properties, { ...doc, changeToken: now.changeToken }, tries + 1);
  }
}

/** How long `claim` holds from when it was written: its task's claimTimeoutMs. */
const timeoutOf = (claim: Claim): number => claim.expires.getTime() - claim.at.getTime();

/** The properties a write meant to leave are there: its answer was lost, and the client's repeat met its own write. */
function landed(now: Record<string, unknown>, written: Record<string, unknown>): boolean {
  return (
    statusOf(now) === written[STATUS.status] &&
    (claimedBy(now) ?? null) === null &&
    (!(STATUS.message in written) || messageOf(now) === String(written[STATUS.message] ?? ''))
  );
}
