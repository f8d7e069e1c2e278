import { FOLDER_CHAIN, type RepositoryReader } from '../../repository/client.js';
import type { Logger } from '../../log.js';

/** Whether a new archive-link folder is made in one request, the package's chain, for this run. */
export interface FolderChain {
  /** Whether the chain is installed: asked when a folder is first needed, kept for the run. */
  installed: () => Promise<boolean>;
  /** The repository refused a call of the chain (a REST binding): the rest of the run goes the longer way. */
  refused: () => void;
}

const LONGER_WAY = 'each archive-link folder takes two requests more';

/**
 * A package older than the job has no chain, and a REST binding may refuse it to the job's user
 * (Nuxeo answers its description but not a call): either way the folders are made as before
 * (create, values, move: two requests more each, and their facets one call a page), and the run
 * says so once. A failed look-up is asked again by the next folder.
 */
export function folderChainProbe(client: RepositoryReader, log: Logger): FolderChain {
  let answer: Promise<boolean> | undefined;
  let warned = false;
  const warn = (message: string, advice: string): void => {
    if (!warned) log.warn(message, { chain: FOLDER_CHAIN, advice });
    warned = true;
  };
  const ask = async (): Promise<boolean> => {
    const installed = await client.operationInstalled(FOLDER_CHAIN);
    if (!installed)
      warn(
        `the repository package has no folder chain: ${LONGER_WAY}`,
        'install the repository package of this version (connect2erp doctor checks it)',
      );
    return installed;
  };
  return {
    installed: () =>
      (answer ??= ask().catch((error: unknown) => {
        answer = undefined;
        throw error;
      })),
    refused: () => {
      answer = Promise.resolve(false);
      warn(
        `the repository refuses the folder chain to this user: ${LONGER_WAY}`,
        "a REST binding of Automation (an automation-server 'binding' contribution) refuses it: allow the chain to the job's user, or leave it so",
      );
    },
  };
}
