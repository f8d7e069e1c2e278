import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { configLocation } from '../../src/config/location.js';
import { loadConfig, type Config } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { RepositoryClient } from '../../src/repository/client.js';
import { setUpRepository, uploadFile, writeDemoConfig } from '../../src/sandbox/demo.js';
import { RepositorySandbox, type RepositorySandboxOptions } from '../../src/sandbox/repository/server.js';
import { NO_BLOBS, type StoredDoc } from '../../src/sandbox/repository/store.js';
import { ErpSandbox } from '../../src/sandbox/erp/server.js';
import { runJob } from '../../src/run.js';

export const MAPPING = readFileSync(join(import.meta.dirname, '..', '..', 'config', 'connector_configuration_connect_to_erp.json'), 'utf8');
export const quietLog = createLogger({ level: 'error', json: true });
process.env.NUXEO_PASSWORD = 'Administrator';
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
  /** A document's properties as the repository holds them. */
  props: (uid: string) => Record<string, unknown>;
  /** A user filling in values on a document, straight in the repository (and its search index). */
  fill: (uid: string, values: Record<string, unknown>) => void;
  /** Every document of the repository and every ERP table, to compare before and after a command. */
  snapshot: () => string;
}

/** A sandbox over real HTTP, set up as the demo does, with a config folder pointing at it. */
export async function sandboxEnv(t: Test, options: { mapping?: string; storage?: Record<string, string> } & Pick<RepositorySandboxOptions, 'users' | 'searchLagMs' | 'maxPageSize'> = {}): Promise<Env> {
  const sandbox = new RepositorySandbox({ users: options.users, searchLagMs: options.searchLagMs, maxPageSize: options.maxPageSize });
  const baseUrl = await sandbox.start();
  t.teardown(() => sandbox.stop());
  const erp = new ErpSandbox();
  const erpUrl = await erp.start();
  t.teardown(() => erp.stop());
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
  return {
    sandbox, erp, baseUrl, dir, location, config, client,
    upload: (folder, name) => uploadFile(baseUrl, `/default-domain/workspaces/${folder}`, name),
    run: (dryRun = false) => runJob({ location, dryRun }, quietLog),
    props: (uid) => (sandbox.store.get(uid) as StoredDoc).properties,
    fill: (uid, values) => {
      // As a user would in the Web UI; searchable at once, so that a test's own edits never wait for the index.
      sandbox.index.sync(() => sandbox.store.update(sandbox.actor(), sandbox.store.get(uid) as StoredDoc, values, NO_BLOBS, {}));
    },
    snapshot: () => JSON.stringify({ documents: [...sandbox.store.all()], erp: erp.tables }),
  };
}
