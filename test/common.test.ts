import t from 'tap';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SchemaRegistry } from '../common/nuxeo/schemas.js';
import { projectRoot } from '../common/project.js';
import { parseCondition, parseQuery } from '../common/nxql/parse.js';

/** What the product and the sandboxes both read (common/): the NXQL grammar, the Nuxeo declarations, the project folder. */

t.test('NXQL parser details', async (t) => {
  const where = (text: string) => parseQuery(`SELECT * FROM File WHERE ${text}`).where;
  t.same(
    where("dc:title = 'a\\nb\\tc\\q'"),
    { kind: 'compare', property: 'dc:title', op: '=', value: { kind: 'string', value: 'a\nb\tc\\q' } },
    'escapes',
  );
  t.same(
    where("dc:valid = TIMESTAMP '2024-01-15T08:00:00'"),
    { kind: 'compare', property: 'dc:valid', op: '=', value: { kind: 'date', value: '2024-01-15T08:00:00.000Z' } },
    'no zone is UTC',
  );
  t.throws(() => where('dc:title IS NOT 1'), /expected NULL/);
  t.throws(() => parseCondition('dc:title IS NULL)'), /expected end of condition/);
  t.same(parseCondition('NOT dc:title IS NULL'), {
    kind: 'not',
    operand: { kind: 'null', property: 'dc:title', negated: false },
  });
});

t.test('schema declarations: what a broken contribution says', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'c2e-xsd-'));
  mkdirSync(join(dir, 'OSGI-INF'));
  mkdirSync(join(dir, 'schemas'));
  const contribution = (schema: string) =>
    `<component name="t"><extension target="org.nuxeo.ecm.core.schema.TypeService" point="schema">${schema}</extension></component>`;
  writeFileSync(
    join(dir, 'schemas', 'ok.xsd'),
    '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="flag" type="xs:boolean"/></xs:schema>',
  );
  writeFileSync(join(dir, 'OSGI-INF', 'ok.xml'), contribution('<schema name="noprefix" src="schemas/ok.xsd"/>'));
  const registry = new SchemaRegistry();
  registry.loadContribution(join(dir, 'OSGI-INF', 'ok.xml'));
  t.equal(
    registry.property('noprefix:flag')?.field.type,
    'boolean',
    'a schema without prefix is addressed by its name',
  );
  t.equal(registry.property('flag'), undefined, 'a key without prefix is no property');
  writeFileSync(
    join(dir, 'schemas', 'bad.xsd'),
    '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="when" type="xs:duration"/></xs:schema>',
  );
  writeFileSync(
    join(dir, 'OSGI-INF', 'bad.xml'),
    contribution('<schema name="bad" prefix="bad" src="schemas/bad.xsd"/>'),
  );
  t.throws(() => new SchemaRegistry().loadContribution(join(dir, 'OSGI-INF', 'bad.xml')), {
    name: 'ConfigError',
    message: /bad\.xsd: element when: unsupported type xs:duration/,
  });
  writeFileSync(
    join(dir, 'OSGI-INF', 'lost.xml'),
    contribution('<schema name="lost" prefix="lost" src="schemas/lost.xsd"/>'),
  );
  t.throws(
    () => new SchemaRegistry().loadContribution(join(dir, 'OSGI-INF', 'lost.xml')),
    { name: 'ConfigError', message: /lost\.xsd: cannot read the file; it ships with connect2erp/ },
    'a missing declaration names its file',
  );
});

t.test('the project folder is found from the sources and from compiled code alike, and its absence said', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'c2e-root-'));
  mkdirSync(join(root, 'dist', 'src', 'commands'), { recursive: true });
  writeFileSync(join(root, 'package.json'), '{}');
  t.equal(projectRoot(join(root, 'dist', 'src', 'commands')), root);
  t.equal(projectRoot(root), root);
  t.throws(() => projectRoot('/'), /no package\.json in \/ or above it/);
});
