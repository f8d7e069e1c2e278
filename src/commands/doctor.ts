import { featureRegistry } from '../../common/nuxeo/schemas.js';
import { deploymentSchedules } from '../config/crontab.js';
import { loadConfig, type Config } from '../config/load.js';
import type { ConfigLocation } from '../config/location.js';
import { EXIT } from '../exit-codes.js';
import { RfcClient } from '../erp/rfc-client.js';
import { RestClient } from '../erp/rest-client.js';
import { commandLogger } from '../log.js';
import { renderChecks, Section, type Check } from '../operator/doctor/check.js';
import { checkContentServer, checkContentServerRepository } from '../operator/doctor/content-server.js';
import { checkErp } from '../operator/doctor/erp.js';
import { checkRepository } from '../operator/doctor/repository.js';
import { checkRest } from '../operator/doctor/rest.js';
import { RepositoryClient } from '../repository/client.js';
import { LOCATION, location, type Command } from './command.js';

/** How long the content server's check waits for its answer. */
const CONTENT_SERVER_TIMEOUT_MS = 10_000;

/**
 * `connect2erp doctor`: read-only checks of the landscape the configuration describes, each a line
 * with what was found and what to do. Nothing is retried: a doctor that waits out back-offs
 * tells less, later.
 */
async function doctor(location: Required<ConfigLocation>, json: boolean): Promise<number> {
  const { code, checks } = await doctorChecks(location);
  const ok = code === EXIT.ok;
  process.stdout.write(json ? `${JSON.stringify({ ok, checks }, null, 2)}\n` : renderChecks(checks));
  return code;
}

/** Every check, in the order doctor prints them, and the exit code they make: 2 when one failed. */
export async function doctorChecks(location: Required<ConfigLocation>): Promise<{ code: number; checks: Check[] }> {
  const configuration = new Section('configuration');
  const config = loadChecked(configuration, location);
  const sections = [configuration, ...(await checkLandscape(config))];
  const checks = sections.flatMap((section) => section.checks);
  return { code: checks.some((check) => check.outcome === 'fail') ? EXIT.configuration : EXIT.ok, checks };
}

/** The configuration as `validate` checks it; a problem stops here, as every command stops on one (exit 2). */
function loadChecked(section: Section, location: Required<ConfigLocation>): Config {
  const config = loadConfig(location, { contentServer: true });
  const entries = deploymentSchedules(location.configDir, undefined, config.tasks, location.jobsDir);
  const schedules = entries === undefined ? 'no crontab' : `${entries.length} schedule(s)`;
  section.pass(
    `valid: ${config.tasks.length} task(s), ${config.erp.systems.length} ERP system(s), ${schedules} (${location.configDir})`,
  );
  return config;
}

async function checkLandscape(config: Config): Promise<Section[]> {
  const log = commandLogger();
  const storage = { ...config.storage, retries: 0 };
  const repository = await checkRepository(new RepositoryClient(storage, log), config, featureRegistry());
  const sections = [repository.section];
  const mapping = repository.mapping?.mapping;
  for (const system of config.erp.systems.filter((s) => s.rfc !== undefined)) {
    const rfcSystem = { ...system, rfc: system.rfc! };
    sections.push(await checkErp(rfcSystem, new RfcClient(rfcSystem, log), config.tasks, mapping));
  }
  // A Rest connection is checked where an enabled task calls it.
  const restTasks = config.tasks.filter((task) => task.enabled && task.function === 'Rest');
  for (const system of config.erp.systems.filter((s) => s.rest !== undefined && restTasks.length > 0)) {
    const restSystem = { ...system, rest: system.rest! };
    sections.push(await checkRest(restSystem, new RestClient(restSystem, log), restTasks, mapping));
  }
  if (config.contentServer !== undefined) {
    // Without the repository, its accounts and folders cannot be told apart from its absence.
    if (repository.signedIn) sections.push(await checkContentServerRepository(config.contentServer, storage, log));
    sections.push(await checkContentServer(config.contentServer, CONTENT_SERVER_TIMEOUT_MS));
  }
  return sections;
}

export const command: Command = {
  exits: {
    0: 'every check passed',
    1: 'an error doctor could not check around',
    2: 'a check failed, or the configuration',
    3: 'interrupted',
  },
  details: 'Read-only: nothing is written to the repository or SAP. Exit 0 when every check passes, 2 when one fails.',
  options: {
    ...LOCATION,
    json: { type: 'boolean', text: 'print the checks as JSON ({ ok, checks: [{ section, outcome, found, advice }] })' },
  },
  run: async ({ strings, flags }) => doctor(location(strings), flags.json),
};
