import type { ErpSystemConfig } from '../config/erp-schema.js';
import type { TaskConfig } from '../config/task-schema.js';
import type { Logger } from '../log.js';
import type { Ports } from '../ports/ports.js';
import type { ErpPorts, LaneDeps } from './lanes/context.js';

/**
 * One port per system and transport it has a connection for, for the transports the run's tasks
 * use: a client's module (and its HTTP stack) is loaded only then, so a run starts with less.
 */
export async function erpPorts(
  systems: ErpSystemConfig[],
  tasks: TaskConfig[],
  port: Ports['erp'],
  log: Logger,
  stop: AbortSignal,
): Promise<LaneDeps['erpFor']> {
  const byTransport: { [T in keyof ErpPorts]: Map<string, ErpPorts[T]> } = { RFC: new Map(), Rest: new Map() };
  const uses = new Set(tasks.map((task) => task.function));
  if (uses.has('RFC')) {
    const { RfcClient } = await import('../erp/rfc-client.js');
    for (const system of systems.filter((s) => s.rfc !== undefined))
      byTransport.RFC.set(system.name, port(new RfcClient({ ...system, rfc: system.rfc! }, log, stop)));
  }
  if (uses.has('Rest')) {
    const { RestClient } = await import('../erp/rest-client.js');
    for (const system of systems.filter((s) => s.rest !== undefined))
      byTransport.Rest.set(system.name, port(new RestClient({ ...system, rest: system.rest! }, log, stop)));
  }
  return <T extends keyof ErpPorts>(name: string, transport: T): ErpPorts[T] | undefined =>
    byTransport[transport].get(name);
}
