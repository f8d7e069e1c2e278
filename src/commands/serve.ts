import { join } from 'node:path';
import { ConfigError } from '../../common/errors.js';
import { CONTENT_SERVER_FILE, loadContentServerConfig } from '../config/load.js';
import type { ConfigLocation } from '../config/location.js';
import { EXIT } from '../exit-codes.js';
import { commandLogger } from '../log.js';
import { firstOnly, type StopSignals } from '../signals.js';
import { programVersion } from '../version.js';
import { CONFIG_ONLY, location, type Command } from './command.js';

/**
 * `connect2erp serve`: the ArchiveLink content server, until SIGTERM or Ctrl-C; then readiness
 * answers 503 for drainSeconds (a second signal cuts it short), the listener closes, requests
 * under way finish, and the process exits 0 (a server stopped as asked).
 */
async function serveCommand(location: Required<ConfigLocation>, signals: StopSignals): Promise<number> {
  const config = loadContentServerConfig(location);
  const file = join(location.configDir, CONTENT_SERVER_FILE);
  if (config.contentServer === undefined)
    throw new ConfigError([{ file, path: '', message: 'connect2erp serve needs this file (docs/content-server.md)' }]);
  const server = config.contentServer;
  const log = commandLogger();
  // Loaded here, not with the command table: every other command (a run each minute) would pay for it.
  const { ContentServer } = await import('../content-server/server.js');
  const contentServer = new ContentServer({ storage: config.storage, server, version: programVersion() }, log);
  await contentServer.start();
  const signal = await new Promise<NodeJS.Signals>((resolve) => signals.listen(resolve));
  log.info('content server stopping', { signal, drainSeconds: server.drainSeconds });
  const cut = new AbortController();
  signals.listen(
    firstOnly((again) => {
      log.warn('content server closing now', { signal: again });
      cut.abort();
    }),
  );
  await contentServer.stop(server.drainSeconds * 1000, cut.signal);
  return EXIT.ok;
}

export const command: Command = {
  exits: {
    0: 'stopped by SIGTERM, requests drained',
    1: 'could not start (the port, the repository)',
    2: 'configuration or usage error',
  },
  details:
    'Serves <pathPrefix>/<connection>?<command>&… as OAC0 is set up, /healthz and /readyz. On SIGTERM or\nCtrl-C, readiness answers 503 for drainSeconds (a second signal ends that), requests under way\nfinish, exit code 0.',
  options: { ...CONFIG_ONLY },
  windsDown: true,
  run: ({ strings, signals }) => serveCommand(location(strings), signals),
};
