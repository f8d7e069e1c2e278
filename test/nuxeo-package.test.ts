import { XMLParser } from 'fast-xml-parser';
import JSZip from 'jszip';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { jarManifest } from '../nuxeo-package/builder/manifest.js';
import { marketplacePackage } from '../nuxeo-package/builder/marketplace.js';
import { STATUSES } from '../src/status/facet.js';
import { USE_CASE_FACETS } from '../src/status/readiness.js';
import { FOLDER_CHAIN } from '../src/repository/client.js';
import { PROJECT } from './helpers/run-cli.js';

/**
 * The Marketplace package against what Nuxeo reads of it. Each rule cites the Nuxeo source it
 * comes from (nuxeo/nuxeo 2021 and 2023; nuxeo/nuxeo-connect; nuxeo/nuxeo-web-ui 3.0 and 3.1);
 * the checks read the package's bytes, not the builder's code.
 */

const { version } = JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8')) as { version: string };
/** The extension points' components: schemas and facets, Automation chains (nuxeo/nuxeo 2021 and 2023). */
const TARGETS = ['org.nuxeo.ecm.core.schema.TypeService', 'org.nuxeo.ecm.core.operation.OperationServiceComponent'];
/**
 * Operation ids of nuxeo-automation-core, 2021 and 2023 (each class's `ID`: CreateDocument, AddFacet,
 * UpdateDocument, SetInputAsVar, FetchDocument, MoveDocument): a chain naming another fails at call time.
 */
const NUXEO_OPERATIONS = [
  'Document.Create',
  'Document.AddFacet',
  'Document.Update',
  'Context.SetInputAsVar',
  'Repository.GetDocument',
  'Document.Move',
];
const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', isArray: (name) => ARRAYS.has(name) });
const ARRAYS = new Set([
  'package',
  'extension',
  'schema',
  'facet',
  'append',
  'include',
  'update',
  'chain',
  'operation',
]);

async function open(): Promise<{ zip: Buffer; outer: JSZip; jar: JSZip; jarName: string }> {
  const built = await marketplacePackage(join(PROJECT, 'nuxeo-package'), version);
  const outer = await JSZip.loadAsync(built.zip);
  const jarName = Object.keys(outer.files).find((name) => name.startsWith('install/bundles/')) as string;
  const jar = await JSZip.loadAsync(await (outer.file(jarName) as JSZip.JSZipObject).async('nodebuffer'));
  return { zip: built.zip, outer, jar, jarName };
}

const text = (zip: JSZip, path: string): Promise<string> => (zip.file(path) as JSZip.JSZipObject).async('string');
const files = (zip: JSZip): string[] => Object.keys(zip.files).filter((name) => !zip.files[name].dir);

/** A maven-like range `[low,high)` (the package manifest documentation: "only one range"). */
function inRange(range: string, platform: string): boolean {
  const parts = /^([[(])([\d.]*),([\d.]*)([\])])$/.exec(range.replace(/\s/g, ''));
  if (parts === null) throw new Error(`not a range: ${range}`);
  const [, open, low, high, close] = parts;
  const compare = (a: string, b: string): number => {
    const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)];
    for (let i = 0; i < Math.max(x.length, y.length); i++)
      if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
    return 0;
  };
  const above = low === '' || (open === '[' ? compare(platform, low) >= 0 : compare(platform, low) > 0);
  const below = high === '' || (close === ']' ? compare(platform, high) <= 0 : compare(platform, high) < 0);
  return above && below;
}

