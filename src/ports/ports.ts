import type { RepositoryClient } from '../repository/client.js';
import { dryRunErp, liveErp, type ErpConnection, type ErpPort, type PlannedCall } from './erp-port.js';
import { dryRunWriter, liveWriter, type RepositoryWriter } from './repository-writer.js';

/**
 * Every write the job and the operator commands make, to the repository and to SAP. A dry run is
 * this one switch: its writer writes nothing and its ERP ports record the calls they would make;
 * reads go out either way.
 */
export interface Ports {
  readonly writer: RepositoryWriter;
  /** The port a connection's calls go through. */
  erp<R>(connection: ErpConnection<R>): ErpPort<R>;
  /** The SAP writes a dry run would have made, in order; empty in a live run. */
  readonly plannedCalls: PlannedCall[];
}

export function portsFor(dryRun: boolean, client: RepositoryClient): Ports {
  const plannedCalls: PlannedCall[] = [];
  return {
    writer: dryRun ? dryRunWriter() : liveWriter(client),
    erp: (connection) => (dryRun ? dryRunErp(connection, plannedCalls) : liveErp(connection)),
    plannedCalls,
  };
}
