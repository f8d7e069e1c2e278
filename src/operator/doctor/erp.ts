import { throughProxy } from './route.js';
import { CERTIFICATE_ADVICE, CertificateRefusedError } from '../../erp/certificate-check.js';
import { signedInAs } from './sign-in.js';
import { FunctionRefusalError, SystemRefusalError, errorMessage } from '../../../common/errors.js';
import type { ErpSystemConfig } from '../../config/erp-schema.js';
import type { TaskConfig } from '../../config/task-schema.js';
import { RfcFault } from '../../erp/rfc-fault.js';
import type { RfcParams } from '../../erp/soap.js';
import { readTableRequest, readTableRows } from '../../erp/read-table.js';
import type { RfcCallConfig } from '../../config/call-schema.js';
import type { MappingEntry } from '../../job/intake/mapping-schema.js';
import { sapDate, type DateFormat } from '../../job/calls/values.js';
import { callFor } from '../../config/templates.js';
import { withoutCredentials } from '../../http-options.js';
import { Section } from './check.js';
import { checkInterfaces } from './interfaces.js';
import type { DoctorRfc } from './rfc.js';
import { literal, tasksCalling } from './system-inputs.js';

type RfcSystem = ErpSystemConfig & { rfc: NonNullable<ErpSystemConfig['rfc']> };

const GUIDE = 'docs/sap-setup.md';
/** An ARC_DOC_ID no document has: the lookup finds nothing and changes nothing. */
const NO_DOCUMENT = 'CONNECT2ERP-DOCTOR';

/**
 * The function modules with a call that reads or stores nothing: what shows that the user may call
 * them (S_RFC) without changing SAP. The others (ARCHIV_CONNECTION_INSERT,
 * ARCHIV_PROCESS_RFCINPUT, SAP_WAPI_START_WORKFLOW) have none, and are not called.
 */
const HARMLESS: Record<string, RfcParams> = {
  ARCHIV_GET_CONNECTIONS: { ARC_DOC_ID: NO_DOCUMENT, CONNECTIONS: [] },
  // An empty list: no row to store (sap-setup.md: inferred, not confirmed by SAP).
  BAPI_BARCODE_SENDLIST: { BARCODETABLE: [], RETURN: {} },
  // The read templates: reads, of a document that does not exist (RETURN type E, nothing changed).
  BAPI_INCOMINGINVOICE_GETDETAIL: { INVOICEDOCNUMBER: '0000000000', FISCALYEAR: '0000', RETURN: [] },
  BAPI_PO_GETDETAIL1: { PURCHASEORDER: '0000000000', RETURN: [] },
};

/**
 * One SAP system of erpHttp.yaml over SOAP-RFC: the service answers and is active in SICF, the
 * logon and client are accepted (RFC_PING), the function modules of the enabled tasks may be
 * called (where a harmless call exists), their interfaces against the tasks' calls
 * (interfaces.ts), the date form the system reads, and, through
 * RFC_READ_TABLE when the user may read the ArchiveLink customizing, the content repositories,
 * document types and object-type links the mapping file names.
 */
export async function checkErp(
  system: RfcSystem,
  rfc: DoctorRfc,
  tasks: TaskConfig[],
  mapping: MappingEntry[] | undefined,
): Promise<Section> {
  const section = new Section(`ERP system ${system.name} ${withoutCredentials(system.rfc.url)}`);
  if (!(await logOn(section, system, rfc))) return section;
  const sending = tasksCalling(tasks, system.name, 'RFC').map((task) => ({
    task,
    call: callFor(task).call as RfcCallConfig,
  }));
  const calls = sending.map(({ call }) => call);
  const lookups = calls.flatMap((call) => call.lookup ?? []);
  const functions = new Set([
    ...calls.map((call) => call.function),
    ...lookups.flatMap((step) => ('function' in step ? [step.function] : [])),
    ...sending.flatMap(({ task }) => (task.read === undefined ? [] : [task.read.function as string])),
  ]);
  for (const name of functions) await checkCallable(section, rfc, name);
  await checkInterfaces(section, rfc, sending);
  const tables = new Map(
    lookups.flatMap((step) => ('table' in step ? [[step.table, Object.keys(step.where)[0]]] : [])),
  );
  for (const [table, field] of tables) await checkLookupTable(section, rfc, table, field);
  await checkDates(section, rfc, system);
  if (mapping !== undefined) await checkCustomizing(section, rfc, system.name, mapping);
  else section.skip('the ArchiveLink customizing: it is checked against the mapping file, which could not be read');
  return section;
}

