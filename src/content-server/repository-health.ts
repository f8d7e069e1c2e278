import { errorMessage } from '../../common/errors.js';
import type { RepositoryClient } from '../repository/client.js';

/** What serverInfo reports of a connection's repository: reachable and taking the server's credentials, or why not. */
type RepositoryState = { running: true } | { running: false; reason: string };

/** How long one check stands: serverInfo is unsigned, and nobody makes the repository work for each call of it. */
export const FRESH_MS = 5_000;

/**
 * The repository as the content server's own account sees it (`GET /api/v1/me` with
 * repositoryAuth): OAC0's connection test then fails where SAP's first get would, rather than
 * passing on a server that cannot read a document. After the first check, an answer never waits:
 * it gives the last state known, and a check older than FRESH_MS starts the next one.
 */
export class RepositoryHealth {
  private known?: RepositoryState;
  private checkedAt = Number.NEGATIVE_INFINITY;
  private checking?: Promise<RepositoryState>;

  constructor(
    private readonly client: Pick<RepositoryClient, 'me'>,
    private readonly now: () => number = Date.now,
  ) {}

  state(): Promise<RepositoryState> {
    if (this.now() - this.checkedAt >= FRESH_MS) this.checking ??= this.check();
    return this.known === undefined ? (this.checking as Promise<RepositoryState>) : Promise.resolve(this.known);
  }

  private async check(): Promise<RepositoryState> {
    const state = await this.client.me().then(
      (): RepositoryState => ({ running: true }),
      (error: unknown): RepositoryState => ({ running: false, reason: `the repository: ${errorMessage(error)}` }),
    );
    this.known = state;
    this.checkedAt = this.now();
    this.checking = undefined;
    return state;
  }
}
