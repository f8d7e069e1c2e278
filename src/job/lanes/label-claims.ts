import type { RepositoryDocument } from '../../repository/document.js';

/** A claim written together with a document's labels: its token, and when. */
export interface LabelClaim {
  token: string;
  at: Date;
}

interface Held {
  task: string;
  doc: RepositoryDocument;
  claim: LabelClaim;
}

/**
 * The claims the intake wrote in the same write as a document's labels (sources/claim-at-label.ts),
 * from that write until a lane of their task takes them (lanes/admit.ts), whichever source hands the
 * document over. What no lane took (the run stopped reading before the intake's page was handed
 * over) is given back when the run ends, so a stop leaves none of them claimed. At most the
 * documents the intake labels ahead of the sending are held (storage.yaml `intakeRoundSize`).
 */
export class LabelClaims {
  private readonly held = new Map<string, Held>();

  /** The document, as labelled, now carries `claim` for `task`. */
  hold(task: string, doc: RepositoryDocument, claim: LabelClaim): void {
    this.held.set(doc.uid, { task, doc, claim });
  }

  /** Whether the intake claimed the document as it labelled it, and no lane has taken the claim yet. */
  has(uid: string): boolean {
    return this.held.has(uid);
  }

  /**
   * The claim this run wrote on the document for `task`, taken out of the registry. Should anyone
   * have changed the document since, its outcome's write meets a 409 and the claim is found gone
   * (lanes/settle.ts): nothing is sent on a claim that is not there.
   */
  take(task: string, doc: RepositoryDocument): LabelClaim | undefined {
    const held = this.held.get(doc.uid);
    if (held?.task !== task) return undefined;
    this.held.delete(doc.uid);
    return held.claim;
  }

  /** The claims no lane took, as their documents were labelled; the registry is emptied. */
  left(): Held[] {
    const left = [...this.held.values()];
    this.held.clear();
    return left;
  }
}
