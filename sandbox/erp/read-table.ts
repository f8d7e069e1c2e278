import type { Customizing } from './customizing.js';
import { fail, rows, text, type CallContext, type ErpTables } from './call-context.js';
import type { SapStructure } from './soap-codec.js';

/**
 * The tables RFC_READ_TABLE reads here, with their columns and lengths as SAP's dictionary declares
 * them: the customizing (TOAAR: content repositories, OAC0; TOADV: document types and their
 * document class, OAC2; TOAOM: which document type an object type takes, in which repository and
 * link table, AR_STATUS 'X' when active, OAC3; field names as public ABAP selects them), and the
 * external bar codes BAPI_BARCODE_SENDLIST stores, BDS_BAR_EX (leanx.eu and docsfortec.com: BARCODE,
 * CONTREP and EX_DOC_ID CHAR 40 its key, ARDATE, DOCUCLASS CHAR 20; no client field, so every
 * client's rows; its other seven fields, the physical document, who made and changed it and when,
 * KEEP_FLAG, are not modelled and asked for are refused FIELD_NOT_VALID).
 */
const TABLES: Record<
  string,
  { columns: Record<string, number>; rows: (c: Customizing, t: ErpTables) => Array<Record<string, string>> }
> = {
  TOAAR: { columns: { ARCHIV_ID: 2 }, rows: (c) => c.contentRepositories.map((id) => ({ ARCHIV_ID: id })) },
  TOADV: {
    columns: { AR_OBJECT: 10, DOC_TYPE: 20 },
    rows: (c) => Object.entries(c.documentTypes).map(([type, docClass]) => ({ AR_OBJECT: type, DOC_TYPE: docClass })),
  },
  TOAOM: {
    columns: { SAP_OBJECT: 10, AR_OBJECT: 10, AR_STATUS: 1, ARCHIV_ID: 2, CONNECTION: 10 },
    rows: (c) =>
      c.links.map((link) => ({
        SAP_OBJECT: link.objectType,
        AR_OBJECT: link.documentType,
        AR_STATUS: 'X',
        ARCHIV_ID: link.contentRepository,
        CONNECTION: 'TOA01',
      })),
  },
  BDS_BAR_EX: {
    columns: { BARCODE: 40, CONTREP: 40, EX_DOC_ID: 40, ARDATE: 8, DOCUCLASS: 20 },
    rows: (_, t) =>
      t.barcodes.map((row) => ({
        BARCODE: row.BARCODE,
        CONTREP: row.CONTREP,
        EX_DOC_ID: row.DOCID,
        ARDATE: row.ARDATE,
        DOCUCLASS: row.DOCTYPE,
      })),
  },
};

/**
 * RFC_READ_TABLE over the sandbox's tables. The table must be one the user may read (S_TABU_NAM;
 * NOT_AUTHORIZED otherwise) and one of TOAAR, TOADV, TOAOM, BDS_BAR_EX (TABLE_NOT_AVAILABLE).
 * The WHERE clause is read only as far as a connector needs it — `FIELD = 'value'` or
 * `FIELD EQ 'value'` joined by AND, a quote inside a literal doubled as ABAP writes it — and
 * anything else is OPTION_NOT_VALID: the stricter reading of ABAP's dynamic WHERE.
 */
/** The columns of a table RFC_READ_TABLE reads here, with their lengths; undefined for another. */
export const tableColumns = (name: string): Record<string, number> | undefined =>
  Object.hasOwn(TABLES, name) ? TABLES[name].columns : undefined;

export function readTable({ params, customizing, user, tables }: CallContext): SapStructure {
  const name = text(params, 'QUERY_TABLE');
  const allowed = customizing.users[user].tables;
  if (allowed !== '*' && !allowed.includes(name)) fail('NOT_AUTHORIZED', `No authorization for table ${name}`);
  const table = TABLES[name] ?? fail('TABLE_NOT_AVAILABLE', `Table ${name} is not available`);
  const asked = rows(params.FIELDS).map((row) => text(row, 'FIELDNAME'));
  const fields = asked.length > 0 ? asked : Object.keys(table.columns);
  for (const field of fields) if (!(field in table.columns)) fail('FIELD_NOT_VALID', `Field ${field} is not valid`);
  // The rows of a dynamic WHERE are read as if a blank separated them, trailing blanks dropped
  // (ABAP's CHAR rows): a token cut across two rows is two tokens, and refused.
  const where = whereClause(
    rows(params.OPTIONS)
      .map((row) => text(row, 'TEXT').trimEnd())
      .join(' '),
    table.columns,
  );
  const delimiter = text(params, 'DELIMITER');
  // A CHAR field compares with a shorter literal as if the literal were padded with blanks.
  const found = table
    .rows(customizing, tables)
    .filter((row) => where.every(([field, value]) => row[field].trimEnd() === value.trimEnd()));
  let offset = 0;
  const described = fields.map((field) => {
    const length = table.columns[field];
    const row = {
      FIELDNAME: field,
      OFFSET: String(offset).padStart(6, '0'),
      LENGTH: String(length).padStart(6, '0'),
      TYPE: 'C',
      FIELDTEXT: '',
    };
    offset += length + delimiter.length;
    return row;
  });
  return {
    FIELDS: described,
    OPTIONS: rows(params.OPTIONS),
    DATA: found.map((row) => ({ WA: fields.map((f) => row[f].padEnd(table.columns[f])).join(delimiter) })),
  };
}

/** `A = 'x' AND B EQ 'y'` as [field, value] pairs. */
function whereClause(clause: string, columns: Record<string, number>): Array<[string, string]> {
  const conditions: Array<[string, string]> = [];
  let rest = clause.trim();
  while (rest !== '') {
    const match = /^([A-Z_][A-Z0-9_]*)\s+(?:=|EQ)\s+'((?:[^']|'')*)'\s*(?:AND\s+(?=\S)|$)/.exec(rest);
    if (match === null || !(match[1] in columns))
      return fail('OPTION_NOT_VALID', `Selection criterion not valid: ${clause}`);
    conditions.push([match[1], match[2].replace(/''/g, "'")]);
    rest = rest.slice(match[0].length);
  }
  return conditions;
}
