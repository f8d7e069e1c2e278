import type { TaskConfig } from '../../config/task-schema.js';
import type { MappingEntry } from '../../job/intake/mapping-schema.js';

/**
 * What a doctor section for one SAP system reads of the configuration: the tasks that call it over
 * a transport, and the mapping's literal values (its entries name content repositories and types).
 */

/** The enabled tasks that call `system` over `transport`; one limited to other systems (`systems`) calls nothing here. */
export const tasksCalling = (tasks: TaskConfig[], system: string, transport: TaskConfig['function']): TaskConfig[] =>
  tasks.filter((task) => task.enabled && task.function === transport && (task.systems ?? [system]).includes(system));

/** A literal value of a mapping entry, or undefined for a `$` reference or an absent one. */
export const literal = (entry: MappingEntry, key: string): string | undefined => {
  const value = entry.properties[key];
  return typeof value === 'string' && /^[^$]/.test(value) ? value : undefined;
};
