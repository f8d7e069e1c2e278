import { build } from 'esbuild';
import JSZip from 'jszip';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import type { Test } from 'tap';
import { marketplacePackage } from '../../nuxeo-package/builder/marketplace.js';
import { PROJECT } from './run-cli.js';

const HOST = join(import.meta.dirname, '..', 'browser', 'host');
/** Debian's package puts it here (packages.debian.org, chromium: /usr/bin/chromium). */
const CHROMIUM = '/usr/bin/chromium';
const UI_ELEMENTS = join(PROJECT, 'node_modules', '@nuxeo', 'nuxeo-ui-elements');

/** The files of the built package's bundle JAR, by path. */
async function packageJar(): Promise<JSZip> {
  const { version } = JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8')) as { version: string };
  const built = await marketplacePackage(join(PROJECT, 'nuxeo-package'), version);
  const outer = await JSZip.loadAsync(built.zip);
  const jar = outer.file(`install/bundles/connect2erp-${version}.jar`);
  if (jar === null) throw new Error('the package has no bundle JAR');
  return JSZip.loadAsync(await jar.async('nodebuffer'));
}

let built: Promise<string> | undefined;

/**
 * A folder as nxserver/nuxeo.war/ui stands once the package is installed: the Web UI stand-in
 * (test/browser/host), the labels of Nuxeo's elements merged with the package's as its deployment
 * fragment merges them, and the addon module taken out of the package's own JAR. Built once per
 * test file: the servers only read it.
 */
export function webUiFolder(): Promise<string> {
  built ??= buildWebUiFolder();
  return built;
}

async function buildWebUiFolder(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'c2e-web-ui-'));
  await build({
    entryPoints: [join(HOST, 'host.ts')],
    bundle: true,
    format: 'esm',
    outfile: join(dir, 'host.js'),
    logLevel: 'error',
  });
  copyFileSync(join(HOST, 'index.html'), join(dir, 'index.html'));
  const jar = await packageJar();
  writeFileSync(
    join(dir, 'connect2erp.bundle.js'),
    await (jar.file('web/nuxeo.war/ui/connect2erp.bundle.js') as JSZip.JSZipObject).async('nodebuffer'),
  );
  mkdirSync(join(dir, 'i18n'));
  for (const name of ['messages.json', 'messages-de.json']) {
    const nuxeo = JSON.parse(readFileSync(join(UI_ELEMENTS, 'i18n', name), 'utf8')) as object;
    const ours = JSON.parse(await (jar.file(`data/i18n/${name}`) as JSZip.JSZipObject).async('string')) as object;
    writeFileSync(join(dir, 'i18n', name), JSON.stringify({ ...nuxeo, ...ours }));
  }
  return dir;
}

/**
 * Debian's Chromium, headless, signed in as `user` the way a browser answers Basic
 * authentication; nothing leaves the machine (the flags this machine needs, and no request
 * but to the sandbox's own address).
 */
export async function browserFor(
  t: Test,
  user: { username: string; password: string },
  /** The user's time zone, as the browser has it: what Web UI shows times in. */
  timezoneId = 'UTC',
): Promise<BrowserContext> {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: install Debian's (apt-get install chromium), as .ci/run does`);
  const browser: Browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  t.teardown(() => browser.close());
  const context = await browser.newContext({
    httpCredentials: user,
    timezoneId,
    viewport: { width: 1100, height: 900 },
  });
  await context.route(/^(?!http:\/\/127\.0\.0\.1[:/])/, (route) => route.abort());
  return context;
}
