import { crontabLocation, loadCrontab } from '../config/crontab.js';
import { loadConfig } from '../config/load.js';
import type { ConfigLocation } from '../config/location.js';
import { commandLogger } from '../log.js';
import { EXIT } from '../exit-codes.js';
import { startScheduler } from '../job/schedule/scheduler.js';
import type { StopSignals } from '../signals.js';
import { CRONTAB, LOCATION, location, type Command } from './command.js';

/**
 * `connect2erp schedule`: the scheduled container. Runs the crontab's lines until SIGTERM
 * or Ctrl-C, then passes the signal on to the runs under way, waits for them (each winds
 * down within its grace period) and exits 3.
 */
async function scheduleCommand(
  location: Required<ConfigLocation>,
  crontabOption: string | undefined,
  signals: StopSignals,
): Promise<number> {
  const log = commandLogger();
  const config = loadConfig(location);
  const entries = loadCrontab(crontabLocation(location.configDir, crontabOption), config.tasks, location.jobsDir);
  const taskNames = config.tasks.filter((t) => t.enabled).map((t) => t.name);
  const scheduler = startScheduler({ entries, taskNames, location, log });
  // Later signals find the promise settled: they do not cut short the wind-down of the runs under way.
  const signal = await new Promise<NodeJS.Signals>((resolve) => signals.listen(resolve));
  log.info('schedule stopping', { signal });
  await scheduler.stop();
  return EXIT.interrupted;
}

export const command: Command = {
  exits: { 2: 'configuration or usage error', 3: 'stopped by SIGTERM or Ctrl-C, the runs under way finished' },
  options: { ...LOCATION, crontab: CRONTAB },
  windsDown: true,
  run: ({ strings, signals }) => scheduleCommand(location(strings), strings.crontab, signals),
};
