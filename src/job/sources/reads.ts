import type { RestCallConfig, RfcCallConfig } from '../../config/call-schema.js';
import type { TaskConfig } from '../../config/task-schema.js';
import { STATUS } from '../../status/facet.js';
import { READINESS_KEYS } from '../../status/readiness.js';

/**
 * The properties a task reads from the documents its search finds: readiness, the values of its
 * call, the source system and the status; its search asks back only their schemas.
 */
export function taskReads(task: TaskConfig, call: RfcCallConfig | RestCallConfig): string[] {
  // A call's values come from its parameters only (mapValues); lookups and paths are filled from those.
  const values = Object.values(call.parameters).flatMap((spec) => (spec.property === undefined ? [] : [spec.property]));
  return [...READINESS_KEYS[task.useCase], ...values, 'erpHttpContent:source', STATUS.claimedBy];
}
