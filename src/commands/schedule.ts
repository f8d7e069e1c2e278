import { once } from 'node:events';
import { loadCrontab } from '../config/crontab.js';
import { loadConfig, type ConfigLocation } from '../config/load.js';
import type { Logger } from '../log.js';
import { EXIT } from '../report/report.js';
import { startScheduler } from '../schedule/scheduler.js';

/**
 * `connect2erp schedule`: the scheduled container. Runs the crontab's lines until SIGTERM
 * or Ctrl-C, then passes the signal on to the runs under way, waits for them (each winds
 * down within its grace period) and exits 3.
 */
export async function scheduleCommand(location: Required<ConfigLocation>, crontab: string, log: Logger): Promise<number> {
  const config = loadConfig(location);
  const entries = loadCrontab(crontab, config.tasks, location.jobsDir);
  const taskNames = config.tasks.filter((t) => t.enabled).map((t) => t.name);
  const scheduler = startScheduler({ entries, taskNames, location, log });
  const stopped = new AbortController();
  const signal = await Promise.race([once(process, 'SIGTERM', stopped), once(process, 'SIGINT', stopped)]);
  stopped.abort();
  log.info('schedule stopping', { signal: signal[0] });
  await scheduler.stop();
  return EXIT.interrupted;
}
