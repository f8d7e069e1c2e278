import { setMaxListeners } from 'node:events';
import { featureRegistry } from '../../../common/nuxeo/schemas.js';
import { systemClock } from '../../clock.js';
import type { Logger } from '../../log.js';
import { portsFor } from '../../ports/ports.js';
import { RepositoryClient } from '../../repository/client.js';
import { Claims } from '../claims/claims.js';
import { erpPorts } from '../erp-ports.js';
import type { MappingFile } from '../intake/mapping-schema.js';
import { usableMapping } from '../intake/usable-mapping.js';
import type { LaneDeps } from '../lanes/context.js';
import type { SendBudget } from '../lanes/send-budget.js';
import type { RunReport } from '../report/report.js';
import type { RunOptions } from '../run-options.js';
import { scopeCondition } from '../scope.js';
import type { Prepared } from './prepare.js';

/** What listens on a run's stop besides its SAP systems: the run, the grace period, the sources' waits. */
const RUN_LISTENERS = 10;

/** The run's ports and claims, and the mapping file when it can be used. */
interface Connected {
  deps: LaneDeps;
  mapping: MappingFile | undefined;
}

/**
 * The second stage: the repository's client and the ports every write goes through (the dry run's
 * switch), the mapping file read from the repository (a mapping file that cannot be used skips the
 * intake, the tasks run on), the ERP ports and the run's claims. Undefined when the run was told to
 * stop meanwhile: nothing more is read or written.
 */
export async function connect(
  { config, tasks }: Prepared,
  options: RunOptions,
  report: RunReport,
  log: Logger,
  stop: AbortSignal,
  budget: SendBudget,
): Promise<Connected | undefined> {
  if (stop.aborted) return undefined;
  const registry = featureRegistry();
  const client = new RepositoryClient(config.storage, log, registry);
  const { writer, ...ports } = portsFor(options.dryRun, client);
  report.plannedCalls = ports.plannedCalls;
  const loaded = await usableMapping(client, config, registry, report, log);
  if (stop.aborted) return undefined;
  const systems = new Map(config.erp.systems.map((system) => [system.name, system]));
  // Each system's RFC and Rest clients and its call slots listen on the stop: more than Node's default of 10 warns about.
  setMaxListeners(RUN_LISTENERS + 3 * systems.size, stop);
  const now = options.now ?? systemClock;
  const deps: LaneDeps = {
    client,
    writer,
    erpFor: await erpPorts(config.erp.systems, tasks, ports.erp, log, stop),
    // A document naming an unknown system is never admitted (it waits for input), so every lookup finds one.
    system: (name: string) => systems.get(name)!,
    systemNames: [...systems.keys()],
    log,
    stop,
    claims: new Claims({ client, writer, runId: report.runId, now }),
    scope: scopeCondition(options.shard, options.doc),
    budget,
    now,
  };
  return { deps, mapping: loaded?.mapping };
}
