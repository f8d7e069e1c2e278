import type { RestCallConfig, RfcCallConfig } from '../../config/call-schema.js';
import type { ErpSystemConfig } from '../../config/erp-schema.js';
import type { TaskConfig } from '../../config/task-schema.js';
import { openUrlReads } from '../calls/open-url.js';
import { STATUS } from '../../status/facet.js';
import { READINESS_KEYS } from '../../status/readiness.js';

/**
 * The properties a task reads from the documents its search finds: readiness, the values of its
 * call, of its read and of its systems' "Open in SAP", the source system and the status; its
 * search asks back only their schemas.
 */
export function taskReads(
  task: TaskConfig,
  call: RfcCallConfig | RestCallConfig,
  systems: readonly ErpSystemConfig[],
): string[] {
  // A call's values come from its parameters only (mapValues); lookups and paths are filled from those.
  const values = [call.parameters, task.read?.parameters ?? {}].flatMap((parameters) =>
    Object.values(parameters).flatMap((spec) => (spec.property === undefined ? [] : [spec.property])),
  );
  const opened = openUrlReads(ownSystems(task, systems));
  return [...READINESS_KEYS[task.useCase], ...values, ...opened, 'erpHttpContent:source', STATUS.claimedBy];
}

/** The systems a task may send to: its `systems`, or all. */
export const ownSystems = (task: TaskConfig, systems: readonly ErpSystemConfig[]): ErpSystemConfig[] =>
  systems.filter((system) => task.systems?.includes(system.name) ?? true);
