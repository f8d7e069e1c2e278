import { featureRegistry } from '../../common/nuxeo/schemas.js';
import type { CallProblem, ReadConfig } from './call-schema.js';

/** The connector's own properties: a read never writes them. */
const OWN_PREFIXES = ['erpHttpContent', 'erpCreateALDocument', 'erpBarcode', 'erpStartWorkflow', 'erpTaskStatus'];

/**
 * A read writes SAP's values onto properties that take a single value: a property of a schema the
 * package or Nuxeo declares is checked here; one of the administrator's own is checked by the
 * repository when it is written.
 */
export function readTargetProblems(read: ReadConfig): CallProblem[] {
  const registry = featureRegistry();
  return Object.keys(read.properties).flatMap((property): CallProblem[] => {
    const path = ['properties', property];
    const prefix = property.slice(0, property.indexOf(':'));
    if (OWN_PREFIXES.includes(prefix))
      return [{ path, message: "the connector's own property: SAP's data goes to erpData or a schema of yours" }];
    if (!registry.byPrefix.has(prefix)) return [];
    const known = registry.property(property);
    if (known === undefined) return [{ path, message: `schema ${prefix} has no such field` }];
    if (known.field.list || known.field.type === 'complex' || known.field.type === 'blob')
      return [{ path, message: 'takes a list, a structure or a file: a read writes a single value' }];
    return [];
  });
}
