import { FOLDER_CHAIN, type RepositoryReader } from '../../repository/client.js';
import type { Logger } from '../../log.js';

/**
 * Whether the repository package's folder chain is installed, asked when a folder is first needed
 * and kept for the run. A package older than the job has no chain: its folders are made as before
 * (create, values, move: two requests more each, and their facets one call a page), and the run
 * says so once. A failed look-up is asked again by the next folder.
 */
export function folderChainProbe(client: RepositoryReader, log: Logger): () => Promise<boolean> {
  let answer: Promise<boolean> | undefined;
  const ask = async (): Promise<boolean> => {
    const installed = await client.operationInstalled(FOLDER_CHAIN);
    if (!installed)
      log.warn('the repository package has no folder chain: each archive-link folder takes two requests more', {
        chain: FOLDER_CHAIN,
        advice: 'install the repository package of this version (connect2erp doctor checks it)',
      });
    return installed;
  };
  return () =>
    (answer ??= ask().catch((error: unknown) => {
      answer = undefined;
      throw error;
    }));
}
