import { fail, text, type CallContext } from './call-context.js';
import type { Field, Fields, FunctionInterface } from './interfaces.js';
import { tableColumns } from './read-table.js';
import type { SapStructure } from './soap-codec.js';

/**
 * SAP's read-only description of its own interfaces, answered from the sandbox's declarations
 * (interfaces.ts), so that what `doctor` reads is what the SOAP runtime checks calls against.
 * Sources and field lists: interfaces.ts, RFC_GET_FUNCTION_INTERFACE and DDIF_FIELDINFO_GET.
 */

const DATS_LENGTH = 8;
/** Bytes per character of a Unicode system, where INTLENGTH counts bytes unless NONE_UNICODE_LENGTH is X. */
const UNICODE_BYTES = 2;

const isField = (value: Field | Fields): value is Field => 'kind' in value && typeof value.kind === 'string';
const lengthOf = (field: Field): number => (field.kind === 'DATS' ? DATS_LENGTH : field.length);
const exid = (field: Field): string => (field.kind === 'DATS' ? 'D' : 'C');

interface ParamRow {
  PARAMCLASS: string;
  PARAMETER: string;
  TABNAME: string;
  EXID: string;
  INTLENGTH: number;
  OPTIONAL: string;
}

function paramRows(iface: FunctionInterface): ParamRow[] {
  const type = (name: string): string => iface.types?.[name] ?? '';
  const width = (fields: Fields): number => Object.values(fields).reduce((sum, f) => sum + lengthOf(f), 0);
  const imports = Object.entries(iface.imports).map(([name, value]) => ({
    PARAMCLASS: 'I',
    PARAMETER: name,
    TABNAME: isField(value) ? '' : type(name),
    EXID: isField(value) ? exid(value) : 'u',
    INTLENGTH: isField(value) ? lengthOf(value) : width(value),
    OPTIONAL: iface.mandatory?.includes(name) === true ? '' : 'X',
  }));
  const exports = iface.exports.map((name) => ({
    PARAMCLASS: 'E',
    PARAMETER: name,
    TABNAME: '',
    EXID: '',
    INTLENGTH: 0,
    OPTIONAL: '',
  }));
  const tables = Object.entries(iface.tables).map(([name, fields]) => ({
    PARAMCLASS: 'T',
    PARAMETER: name,
    TABNAME: type(name),
    EXID: 'h',
    INTLENGTH: width(fields),
    OPTIONAL: 'X',
  }));
  return [...imports, ...exports, ...tables];
}

/** RFC_GET_FUNCTION_INTERFACE: PARAMS for a module this SAP has; FU_NOT_FOUND for any other. */
export function functionInterface({ params, interfaces }: CallContext): SapStructure {
  const name = text(params, 'FUNCNAME');
  const iface = Object.hasOwn(interfaces, name) ? interfaces[name] : undefined;
  if (iface === undefined) return fail('FU_NOT_FOUND', `Function module ${name} not found`);
  const bytes = text(params, 'NONE_UNICODE_LENGTH') === 'X' ? 1 : UNICODE_BYTES;
  return {
    PARAMS: paramRows(iface).map((row, i) => ({
      ...row,
      FIELDNAME: '',
      POSITION: String(i + 1),
      OFFSET: '0',
      INTLENGTH: String(row.INTLENGTH * bytes),
      DECIMALS: '0',
      DEFAULT: '',
      PARAMTEXT: '',
    })),
    REMOTE_CALL: 'R',
    UPDATE_TASK: '',
    REMOTE_BASXML_SUPPORTED: '',
  };
}

/** A structure's fields by its dictionary name: one an interface here types, or a table RFC_READ_TABLE reads. */
function structure(interfaces: Record<string, FunctionInterface>, name: string): Record<string, Field> | undefined {
  for (const iface of Object.values(interfaces)) {
    for (const [parameter, type] of Object.entries(iface.types ?? {})) {
      if (type !== name) continue;
      const fields = iface.imports[parameter] ?? iface.tables[parameter];
      if (fields !== undefined && !isField(fields)) return fields;
    }
  }
  const columns = tableColumns(name);
  return (
    columns && Object.fromEntries(Object.entries(columns).map(([field, length]) => [field, { kind: 'CHAR', length }]))
  );
}

/** DDIF_FIELDINFO_GET: DFIES_TAB, a row per field of the structure or table; NOT_FOUND for a name the dictionary lacks. */
export function fieldInfo({ params, interfaces }: CallContext): SapStructure {
  const name = text(params, 'TABNAME');
  const fields = structure(interfaces, name) ?? fail('NOT_FOUND', `${name} is not active in the dictionary`);
  let offset = 0;
  const rows = Object.entries(fields).map(([field, declared], i) => {
    const length = lengthOf(declared);
    const row = {
      TABNAME: name,
      FIELDNAME: field,
      POSITION: String(i + 1).padStart(4, '0'),
      OFFSET: String(offset).padStart(6, '0'),
      LENG: String(length).padStart(6, '0'),
      INTLEN: String(length * UNICODE_BYTES).padStart(6, '0'),
      DATATYPE: declared.kind,
      INTTYPE: exid(declared),
      FIELDTEXT: '',
      KEYFLAG: '',
    };
    offset += length * UNICODE_BYTES;
    return row;
  });
  return { DFIES_TAB: rows, FIXED_VALUES: [] };
}
