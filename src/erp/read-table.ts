import { tableRows, type RfcParams } from './soap.js';

/**
 * RFC_READ_TABLE, SAP's generic read-only table reader, as its public callers use it (PyRFC and
 * node-rfc scripts; sap-interfaces.md): the WHERE clause in OPTIONS rows of 72 characters
 * (RFC_DB_OPT-TEXT), the fields asked for in FIELDS, each row in DATA's WA, cut by the OFFSET and
 * LENGTH SAP answers in FIELDS. The user needs S_TABU_NAM (or S_TABU_DIS) for the table, else the
 * call raises NOT_AUTHORIZED. `doctor` reads the customizing with it, a task's lookup a table of SAP's.
 */
const READ_TABLE = 'RFC_READ_TABLE';

const OPTION_ROW = 72;

/** ABAP's literal in a WHERE clause: in quotes, a quote doubled. */
const abapLiteral = (value: string): string => `'${value.replace(/'/g, "''")}'`;

/** A WHERE condition that does not fit one OPTIONS row: ABAP reads a literal cut across two rows as two tokens. */
export class ConditionTooLong extends Error {}

/** The call reading `fields` of the rows of `table` where every field of `where` equals its value. */
export function readTableRequest(
  table: string,
  fields: string[],
  where: Record<string, string>,
): { functionName: string; params: RfcParams } {
  // One condition per row: a token never spans two rows.
  const options = Object.entries(where).map(([field, value], i) => {
    const text = `${i === 0 ? '' : 'AND '}${field} = ${abapLiteral(value)}`;
    if (text.length > OPTION_ROW)
      throw new ConditionTooLong(
        `${table}-${field} = ${abapLiteral(value)} does not fit a WHERE row of RFC_READ_TABLE (${OPTION_ROW} characters)`,
      );
    return { TEXT: text };
  });
  return {
    functionName: READ_TABLE,
    params: {
      QUERY_TABLE: table,
      DELIMITER: '|',
      OPTIONS: options,
      FIELDS: fields.map((name) => ({ FIELDNAME: name })),
      DATA: [],
    },
  };
}

/** The rows of an RFC_READ_TABLE answer, each field cut from WA where FIELDS says it is, blanks trimmed. */
export function readTableRows(answer: Record<string, unknown>): Array<Record<string, string>> {
  const fields = tableRows(answer.FIELDS).map((field) => ({
    name: String(field.FIELDNAME),
    offset: Number(field.OFFSET),
    length: Number(field.LENGTH),
  }));
  return tableRows(answer.DATA).map((row) => {
    const wa = String(row.WA);
    return Object.fromEntries(fields.map((f) => [f.name, wa.slice(f.offset, f.offset + f.length).trim()]));
  });
}