t.test('the package: descriptor, install script and a bundle named as Update accepts it', async (t) => {
  const { outer, jarName } = await open();
  t.same(files(outer).sort(), ['install.xml', `install/bundles/connect2erp-${version}.jar`, 'package.xml']);
  // Update (nuxeo-connect-standalone) checks a bundle's name against JarUtils.JAR_NAME.
  t.match(jarName.slice('install/bundles/'.length), /^(.+)-(r?[0-9]+.*)\.jar$/);
  // PackageDefinitionImpl reads these; type is one of studio, hotfix, addon (PackageType).
  const {
    package: [pkg],
  } = xml.parse(await text(outer, 'package.xml')) as { package: Array<Record<string, any>> };
  t.match(pkg, { '@type': 'addon', '@name': 'connect2erp', '@version': version });
  // TargetPlatformFilterHelper: with a name and a version, the platform must have that name and a version in range.
  t.equal(
    pkg['target-platform'].name,
    'lts',
    'the distribution name of LTS 2021, 2023 and 2025 (nuxeo.distribution.name)',
  );
  const range = String(pkg['target-platform'].version);
  for (const platform of ['2021.0', '2021.40', '2023.0', '2023.25', '2025.0', '2025.15', '2025.14.22'])
    t.ok(inRange(range, platform), `${platform} takes it`);
  for (const platform of ['11.5', '2026.0']) t.notOk(inRange(range, platform), `${platform} does not`);
  t.same(pkg.dependencies.package, ['nuxeo-web-ui'], 'Web UI is there first');
  t.equal(pkg['require-terms-and-conditions-acceptance'], false);
  const install = xml.parse(await text(outer, 'install.xml')) as { install: { update: Array<Record<string, string>> } };
  t.same(install.install.update, [{ '@file': '${package.root}/install/bundles', '@todir': '${env.bundles}' }]);
});

