import { ErpSandbox } from './erp/server.js';
import { RepositorySandbox } from './repository/server.js';
import { applySandboxSettings, type SandboxSettings } from './settings.js';

/** Start the sandbox servers in the foreground until `stopped` settles (the command's SIGTERM or Ctrl-C). */
export async function startSandbox(
  options: { port: number; erpPort: number; dataDir?: string; settings: SandboxSettings },
  print: (line: string) => void,
  stopped: Promise<unknown>,
): Promise<void> {
  const { repository: repo, erp: erpSettings } = options.settings;
  const repository = new RepositorySandbox({
    port: options.port,
    dataDir: options.dataDir,
    searchLagMs: repo.searchLagMs,
    maxPageSize: repo.maxPageSize,
    version: repo.version,
  });
  const url = await repository.start();
  const erp = new ErpSandbox({ port: options.erpPort, customizingFile: erpSettings.customizing });
  const erpUrl = await erp.start().catch(async (error: unknown) => {
    await repository.stop();
    throw error;
  });
  applySandboxSettings(options.settings, repository, erp);
  print(`repository sandbox: ${url} (REST API at ${url}/api/v1, user Administrator/Administrator)`);
  print(
    `ERP sandbox: ${erpUrl}/sap/bc/soap/rfc (client 100, user CONNECTOR/sandbox; tables at ${erpUrl}/sandbox/tables)`,
  );
  print(options.dataDir ? `state kept in ${options.dataDir}` : 'state kept in memory (use --data DIR to keep it)');
  const faults = repo.faults.length + erpSettings.faults.length;
  print(
    `search lag ${repo.searchLagMs} ms, latency ${repo.latencyMs} ms (repository) and ${erpSettings.latencyMs} ms (ERP), ${faults} fault(s) set`,
  );
  await stopped;
  await erp.stop();
  await repository.stop();
}
