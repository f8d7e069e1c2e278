import { ConfigError, ForbiddenError } from '../../common/errors.js';
import type { StorageConfig } from '../config/storage-schema.js';
import { registerSecret } from '../log.js';

/** Where a person's administrator account is asked for in messages. */
const ADMINISTRATOR_HINT =
  'run it as a repository administrator, with NUXEO_ADMIN and NUXEO_ADMIN_PASSWORD set (docs/nuxeo-setup.md, "Who runs what")';

/**
 * For a `.catch` of an administrator command's write: the repository's 403 becomes a problem of
 * the command line (`path`) saying who may not do `what` and which account to run it as; any other
 * failure stays as it was.
 */
export const refusedTo =
  (who: string, path: string, what: string) =>
  (error: unknown): never => {
    if (!(error instanceof ForbiddenError)) throw error;
    throw new ConfigError([{ file: 'command line', path, message: `${who} may not ${what}: ${ADMINISTRATOR_HINT}` }]);
  };

/**
 * The account an administrator command signs in with (`mapping upload`, `certs approve|revoke`):
 * the person named by NUXEO_ADMIN and NUXEO_ADMIN_PASSWORD, the set-up script's own variables,
 * never the job's or the content server's account; without them, the account of storage.yaml,
 * which set up as docs/nuxeo-setup.md says may read what these commands change but not change it.
 */
export function administratorAccount(storage: StorageConfig): { storage: StorageConfig; who: string } {
  const { NUXEO_ADMIN: username, NUXEO_ADMIN_PASSWORD: password } = process.env;
  if (!username || !password) return { storage, who: 'the account of storage.yaml' };
  registerSecret(password);
  return { storage: { ...storage, auth: { type: 'basic', username, password } }, who: `NUXEO_ADMIN ${username}` };
}
