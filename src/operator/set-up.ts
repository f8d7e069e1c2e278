import { loadConfig, selectTasks } from '../config/load.js';
import type { ConfigLocation } from '../config/location.js';
import { erpPorts } from '../job/erp-ports.js';
import { commandLogger } from '../log.js';
import { portsFor } from '../ports/ports.js';
import { RepositoryClient } from '../repository/client.js';
import { NEVER } from '../stop.js';

/**
 * Configuration, a repository client and the tasks an operator command works on (all, or --task).
 * `level`: the least a line needs to be logged, unless CONNECT2ERP_LOG_LEVEL says otherwise.
 */
export function operatorSetUp(location: Required<ConfigLocation>, task: string | undefined, level = 'info') {
  const config = loadConfig(location);
  const log = commandLogger(process.env.CONNECT2ERP_LOG_LEVEL ?? level);
  return {
    config,
    tasks: selectTasks(config.tasks, task, location.jobsDir),
    client: new RepositoryClient(config.storage, log),
    log,
  };
}

/**
 * What an operator command that reads SAP too works with (`reconcile`, `sap-data`): the enabled
 * tasks, the repository and its writer (which writes nothing with `dryRun`), each system's port for
 * the tasks' transports (reads go out in a dry run too), and the systems by name.
 */
export async function erpOperatorSetUp(location: Required<ConfigLocation>, task: string | undefined, dryRun: boolean) {
  const { config, tasks, client, log } = operatorSetUp(location, task, 'warn');
  const enabled = tasks.filter((t) => t.enabled);
  const ports = portsFor(dryRun, client);
  return {
    tasks: enabled,
    deps: {
      client,
      writer: ports.writer,
      erpFor: await erpPorts(config.erp.systems, enabled, ports.erp, log, NEVER),
      systems: new Map(config.erp.systems.map((system) => [system.name, system])),
      log,
    },
  };
}
