import type { TaskConfig } from '../../config/task-schema.js';
import type { ErpSystemConfig } from '../../config/erp-schema.js';
import { featureRegistry, type ScalarType, type SchemaRegistry } from '../../../common/nuxeo/schemas.js';
import { errorMessage } from '../../../common/errors.js';
import type { RestRequest } from '../../erp/rest-client.js';
import type { RfcRequest } from '../../erp/rfc-client.js';
import type { ErpPort } from '../../ports/erp-port.js';
import type { RepositoryDocument } from '../../repository/document.js';
import { STATUS } from '../../status/facet.js';
import { openUrl } from './open-url.js';
import { readBack, type ReadBack } from './read-back.js';
import type { CallOutcome } from './execute.js';
import type { DateFormat } from './values.js';

/** What a linked document gets written with its DONE: "Open in SAP", SAP's data, and what could not be had. */
export type AfterLink = (doc: RepositoryDocument) => Promise<ReadBack>;

/** The repository's property types as the package declares them: the read's values are checked against them. */
let registry: SchemaRegistry | undefined;
function typeOf(property: string): ScalarType | undefined {
  registry ??= featureRegistry();
  // `validate` refused a read into a structure (read-targets.ts).
  return registry.property(property)?.field.type as ScalarType | undefined;
}

/**
 * For a task's documents linked in `system`: the address that opens the business object (the
 * system's `openInSap`), and SAP's data read with the task's `read`. Undefined when there is
 * neither. What fails is told, never undoes the link.
 */
export function afterLink(
  task: TaskConfig,
  system: ErpSystemConfig,
  erp: { RFC?: ErpPort<RfcRequest>; Rest?: ErpPort<RestRequest> },
  now: () => Date,
): AfterLink | undefined {
  const { read } = task;
  if (read === undefined && system.openInSap === undefined) return undefined;
  const dateFormat: DateFormat = task.function === 'RFC' ? (system.rfc?.dateFormat ?? 'YYYY-MM-DD') : 'YYYY-MM-DD';
  return async (doc) => {
    const properties: Record<string, unknown> = {};
    const problems: string[] = [];
    try {
      const url = openUrl(system, doc);
      if (url !== undefined) properties[STATUS.sapUrl] = url;
    } catch (error) {
      problems.push(`no "Open in SAP" address: ${errorMessage(error)}`);
    }
    if (read === undefined) return { properties, problems };
    const port =
      task.function === 'RFC'
        ? { transport: 'RFC' as const, erp: erp.RFC as ErpPort<RfcRequest> }
        : { transport: 'Rest' as const, erp: erp.Rest as ErpPort<RestRequest> };
    // A document linked over a connection its system no longer has (`sap-data` after a change).
    if (port.erp === undefined)
      return {
        properties,
        problems: [...problems, `SAP's data not read: ${system.name} has no ${task.function} connection`],
      };
    const data = await readBack(read, port, doc, { typeOf, dateFormat, now: now() });
    return { properties: { ...properties, ...data.properties }, problems: [...problems, ...data.problems] };
  };
}

/**
 * Linked documents get "Open in SAP" and SAP's data, read one after another while the slot is
 * held (a read is a call to the system too), and written with their DONE; what could not be had
 * joins the message.
 */
export async function afterLinked(
  after: AfterLink | undefined,
  docs: RepositoryDocument[],
  outcomes: CallOutcome[],
): Promise<CallOutcome[]> {
  if (after === undefined) return outcomes;
  const linked: CallOutcome[] = [];
  for (const [i, outcome] of outcomes.entries()) {
    if (!('reference' in outcome) || outcome.planned !== undefined) {
      linked.push(outcome);
      continue;
    }
    const { properties, problems } = await after(docs[i]);
    const message = [outcome.message, ...problems].filter((m) => m !== undefined && m !== '').join('; ');
    linked.push({ ...outcome, written: properties, message: message === '' ? undefined : message });
  }
  return linked;
}
