import { setMaxListeners } from 'node:events';
import { featureRegistry } from '../../../common/nuxeo/schemas.js';
import type { Logger } from '../../log.js';
import { portsFor, type Ports } from '../../ports/ports.js';
import { RepositoryClient } from '../../repository/client.js';
import { Claims } from '../claims/claims.js';
import { erpPorts } from '../erp-ports.js';
import { usableMapping, type MappingRead } from '../intake/usable-mapping.js';
import type { LaneDeps } from '../lanes/context.js';
import type { SendBudget } from '../lanes/send-budget.js';
import type { RunObserver } from '../run-observer.js';
import type { RunOptions } from '../run-options.js';
import type { RunSignals } from '../run-signals.js';
import { scopeCondition } from '../scope.js';
import type { Prepared } from './prepare.js';

/** What listens on a run's stop besides its SAP systems: the run, the grace period, the sources' waits. */
const RUN_LISTENERS = 10;

/** The repository's side of a run: its client, the ports every write goes through, the mapping file as read. */
export interface Repository {
  client: RepositoryClient;
  ports: Ports;
  mapping: MappingRead;
}

/**
 * The second stage: the repository's client and the ports every write goes through (the dry run's
 * switch), and the mapping file read from the repository (a mapping file that cannot be used skips
 * the intake, the tasks run on).
 */
export async function connectRepository({ config }: Prepared, dryRun: boolean, log: Logger): Promise<Repository> {
  const registry = featureRegistry();
  const client = new RepositoryClient(config.storage, log, registry);
  const ports = portsFor(dryRun, client);
  return { client, ports, mapping: await usableMapping(client, config, registry, log) };
}

/** What the lanes of a run share, made once the repository is reached: the ERP ports, the run's claims, its clock. */
export async function connectErp(
  { config, tasks }: Prepared,
  { client, ports }: Repository,
  run: {
    options: RunOptions;
    runId: string;
    log: Logger;
    signals: RunSignals;
    budget: SendBudget;
    observer: RunObserver;
  },
): Promise<LaneDeps> {
  const { options, log, observer } = run;
  const { stop } = run.signals;
  const systems = new Map(config.erp.systems.map((system) => [system.name, system]));
  // Each system's RFC and Rest clients and its call slots listen on the stop: more than Node's default of 10 warns about.
  setMaxListeners(RUN_LISTENERS + 3 * systems.size, stop);
  const { writer } = ports;
  return {
    client,
    writer,
    erpFor: await erpPorts(config.erp.systems, tasks, ports.erp, log, stop),
    // A document naming an unknown system is never admitted (it waits for input), so every lookup finds one.
    system: (name: string) => systems.get(name)!,
    systemNames: [...systems.keys()],
    log,
    stop,
    claims: new Claims({ client, writer, runId: run.runId, now: observer.now }),
    scope: scopeCondition(options.shard, options.doc),
    budget: run.budget,
    now: observer.now,
  };
}