async function logOn(section: Section, system: RfcSystem, rfc: DoctorRfc): Promise<boolean> {
  try {
    await rfc.send({ functionName: 'RFC_PING', params: {} });
    section.pass(
      `SOAP-RFC service active, logon accepted (${signedInAs(system.rfc.auth, system)}, client ${system.client}, RFC_PING${throughProxy(system.rfc.url, system.proxy)})`,
    );
    return true;
  } catch (error) {
    if (error instanceof FunctionRefusalError)
      section.failed('RFC_PING', error, `give the user S_RFC for RFC_PING (${GUIDE})`);
    else if (error instanceof CertificateRefusedError) section.failed('logon', error, CERTIFICATE_ADVICE);
    else if (error instanceof SystemRefusalError && error.status === 403)
      section.failed('RFC_PING', error, `activate default_host/sap/bc/soap/rfc in transaction SICF (${GUIDE})`);
    else if (error instanceof SystemRefusalError && error.status !== undefined && error.status < 400)
      section.failed('RFC_PING', error, `set rfc.url to the SOAP-RFC service's own address (${GUIDE})`);
    else if (error instanceof SystemRefusalError)
      section.failed(
        'logon',
        error,
        `check rfc.auth and client "${system.client}" in erpHttp.yaml: the user must exist in that client (SU01); or tls.caFile`,
      );
    else
      section.failed('not reachable', error, 'check rfc.url in erpHttp.yaml (host, port from SMICM), and the network');
    section.skip(`the other checks of ${system.name}: they need a logon`);
    return false;
  }
}

/**
 * A table a task's lookup reads (BDS_BAR_EX for bar codes), asked for a row no document has.
 * Without S_RFC for RFC_READ_TABLE and S_TABU_NAM for the table, a document whose answer was lost
 * cannot be looked up and waits for an operator instead.
 */
async function checkLookupTable(section: Section, rfc: DoctorRfc, table: string, field: string): Promise<void> {
  try {
    await rfc.send(readTableRequest(table, [field], { [field]: NO_DOCUMENT }));
    section.pass(`${table} may be read (a lost answer is looked up there)`);
  } catch (error) {
    section.failed(
      `${table} cannot be read`,
      error,
      `give the user S_RFC for RFC_READ_TABLE and S_TABU_NAM (ACTVT 03) for ${table} (${GUIDE}, "The RFC user"): without it a document whose answer was lost waits for an operator`,
    );
  }
}

async function checkCallable(section: Section, rfc: DoctorRfc, name: string): Promise<void> {
  const params = Object.hasOwn(HARMLESS, name) ? HARMLESS[name] : undefined;
  if (params === undefined)
    return section.skip(`${name}: no call that changes nothing exists; check S_RFC for it by hand (${GUIDE})`);
  const outcome = await ran(rfc.send({ functionName: name, params }));
  if (!outcome.ran) return section.failed(name, outcome.error, callAdvice(outcome.error, name));
  section.pass(`${name} may be called${outcome.exception === undefined ? '' : ` (${outcome.exception})`}`);
}

/** A refusal of the system (S_RFC, a missing module) or of SAP's SOAP runtime (a request it could not read). */
const callAdvice = (error: unknown, name: string): string =>
  error instanceof RfcFault
    ? `SAP's SOAP runtime could not read the call: compare ${name}'s interface on this release (SE37) with docs/calls.md`
    : `give the user S_RFC for ${name} (${GUIDE}, "The RFC user")`;

const OTHER_FORM: Record<DateFormat, DateFormat> = { 'YYYY-MM-DD': 'YYYYMMDD', YYYYMMDD: 'YYYY-MM-DD' };

/**
 * The date form the SOAP runtime reads (sap-interfaces.md §6 leaves it to the customer system): a
 * lookup that finds nothing, with UNTIL_AR_DATE today in the configured form; refused, the same
 * lookup in the other form tells which to configure.
 */
async function checkDates(section: Section, rfc: DoctorRfc, system: RfcSystem): Promise<void> {
  const configured = system.rfc.dateFormat;
  const lookup = (form: DateFormat): Promise<unknown> =>
    rfc.send({
      functionName: 'ARCHIV_GET_CONNECTIONS',
      params: {
        ARC_DOC_ID: NO_DOCUMENT,
        UNTIL_AR_DATE: sapDate(new Date().toISOString(), form) as string,
        CONNECTIONS: [],
      },
    });
  const first = await ran(lookup(configured));
  if (first.ran) return section.pass(`dates accepted as ${configured} (rfc.dateFormat)`);
  const other = OTHER_FORM[configured];
  if ((await ran(lookup(other))).ran)
    return section.fail(
      `dates refused as ${configured} (${first.error.message}), accepted as ${other}`,
      `set rfc.dateFormat: ${other} for ${system.name} in erpHttp.yaml`,
    );
  section.fail(
    `the date form: a lookup refused both forms: ${first.error.message}`,
    `the date form is found with ARCHIV_GET_CONNECTIONS: give the user S_RFC for it (${GUIDE}, "Dates")`,
  );
}

/**
 * How a call went: it ran when it answered or raised an ABAP exception (NOTHING_FOUND: the module
 * ran, so the user may call it), else the error that stopped it (S_RFC, SAP's SOAP runtime).
 */
