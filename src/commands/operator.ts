import { loadConfig, selectTasks } from '../config/load.js';
import type { ConfigLocation } from '../config/location.js';
import { commandLogger } from '../log.js';
import { retryFailed } from '../operator/retry.js';
import { renderStatus, taskStatus } from '../operator/status.js';
import { RepositoryClient } from '../repository/client.js';
import { portsFor } from '../ports/ports.js';
import { EXIT } from '../job/report/report.js';

/** Configuration, a repository client and the tasks an operator command works on (all, or --task). */
function setUp(location: Required<ConfigLocation>, task: string | undefined) {
  const config = loadConfig(location);
  const log = commandLogger();
  return {
    tasks: selectTasks(config.tasks, task, location.jobsDir),
    client: new RepositoryClient(config.storage, log),
    log,
  };
}

/** `connect2erp status`: documents per status per task, and the failures with their messages. */
export async function statusCommand(location: Required<ConfigLocation>, task: string | undefined): Promise<number> {
  const { client, tasks } = setUp(location, task);
  process.stdout.write(`${renderStatus(await taskStatus(tasks, client))}\n`);
  return EXIT.ok;
}

/** `connect2erp retry`: FAILED documents back to READY for the next run; with --dry-run, only the list. */
export async function retryCommand(
  location: Required<ConfigLocation>,
  options: { task?: string; uid?: string; dryRun: boolean },
): Promise<number> {
  const { client, tasks, log } = setUp(location, options.task);
  const reset = await retryFailed({ tasks, uid: options.uid }, client, portsFor(options.dryRun, client).writer, log);
  const verb = options.dryRun ? 'would be put' : 'put';
  process.stdout.write(
    `${reset.length} document(s) ${verb} back to READY${reset.map((d) => `\n  ${d.path} (${d.uid})`).join('')}\n`,
  );
  return EXIT.ok;
}
