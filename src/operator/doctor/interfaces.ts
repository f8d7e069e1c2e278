import { FunctionRefusalError, errorMessage } from '../../../common/errors.js';
import { TARGET, type ReadConfig, type RfcCallConfig, type ValueSpec } from '../../config/call-schema.js';
import type { TaskConfig } from '../../config/task-schema.js';
import { RfcFault } from '../../erp/rfc-fault.js';
import { tableRows } from '../../erp/soap.js';
import type { Section } from './check.js';
import type { DoctorRfc } from './rfc.js';

/**
 * What no document can tell about SAP, read from the customer's own system before anything is
 * sent: the interface of every function module an enabled task calls (RFC_GET_FUNCTION_INTERFACE)
 * and the fields of each structure and table it fills or reads (DDIF_FIELDINFO_GET), both
 * read-only, compared with the task's call: each target a parameter or field SAP has, of the kind
 * the target says, no value allowed longer than SAP's field, no mandatory import left out. For a
 * structure the task fills, SAP's own fields are listed (the workflow's OARFCIN, whose field list
 * no public source gives: where an agent or a bar code would go).
 */

const GUIDE = 'docs/sap-setup.md';
const ADVICE_AUTH = `give the user S_RFC for RFC_GET_FUNCTION_INTERFACE (function group RFC1) and DDIF_FIELDINFO_GET (SDIFRUNTIME) so that doctor can compare (${GUIDE}, "The RFC user")`;

/** The interface reader, and the structure of its rows: read first, to tell a refusal from a module not found. */
const SELF = 'RFC_GET_FUNCTION_INTERFACE';
const SELF_ROWS = 'RFC_FUNINT';

/** One parameter as SAP declares it. */
interface Parameter {
  /** I import, E export, C changing, T table, X exception. */
  kind: string;
  /** ABAP type: C, D, N…; u a structure, h a table. */
  type: string;
  /** The dictionary structure of a structure or table. */
  structure: string;
  /** Characters (asked without Unicode lengths). */
  length: number;
  optional: boolean;
}

type Interface = Map<string, Parameter>;
/** A structure's fields and their lengths in characters. */
type Structure = Map<string, number>;

/** A structure a call fills: SAP's fields and those the call gives values. */
interface Filled {
  structure: string;
  fields: Structure;
  used: Set<string>;
}

/** What one function module of a task is given: its targets, with the value each takes. */
interface Use {
  function: string;
  role: string;
  targets: Record<string, ValueSpec | string>;
  /** Tables of the answer it reads: a lookup's list, a read's `tables`. */
  reads?: string[];
}

/** The read of `name` made once, its promise shared by every later asker. */
function once<T>(known: Map<string, Promise<T>>, name: string, read: () => Promise<T>): Promise<T> {
  let promise = known.get(name);
  if (promise === undefined) {
    promise = read();
    known.set(name, promise);
  }
  return promise;
}

/** Reads interfaces and structures once per doctor run, whatever the number of tasks naming them. */
class Dictionary {
  private readonly interfaces = new Map<string, Promise<Interface>>();
  private readonly structures = new Map<string, Promise<Structure | undefined>>();

  constructor(private readonly rfc: DoctorRfc) {}

  interfaceOf(name: string): Promise<Interface> {
    return once(this.interfaces, name, () => this.readInterface(name));
  }

  /** undefined when the dictionary has no such structure or table (NOT_FOUND). */
  structure(name: string): Promise<Structure | undefined> {
    return once(this.structures, name, () => this.readStructure(name));
  }

  private async readInterface(name: string): Promise<Interface> {
    const answer = await this.rfc.send({
      functionName: 'RFC_GET_FUNCTION_INTERFACE',
      params: { FUNCNAME: name, NONE_UNICODE_LENGTH: 'X', PARAMS: [] },
    });
    return new Map(
      tableRows(answer.PARAMS).map((row): [string, Parameter] => [
        String(row.PARAMETER),
        {
          kind: String(row.PARAMCLASS),
          type: String(row.EXID),
          structure: String(row.TABNAME),
          length: Number(row.INTLENGTH),
          optional: row.OPTIONAL === 'X',
        },
      ]),
    );
  }

  private async readStructure(name: string): Promise<Structure | undefined> {
    try {
      const answer = await this.rfc.send({
        functionName: 'DDIF_FIELDINFO_GET',
        params: { TABNAME: name, DFIES_TAB: [] },
      });
      return new Map(tableRows(answer.DFIES_TAB).map((row) => [String(row.FIELDNAME), Number(row.LENG)]));
    } catch (error) {
      if (error instanceof RfcFault && error.fault.exception === 'NOT_FOUND') return undefined;
      throw error;
    }
  }
}

/** What a target names: a parameter, a row of it (a table), a field. */
function parseTarget(target: string): { name: string; row: boolean; field?: string } {
  const [, name, index, field] = TARGET.exec(target) as RegExpExecArray;
  return { name, row: index !== undefined, field };
}

/** A value's longest form, when the task declares it: `length`. */
const allowed = (spec: ValueSpec | string): number | undefined => (typeof spec === 'string' ? undefined : spec.length);

/** The function modules a task calls and what each is given: its call, its lookups, its read of SAP's data. */
function usesOf(call: RfcCallConfig, read: ReadConfig | undefined): Use[] {
  const lookups = (call.lookup ?? []).flatMap((step): Use[] =>
    'function' in step
      ? [{ function: step.function, role: 'lookup', targets: step.parameters, reads: [step.found.list] }]
      : [],
  );
  // An RFC task's read names a function module (call-schema.ts, readProblems).
  const reads: Use[] =
    read === undefined
      ? []
      : [{ function: read.function as string, role: 'read', targets: read.parameters, reads: read.tables }];
  return [{ function: call.function, role: 'call', targets: call.parameters }, ...lookups, ...reads];
}

