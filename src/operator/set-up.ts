import { loadConfig, selectTasks } from '../config/load.js';
import type { ConfigLocation } from '../config/location.js';
import { commandLogger } from '../log.js';
import { RepositoryClient } from '../repository/client.js';

/**
 * Configuration, a repository client and the tasks an operator command works on (all, or --task).
 * `level`: the least a line needs to be logged, unless CONNECT2ERP_LOG_LEVEL says otherwise.
 */
export function operatorSetUp(location: Required<ConfigLocation>, task: string | undefined, level = 'info') {
  const config = loadConfig(location);
  const log = commandLogger(process.env.CONNECT2ERP_LOG_LEVEL ?? level);
  return {
    tasks: selectTasks(config.tasks, task, location.jobsDir),
    client: new RepositoryClient(config.storage, log),
    log,
  };
}
