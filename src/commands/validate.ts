import { existsSync } from 'node:fs';
import { crontabLocation, loadCrontab } from '../config/crontab.js';
import { loadConfig } from '../config/load.js';
import type { ConfigLocation } from '../config/location.js';
import { featureRegistry } from '../nuxeo/schemas.js';
import { EXIT } from '../report/report.js';

/**
 * `connect2erp validate`: everything `run` and `schedule` load before their first request — the
 * configuration, the jobs, the facet declarations that ship with the program and the crontab — so
 * that a file a run would miss is found here, as a configuration error. Contacts no server.
 */
export function validateCommand(location: Required<ConfigLocation>, crontabOption: string | undefined): number {
  const config = loadConfig(location);
  featureRegistry();
  const crontab = crontabLocation(location.configDir, crontabOption);
  // A deployment without the scheduled container may have no crontab; one that is named must exist.
  const schedules = crontabOption !== undefined || existsSync(crontab) ? `, ${loadCrontab(crontab, config.tasks, location.jobsDir).length} schedule(s)` : ', no crontab';
  process.stdout.write(`configuration is valid: ${config.tasks.length} task(s), ${config.erp.systems.length} ERP system(s)${schedules}\n`);
  return EXIT.ok;
}
