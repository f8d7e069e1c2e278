import JSZip from 'jszip';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { jarManifest } from './manifest.js';
import { webUiBundle } from './web-ui-bundle.js';

/**
 * The Nuxeo Marketplace package, built without a JDK: a JAR and a package are ZIP files. The
 * layout is what Nuxeo's package manager reads (nuxeo/nuxeo 2021 and 2023,
 * modules/runtime/nuxeo-connect-standalone: PackagePersistence unzips the package and reads
 * package.xml and install.xml at its root; Update copies install/bundles into nxserver/bundles).
 */

/** The package name: Web UI loads `ui/<installed addon package name>.bundle.js` (nuxeo-web-ui, ui/config.jsp). */
const PACKAGE_NAME = 'connect2erp';
const SYMBOLIC_NAME = 'org.connect2erp';

/** Entries are dated alike, so that the same sources build the same bytes. */
const DATE = new Date(Date.UTC(2026, 0, 1));

interface BuiltPackage {
  fileName: string;
  zip: Buffer;
}

export async function marketplacePackage(packageDir: string, version: string): Promise<BuiltPackage> {
  // JarUtils.JAR_NAME, "(.+)-(r?[0-9]+.*)\.jar": Update refuses a bundle whose name has no version.
  const jarName = `${PACKAGE_NAME}-${version}.jar`;
  const zip = new JSZip();
  add(zip, 'package.xml', packageXml(version));
  add(zip, 'install.xml', INSTALL_XML);
  add(zip, `install/bundles/${jarName}`, await bundleJar(packageDir, version));
  return { fileName: `${PACKAGE_NAME}-${version}.zip`, zip: await generate(zip) };
}

/** The bundle: the schemas and facets, the deployment fragment, the ERP tab and its labels. */
async function bundleJar(packageDir: string, version: string): Promise<Buffer> {
  const jar = new JSZip();
  const osgi = join(packageDir, 'OSGI-INF');
  const components = readdirSync(osgi).filter((f) => f !== 'deployment-fragment.xml' && f.endsWith('.xml'));
  // The manifest first, as `jar` writes it; Nuxeo reads it through JarFile, which finds it anywhere.
  add(
    jar,
    'META-INF/MANIFEST.MF',
    jarManifest([
      ['Manifest-Version', '1.0'],
      ['Bundle-ManifestVersion', '2'],
      ['Bundle-Name', 'connect2erp'],
      // The one header Nuxeo requires (nuxeo-runtime-osgi, BundleManifestReader).
      ['Bundle-SymbolicName', `${SYMBOLIC_NAME};singleton:=true`],
      ['Bundle-Version', version],
      ['Bundle-Vendor', 'connect2erp'],
      ['Nuxeo-Component', components.map((f) => `OSGI-INF/${f}`).join(',')],
    ]),
  );
  for (const file of [...components, 'deployment-fragment.xml'])
    add(jar, `OSGI-INF/${file}`, readFileSync(join(osgi, file)));
  for (const file of readdirSync(join(packageDir, 'schemas')))
    add(jar, `schemas/${file}`, readFileSync(join(packageDir, 'schemas', file)));
  add(jar, `web/nuxeo.war/ui/${PACKAGE_NAME}.bundle.js`, await webUiBundle(packageDir));
  for (const file of readdirSync(join(packageDir, 'web-ui', 'i18n')))
    add(jar, `data/i18n/${file}`, readFileSync(join(packageDir, 'web-ui', 'i18n', file)));
  return generate(jar);
}

function add(zip: JSZip, path: string, content: string | Buffer): void {
  zip.file(path, content, { date: DATE, createFolders: false });
}

function generate(zip: JSZip): Promise<Buffer> {
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE', platform: 'UNIX' });
}

/**
 * What PackageDefinitionImpl reads (nuxeo-connect-standalone): name, version and type "addon";
 * `lts` is the distribution name of 2021, 2023 and 2025 (the root pom's nuxeo.distribution.name on
 * nuxeo/nuxeo's 2021 and 2023 branches, and at LTS 2025's "Release 2025.0" commit), and with a name
 * and a version range the target platform is matched by them (nuxeo-connect-client 1.8.6, the same
 * in 2023 and 2025: TargetPlatformFilterHelper). LTS 2025 versions run 2025.0 up (2025.15 in
 * February 2026); doc.nuxeo.com "Package Manifest" is the same on the 2021, 2023 and 2025 branches.
 * The bundle holds XML contributions, schemas and Web UI files only: Jakarta EE 10 (LTS 2025)
 * changes Java code, not these.
 */
function packageXml(version: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<package type="addon" name="${PACKAGE_NAME}" version="${version}">
  <title>connect2erp</title>
  <description>
    <p>Connects documents to SAP: the schemas and facets of the Connect-to-ERP feature, and the ERP
    tab of Web UI where users complete the values SAP needs and see where each document stands.</p>
  </description>
  <vendor>connect2erp</vendor>
  <installer restart="true"/>
  <uninstaller restart="true"/>
  <hotreload-support>false</hotreload-support>
  <require-terms-and-conditions-acceptance>false</require-terms-and-conditions-acceptance>
  <target-platform>
    <name>lts</name>
    <version>[2021.0,2026)</version>
  </target-platform>
  <dependencies>
    <package>nuxeo-web-ui</package>
  </dependencies>
  <license>Apache License, Version 2.0</license>
  <license-url>https://www.apache.org/licenses/LICENSE-2.0</license-url>
</package>
`;
}

/** Nuxeo's own packages install their bundles with this one command; the uninstall is written at install. */
const INSTALL_XML = `<?xml version="1.0" encoding="UTF-8"?>
<install>
  <update file="\${package.root}/install/bundles" todir="\${env.bundles}"/>
</install>
`;