async function ran(call: Promise<unknown>): Promise<{ ran: true; exception?: string } | { ran: false; error: Error }> {
  try {
    await call;
    return { ran: true };
  } catch (error) {
    if (error instanceof RfcFault && error.fault.runtime === undefined)
      return { ran: true, exception: error.fault.exception };
    return { ran: false, error: error as Error };
  }
}

/** An object type linked to a document type, stored in a content repository (OAC3). */
interface Link {
  object: string;
  type: string;
  repository: string;
}

async function readTable(
  rfc: DoctorRfc,
  table: string,
  fields: string[],
  where: Record<string, string>,
): Promise<Array<Record<string, string>>> {
  return readTableRows(await rfc.send(readTableRequest(table, fields, where)));
}

/**
 * The ArchiveLink customizing the mapping's entries for this system rely on, read with
 * RFC_READ_TABLE: each content repository (OAC0, TOAAR), document type (OAC2, TOADV) and object
 * type with its document type (OAC3, TOAOM, active) in the repository the entry names.
 */
async function checkCustomizing(
  section: Section,
  rfc: DoctorRfc,
  system: string,
  mapping: MappingEntry[],
): Promise<void> {
  const entries = mapping.filter((entry) => literal(entry, 'erpHttpContent:source') === system);
  const repositories = new Set(
    entries.map((e) => literal(e, 'erpHttpContent:archiveId')).filter((id): id is string => id !== undefined),
  );
  const types = new Set(
    entries.flatMap((e) =>
      [literal(e, 'erpCreateALDocument:erpArchiveObject'), literal(e, 'erpStartWorkflow:erpArchiveObject')].filter(
        (t) => t !== undefined,
      ),
    ),
  );
  // Checked where the entry names all three; a `$` value is the document's, unknown here.
  const links = entries
    .map((e) => ({
      object: literal(e, 'erpCreateALDocument:erpObject'),
      type: literal(e, 'erpCreateALDocument:erpArchiveObject'),
      repository: literal(e, 'erpHttpContent:archiveId'),
    }))
    .filter((link): link is Link => Object.values(link).every((value) => value !== undefined));
  try {
    for (const id of repositories) {
      const found = await readTable(rfc, 'TOAAR', ['ARCHIV_ID'], { ARCHIV_ID: id });
      if (found.length > 0) section.pass(`content repository ${id} defined (OAC0)`);
      else
        section.fail(
          `content repository ${id} not defined`,
          `create it in OAC0 as an HTTP content server (${GUIDE}), or fix erpHttpContent:archiveId`,
        );
    }
    for (const type of types) {
      const found = await readTable(rfc, 'TOADV', ['AR_OBJECT', 'DOC_TYPE'], { AR_OBJECT: type });
      if (found.length > 0) section.pass(`document type ${type} defined (OAC2, class ${found[0].DOC_TYPE})`);
      else section.fail(`document type ${type} not defined`, `create it in OAC2 (${GUIDE}), or fix the mapping file`);
    }
    for (const link of links) await checkLink(section, rfc, link);
  } catch (error) {
    // Not allowed to read is "not checked"; anything else is a failure with its cause.
    if (
      error instanceof FunctionRefusalError ||
      (error instanceof RfcFault && error.fault.exception === 'NOT_AUTHORIZED')
    )
      return section.skip(
        `the ArchiveLink customizing: RFC_READ_TABLE refused (${errorMessage(error)})`,
        `optional: S_RFC for RFC_READ_TABLE and S_TABU_NAM for TOAAR, TOADV, TOAOM let doctor check it (${GUIDE})`,
      );
    section.failed(
      'the ArchiveLink customizing',
      error,
      `RFC_READ_TABLE refused the query, not the customizing: look at OAC0, OAC2 and OAC3 by hand (${GUIDE})`,
    );
  }
}

async function checkLink(section: Section, rfc: DoctorRfc, link: Link): Promise<void> {
  const found = await readTable(rfc, 'TOAOM', ['SAP_OBJECT', 'AR_OBJECT', 'ARCHIV_ID'], {
    SAP_OBJECT: link.object,
    AR_OBJECT: link.type,
    AR_STATUS: 'X',
  });
  const what = `link ${link.object} – ${link.type}`;
  if (found.length === 0)
    return section.fail(
      `${what} not maintained (OAC3)`,
      `add it in OAC3 with content repository ${link.repository} (${GUIDE})`,
    );
  const repositories = found.map((row) => row.ARCHIV_ID);
  if (!repositories.includes(link.repository))
    return section.fail(
      `${what} stores in ${repositories.join(', ')}, not ${link.repository}`,
      `make OAC3 and erpHttpContent:archiveId name the same content repository`,
    );
  section.pass(`${what} maintained (OAC3, content repository ${repositories.join(', ')})`);
}