/** Problems of one use against SAP's interface, and for each structure it fills, the fields it leaves empty. */
async function compare(dictionary: Dictionary, use: Use): Promise<{ problems: string[]; notes: string[] }> {
  const iface = await dictionary.interfaceOf(use.function);
  const problems: string[] = [];
  const filled = new Map<string, Filled>();
  for (const [target, spec] of Object.entries(use.targets)) {
    const { name, row, field } = parseTarget(target);
    const parameter = iface.get(name);
    if (parameter === undefined || parameter.kind === 'X') {
      problems.push(`${name} is not a parameter of ${use.function} (SAP's: ${[...iface.keys()].join(', ')})`);
      continue;
    }
    const isTable = parameter.kind === 'T' || parameter.type === 'h';
    const isStructure = parameter.type === 'u';
    if (row !== isTable || (field !== undefined) !== (isTable || isStructure)) {
      problems.push(
        `${target}: ${name} is ${isTable ? 'a table' : isStructure ? 'a structure' : 'a single value'} in SAP`,
      );
      continue;
    }
    if (field === undefined) {
      const limit = allowed(spec);
      if (limit !== undefined && parameter.type === 'C' && limit > parameter.length)
        problems.push(
          `${name} takes ${parameter.length} characters, the task lets ${limit} through: set its length to ${parameter.length}`,
        );
      continue;
    }
    const fields = await dictionary.structure(parameter.structure);
    if (fields === undefined) {
      problems.push(`${name}'s structure ${parameter.structure} is not in SAP's dictionary`);
      continue;
    }
    const length = fields.get(field);
    if (length === undefined) {
      problems.push(
        `${name} (${parameter.structure}) has no field ${field}; SAP's fields: ${[...fields.keys()].join(', ')}`,
      );
      continue;
    }
    const limit = allowed(spec);
    if (limit !== undefined && limit > length)
      problems.push(
        `${name}-${field} takes ${length} characters, the task lets ${limit} through: set its length to ${length}`,
      );
    const into = filled.get(name) ?? { structure: parameter.structure, fields, used: new Set<string>() };
    filled.set(name, into);
    into.used.add(field);
  }
  for (const [name, parameter] of iface) {
    if (parameter.kind === 'I' && !parameter.optional && !filled.has(name) && !(name in use.targets))
      problems.push(`${name} is a mandatory parameter of ${use.function} the task leaves out`);
  }
  for (const table of use.reads ?? [])
    if (iface.get(table)?.kind !== 'T')
      problems.push(`${table}, where the ${use.role} reads its answer, is not a table of ${use.function}`);
  return { problems, notes: structureNotes(filled) };
}

/** For each structure a call fills: SAP's fields it leaves empty, so that a person sees where a value could go. */
function structureNotes(filled: Map<string, Filled>): string[] {
  return [...filled].map(([name, { structure, fields, used }]) => {
    const empty = [...fields.keys()].filter((field) => !used.has(field));
    return `${name} (${structure}): ${[...fields.keys()].join(', ')}; left empty: ${empty.length === 0 ? 'none' : empty.join(', ')}`;
  });
}

/** A table a lookup reads with RFC_READ_TABLE: the fields of its WHERE exist. */
async function compareTable(dictionary: Dictionary, table: string, fields: string[]): Promise<string[]> {
  const structure = await dictionary.structure(table);
  if (structure === undefined) return [`table ${table}, read by the lookup, is not in SAP's dictionary`];
  return fields.filter((f) => !structure.has(f)).map((f) => `table ${table} has no field ${f}`);
}

/** The interface check of each enabled RFC task sending to this system: one line per task. */
export async function checkInterfaces(
  section: Section,
  rfc: DoctorRfc,
  tasks: Array<{ task: TaskConfig; call: RfcCallConfig }>,
): Promise<void> {
  const dictionary = new Dictionary(rfc);
  // The two description modules read about themselves first: a refusal now is the user's
  // authorisation, and a module not found later is the task's.
  try {
    await dictionary.interfaceOf(SELF);
    await dictionary.structure(SELF_ROWS);
  } catch (error) {
    return section.skip(
      `the interfaces of the tasks' function modules: not read (${errorMessage(error)})`,
      ADVICE_AUTH,
    );
  }
  for (const { task, call } of tasks) {
    const what = `task ${task.name}: ${call.function}'s interface`;
    try {
      const problems: string[] = [];
      const notes: string[] = [];
      for (const use of usesOf(call, task.read)) {
        const compared = await compare(dictionary, use);
        problems.push(...compared.problems.map((p) => (use.role === 'call' ? p : `${use.role} ${use.function}: ${p}`)));
        if (use.role === 'call') notes.push(...compared.notes);
      }
      for (const step of call.lookup ?? [])
        if ('table' in step) problems.push(...(await compareTable(dictionary, step.table, Object.keys(step.where))));
      const detail = notes.length === 0 ? '' : ` — ${notes.join('; ')}`;
      if (problems.length === 0) section.pass(`${what} takes what the task sends${detail}`);
      else
        section.fail(
          `${what} differs from the task's call: ${problems.join('; ')}${detail}`,
          `change rfc: in the task file of ${task.name} (jobs/) so that every target is a parameter or field SAP has, within its length; \`connect2erp template ${task.useCase} RFC\` prints the built-in call to start from`,
        );
    } catch (error) {
      if (error instanceof FunctionRefusalError)
        section.failed(
          what,
          error,
          `a function module the task calls does not exist on this system or is not remote-enabled (SE37, Attributes): correct rfc.function (or the lookup's, or read.function) in the task file of ${task.name}`,
        );
      else section.failed(what, error, ADVICE_AUTH);
    }
  }
}
