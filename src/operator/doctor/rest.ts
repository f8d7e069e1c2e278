import { checkDocumentLinks } from './document-links.js';
import { throughProxy } from './route.js';
import { CERTIFICATE_ADVICE, CertificateRefusedError } from '../../erp/certificate-check.js';
import { signedInAs } from './sign-in.js';
import { errorMessage, SystemRefusalError, type Connect2ErpError } from '../../../common/errors.js';
import type { RestCallConfig } from '../../config/call-schema.js';
import type { ErpSystemConfig } from '../../config/erp-schema.js';
import type { TaskConfig } from '../../config/task-schema.js';
import { callFor } from '../../config/templates.js';
import type { RestRequest } from '../../erp/rest-client.js';
import { withoutCredentials } from '../../http-options.js';
import { fill, type MappedValue } from '../../job/calls/values.js';
import type { MappingEntry } from '../../job/intake/mapping-schema.js';
import { Section } from './check.js';
import { literal, tasksCalling } from './system-inputs.js';

/** What the Rest checks send: a read, and the CSRF handshake a write would make. */
interface DoctorRest {
  send(request: RestRequest): Promise<Record<string, unknown>>;
  csrfToken(service: string): Promise<string>;
}

type RestSystem = ErpSystemConfig & { rest: NonNullable<ErpSystemConfig['rest']> };

const GUIDE = 'docs/sap-setup.md';
const CSRF_ADVICE =
  "writes to an SAP Gateway service need the token it issues to HEAD with X-CSRF-Token: Fetch; for a service that has no CSRF protection, set csrf: false in the task's rest: call";

/** A key no business object has: the lookup finds nothing and changes nothing. */
const NO_DOCUMENT = 'CONNECT2ERP-DOCTOR';

/** What to do about a refused or failed request to an OData service, by its HTTP status. */
function advice(error: unknown, system: RestSystem): string {
  const status = (error as Connect2ErpError).status;
  if (error instanceof CertificateRefusedError) return CERTIFICATE_ADVICE;
  if (status === 401) return `check rest.auth of ${system.name} in erpHttp.yaml: SAP refused the credentials`;
  if (status === 403)
    return `the user may not use the service: on S/4HANA Cloud, the communication arrangement (SAP_COM_0002 for the attachment service); on-premise, a role with S_SERVICE for it (${GUIDE})`;
  if (status === 404)
    return `the service is not there: activate it in /IWFND/MAINT_SERVICE (on-premise), or add it to the communication arrangement (S/4HANA Cloud) (${GUIDE})`;
  if (error instanceof SystemRefusalError) return `check rest.url and rest.auth of ${system.name} in erpHttp.yaml`;
  return `check rest.url of ${system.name} in erpHttp.yaml (host and port), and the network`;
}

/**
 * The lookup's read, filled so that it finds nothing: each placeholder takes the mapping's literal
 * value for its parameter (the object type, say) where there is one, else a key no object has.
 */
function harmlessPath(call: RestCallConfig, entries: MappingEntry[]): string {
  const values: MappedValue[] = Object.entries(call.parameters).map(([target, spec]) => ({
    target,
    // A constant parameter (no property) finds no literal.
    value: target.endsWith('Key')
      ? NO_DOCUMENT
      : (entries.map((entry) => literal(entry, String(spec.property))).find((v) => v !== undefined) ?? NO_DOCUMENT),
    fromDocument: true,
  }));
  return fill((call.lookup as NonNullable<RestCallConfig['lookup']>).path, values);
}

/**
 * One SAP system's Rest connection, for the enabled tasks that call it: each OData service's
 * document answers (the service is active and the user may use it), a CSRF token is issued as a
 * write would fetch it, and the call's lookup reads with a key no object has — each read-only.
 */
export async function checkRest(
  system: RestSystem,
  rest: DoctorRest,
  tasks: TaskConfig[],
  mapping: MappingEntry[] | undefined,
): Promise<Section> {
  const section = new Section(`ERP system ${system.name} ${withoutCredentials(system.rest.url)} (Rest)`);
  const entries = (mapping ?? []).filter((entry) => literal(entry, 'erpHttpContent:source') === system.name);
  const calls = tasksCalling(tasks, system.name, 'Rest').map((task) => callFor(task).call as RestCallConfig);
  for (const service of new Set(calls.map((call) => call.service))) {
    const ofService = calls.filter((call) => call.service === service);
    try {
      await rest.send({ method: 'GET', service, path: '/', headers: {}, csrf: false });
      section.pass(
        `${service} answers (its service document), as ${signedInAs(system.rest.auth, system)}${throughProxy(system.rest.url, system.proxy)}`,
      );
    } catch (error) {
      section.failed(`${service}: its service document`, error, advice(error, system));
      section.skip(`the other checks of ${service}: they need the service`);
      continue;
    }
    if (ofService.some((call) => call.csrf))
      await section.attempt(`${service}: the CSRF token a write fetches`, CSRF_ADVICE, async () => {
        await rest.csrfToken(service);
        section.pass(`${service} issues a CSRF token (X-CSRF-Token: Fetch), as a write needs`);
      });
    for (const call of ofService.filter((c) => c.lookup !== undefined)) {
      const path = harmlessPath(call, entries);
      try {
        await rest.send({ method: 'GET', service, path, headers: {}, csrf: false });
        section.pass(`${service}${path} may be read (a lost answer is looked up there)`);
      } catch (error) {
        section.fail(`${service}${path}: ${errorMessage(error)}`, advice(error, system));
      }
    }
  }
  if (system.documentLinks?.via === 'serve') await checkDocumentLinks(section, system.name, system.documentLinks);
  return section;
}
