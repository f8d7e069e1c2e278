import { once } from 'node:events';
import { RepositorySandbox } from './repository/server.js';

/** Start the sandbox servers in the foreground until SIGINT or SIGTERM. */
export async function startSandbox(options: { port: number; dataDir?: string }, print: (line: string) => void): Promise<void> {
  const repository = new RepositorySandbox({ port: options.port, dataDir: options.dataDir });
  const url = await repository.start();
  print(`repository sandbox: ${url} (REST API at ${url}/api/v1, user Administrator/Administrator)`);
  print(options.dataDir ? `state kept in ${options.dataDir}` : 'state kept in memory (use --data DIR to keep it)');
  await Promise.race([once(process, 'SIGINT'), once(process, 'SIGTERM')]);
  await repository.stop();
}
