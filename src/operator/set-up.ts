import { loadConfig, selectTasks } from '../config/load.js';
import type { ConfigLocation } from '../config/location.js';
import { commandLogger } from '../log.js';
import { RepositoryClient } from '../repository/client.js';

/** Configuration, a repository client and the tasks an operator command works on (all, or --task). */
export function operatorSetUp(location: Required<ConfigLocation>, task: string | undefined) {
  const config = loadConfig(location);
  const log = commandLogger();
  return {
    tasks: selectTasks(config.tasks, task, location.jobsDir),
    client: new RepositoryClient(config.storage, log),
    log,
  };
}
