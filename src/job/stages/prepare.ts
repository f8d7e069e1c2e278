import { loadConfig, selectTasks, type Config } from '../../config/load.js';
import { podsOf } from '../../config/pods.js';
import type { TaskConfig } from '../../config/task-schema.js';
import { withoutCredentials } from '../../http-options.js';
import type { Logger } from '../../log.js';
import type { RunReport } from '../report/report.js';
import type { RunOptions } from '../run-options.js';

/** The configuration a run works with, the tasks it runs, and what the report says of the systems it reaches. */
export interface Prepared {
  config: Config;
  tasks: TaskConfig[];
  about: Pick<RunReport, 'repositoryUrl' | 'webUiUrl' | 'erpSystems'>;
}

/**
 * The first stage: the configuration loaded and validated (a ConfigError stops the run), its
 * advice logged, and what the run is about: the tasks it runs, the repository and the SAP systems.
 */
export function prepare(options: RunOptions, log: Logger): Prepared {
  const config = loadConfig(options.location, { pods: podsOf(undefined) });
  const tasks = selectTasks(config.tasks, options.task, options.location.jobsDir).filter((t) => t.enabled);
  for (const { file, path, message, task } of config.advice) {
    // Each CronJob tells what concerns its own task, not its neighbours', and what concerns all.
    if (task === undefined || tasks.some((t) => t.name === task))
      log.warn('configuration advice', { file, key: path, advice: message });
  }
  const repositoryUrl = withoutCredentials(config.storage.url);
  const erpSystems = config.erp.systems
    .filter((system) => tasks.some((task) => (task.systems ?? [system.name]).includes(system.name)))
    .map((system) => {
      const url = system.rfc?.url ?? system.rest?.url;
      return `${system.name} (client ${system.client}, ${withoutCredentials(String(url))})`;
    });
  return {
    config,
    tasks,
    about: { repositoryUrl, webUiUrl: config.storage.webUiUrl ?? `${repositoryUrl}/ui`, erpSystems },
  };
}
