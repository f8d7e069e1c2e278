import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { configLocation } from '../../src/config/location.js';
import { loadConfig, type Config } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { RepositoryClient } from '../../src/repository/client.js';
import { setUpRepository, uploadFile, writeDemoConfig } from '../../sandbox/demo.js';
import { RepositorySandbox, type RepositorySandboxOptions } from '../../sandbox/repository/server.js';
import { NO_BLOBS, type StoredDoc } from '../../sandbox/repository/store.js';
import { ErpSandbox } from '../../sandbox/erp/server.js';
import { applySandboxSettings, sandboxSettingsSchema } from '../../sandbox/settings.js';
import { runJob, type RunOptions } from '../../src/job/run.js';

export const MAPPING = readFileSync(
  join(import.meta.dirname, '..', '..', 'config', 'connector_configuration_connect_to_erp.json'),
  'utf8',
);
export const quietLog = createLogger({ level: 'error', json: true });
process.env.NUXEO_PASSWORD = 'Administrator';
process.env.CONTENT_SERVER_PASSWORD = 'Administrator';
process.env.SAP_PASSWORD = 'sandbox';

export interface Env {
  sandbox: RepositorySandbox;
  erp: ErpSandbox;
  baseUrl: string;
  dir: string;
  location: ReturnType<typeof configLocation>;
  config: Config;
  client: RepositoryClient;
  upload: (folder: string, name: string) => Promise<string>;
  run: (dryRun?: boolean) => ReturnType<typeof runJob>;
  /** A run in this process, the next scheduled one: the search index has caught up with every write before it. */
  job: (options?: Omit<RunOptions, 'location' | 'dryRun'> & { dryRun?: boolean }) => ReturnType<typeof runJob>;
  /** A document's properties as the repository holds them. */
  props: (uid: string) => Record<string, unknown>;
  /** A user filling in values on a document, straight in the repository (and its search index). */
  fill: (uid: string, values: Record<string, unknown>) => void;
  /** Every document of the repository and every ERP table, to compare before and after a command. */
  snapshot: () => string;
}

/** A sandbox over real HTTP, set up as the demo does, with a config folder pointing at it. */
/**
 * `sandbox`: settings as `connect2erp sandbox --faults FILE` takes them (sandbox/settings.ts),
 * applied the same way.
 */
export async function sandboxEnv(
  t: Test,
  options: { mapping?: string; storage?: Record<string, string>; sandbox?: Record<string, unknown> } & Pick<
    RepositorySandboxOptions,
    'users' | 'webUiDir' | 'undeployedFacets' | 'undeployedChains' | 'refusedChains'
  > = {},
): Promise<Env> {
  const settings = sandboxSettingsSchema.parse(options.sandbox ?? {});
  const sandbox = new RepositorySandbox({
    users: options.users,
    webUiDir: options.webUiDir,
    undeployedFacets: options.undeployedFacets,
    undeployedChains: options.undeployedChains,
    refusedChains: options.refusedChains,
    searchLagMs: settings.repository.searchLagMs,
    maxPageSize: settings.repository.maxPageSize,
    version: settings.repository.version,
  });
  const baseUrl = await sandbox.start();
  t.teardown(() => sandbox.stop());
  const erp = new ErpSandbox({ customizingFile: settings.erp.customizing });
  const erpUrl = await erp.start();
  t.teardown(() => erp.stop());
  applySandboxSettings(settings, sandbox, erp);
  await setUpRepository(baseUrl, options.mapping ?? MAPPING);
  const dir = mkdtempSync(join(tmpdir(), 'c2e-test-'));
  const configDir = writeDemoConfig(dir, baseUrl, erpUrl);
  const storagePath = join(configDir, 'storage.yaml');
  let storage = readFileSync(storagePath, 'utf8').replace('retryDelayMs: 1000', 'retryDelayMs: 10');
  for (const [key, value] of Object.entries(options.storage ?? {})) {
    const line = new RegExp(`^${key}: .*$`, 'm');
    storage = line.test(storage) ? storage.replace(line, `${key}: ${value}`) : `${storage}${key}: ${value}\n`;
  }
  writeFileSync(storagePath, storage);
  const location = configLocation({ config: configDir });
  const config = loadConfig(location);
  const client = new RepositoryClient(config.storage, quietLog);
  const job: Env['job'] = (options = {}) => {
    // Scheduled runs come minutes apart: by the next one, the index has everything written before.
    sandbox.index.catchUp();
    return runJob({ dryRun: false, ...options, location }, quietLog);
  };
  return {
    sandbox,
    erp,
    baseUrl,
    dir,
    location,
    config,
    client,
    upload: (folder, name) => uploadFile(baseUrl, `/default-domain/workspaces/${folder}`, name),
    run: (dryRun = false) => job({ dryRun }),
    job,
    props: (uid) => (sandbox.store.get(uid) as StoredDoc).properties,
    fill: (uid, values) => {
      // As a user would in the Web UI; searchable at once, so that a test's own edits never wait for the index.
      sandbox.index.sync(() =>
        sandbox.store.update(sandbox.actor(), sandbox.store.get(uid) as StoredDoc, values, NO_BLOBS, {}),
      );
    },
    snapshot: () => JSON.stringify({ documents: [...sandbox.store.all()], erp: erp.tables }),
  };
}