t.test('the bundle: its manifest, components and deployment fragment name files the JAR has', async (t) => {
  const { jar } = await open();
  const names = files(jar);
  const manifest = await text(jar, 'META-INF/MANIFEST.MF');
  // The JAR File Specification: lines of at most 72 bytes, continued with one space, a newline at the end.
  for (const line of manifest.split('\r\n').slice(0, -1)) t.ok(Buffer.byteLength(line) <= 72, `short line: ${line}`);
  t.ok(manifest.endsWith('\r\n'));
  const headers = Object.fromEntries(
    manifest
      .replace(/\r\n /g, '')
      .split('\r\n')
      .filter(Boolean)
      .map((line) => [line.slice(0, line.indexOf(': ')), line.slice(line.indexOf(': ') + 2)]),
  );
  // BundleManifestReader: without a symbolic name the JAR is no bundle.
  t.match(headers['Bundle-SymbolicName'], /^org\.connect2erp(;|$)/);
  t.equal(headers['Bundle-Version'], version);
  // OSGiRuntimeService tokenizes Nuxeo-Component on ", \t\n\r\f" and loads each path from the bundle.
  const components = String(headers['Nuxeo-Component']).split(/[, \t\n\r\f]+/);
  t.ok(components.length > 0);
  const schemas = new Set<string>();
  const facets = new Set<string>();
  const chains = new Set<string>();
  for (const path of components) {
    t.ok(names.includes(path), `${path} is in the JAR`);
    const { component } = xml.parse(await text(jar, path)) as { component: { extension: Array<Record<string, any>> } };
    for (const extension of component.extension) {
      t.ok(TARGETS.includes(extension['@target']), `${String(extension['@target'])}: a component Nuxeo has`);
      for (const chain of extension.chain ?? []) {
        for (const operation of chain.operation)
          t.ok(
            NUXEO_OPERATIONS.includes(operation['@id']),
            `${chain['@id']}: ${operation['@id']} is an operation of Nuxeo's`,
          );
        chains.add(chain['@id']);
      }
      for (const schema of extension.schema ?? []) {
        t.ok(names.includes(schema['@src']), `${schema['@src']} is in the JAR`);
        schemas.add(schema['@name']);
      }
      for (const facet of extension.facet ?? []) {
        for (const schema of facet.schema ?? [])
          t.ok(schemas.has(schema['@name']), `${facet['@name']}: a declared schema`);
        facets.add(facet['@name']);
      }
    }
  }
  for (const facet of [
    ...Object.values(USE_CASE_FACETS),
    'fct_erp_http_content',
    'fct_erp_task_status',
    'fct_erp_config_file_connect2erp',
  ])
    t.ok(facets.has(facet), `${facet} is declared`);
  t.same([...chains], [FOLDER_CHAIN], 'the chain the job calls is declared');

  // DeploymentPreprocessor reads OSGI-INF/deployment-fragment.xml; Web UI's bundle is org.nuxeo.web.ui.
  const { fragment } = xml.parse(await text(jar, 'OSGI-INF/deployment-fragment.xml')) as {
    fragment: { require: string; install: Record<string, any> };
  };
  t.equal(fragment.require, 'org.nuxeo.web.ui', 'after Web UI has put its own files in place');
  t.same(fragment.install.unzip[0].include, ['web/nuxeo.war/**']);
  const appended = fragment.install.append as Array<Record<string, string>>;
  t.same(
    appended.map((a) => a['@to']),
    ['nuxeo.war/ui/i18n/messages.json', 'nuxeo.war/ui/i18n/messages-de.json'],
  );
  t.same(
    fragment.install.copy,
    { '@from': 'nuxeo.war/ui/i18n/messages-de.json', '@to': 'nuxeo.war/ui/i18n/messages-de-DE.json' },
    'German for browsers that say de-DE, as Web UI does for fr-FR',
  );
  for (const { '@from': from } of appended) {
    const inJar = from.replace('${bundle.fileName}.tmp/', '');
    t.ok(names.includes(inJar), `${inJar} is in the JAR`);
    t.notMatch(inJar, /^web\/nuxeo\.war\//, 'out of the first unzip, which would overwrite Web UI’s own file');
  }
});

t.test('the tab: a module Web UI loads by the package name, with no import Web UI cannot resolve', async (t) => {
  const { jar } = await open();
  // ui/config.jsp lists ui/<installed addon package name>.bundle.js; index.js imports it as is.
  const module = await text(jar, 'web/nuxeo.war/ui/connect2erp.bundle.js');
  t.notMatch(module, /^\s*import\b|\bimport\s*\(|\brequire\s*\(/m, 'no import at all: Polymer and Nuxeo are globals');
  t.match(module, /customElements\.define\(/);
  t.match(module, /slot="DOCUMENT_VIEWS_ITEMS"[\s\S]*facet="fct_erp_http_content"/);
  t.match(module, /slot="DOCUMENT_VIEWS_PAGES"[\s\S]*<nuxeo-erp-tab name="erp"/);

  const en = JSON.parse(await text(jar, 'data/i18n/messages.json')) as Record<string, string>;
  const de = JSON.parse(await text(jar, 'data/i18n/messages-de.json')) as Record<string, string>;
  t.same(Object.keys(de).sort(), Object.keys(en).sort(), 'German has every English label');
  // Every label key the module names (in its template and its code), and those it makes from a status or type.
  const used = [...module.matchAll(/["'`](erp\.[a-zA-Z]+\.?[\w.]*)["'`]/g)].map((m) => m[1]);
  t.ok(used.length >= 15, `${used.length} keys named`);
  const expected = [
    ...used,
    'erp.tab.label',
    ...STATUSES.map((status) => `erp.status.${status}`),
    ...['US', 'C', 'O', 'P', 'S', 'A'].map((type) => `erp.orgType.${type}`),
  ];
  t.same(
    expected.filter((key) => en[key] === undefined),
    [],
    'every label the tab asks for exists',
  );
  const properties = [...module.matchAll(/"(erp\w+:\w+)"/g)].map((m) => `erp.property.${m[1].replace(':', '.')}`);
  t.same(
    properties.filter((key) => !key.includes('TaskStatus') && en[key] === undefined),
    [],
    'every property shown has a label',
  );
});

t.test('the same sources build the same bytes', async (t) => {
  const [a, b] = [await open(), await open()];
  t.ok(a.zip.equals(b.zip));
});

t.test('a manifest header longer than a line is continued on lines starting with a space', async (t) => {
  const long = `OSGI-INF/${'a'.repeat(60)}.xml,OSGI-INF/${'b'.repeat(60)}.xml`;
  const manifest = jarManifest([['Nuxeo-Component', long]]);
  const lines = manifest.split('\r\n').slice(0, -1);
  t.ok(lines.length >= 3);
  t.ok(lines.every((line) => Buffer.byteLength(line) <= 72));
  t.ok(lines.slice(1).every((line) => line.startsWith(' ')));
  t.equal(manifest.replace(/\r\n /g, ''), `Nuxeo-Component: ${long}\r\n`);
  t.ok(jarManifest([['X', 'é'.repeat(40)]]).split('\r\n')[0].length < 72, 'bytes, not characters');
});
