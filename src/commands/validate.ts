import { deploymentSchedules } from '../config/crontab.js';
import { loadConfig } from '../config/load.js';
import { podsOf } from '../config/pods.js';
import type { ConfigLocation } from '../config/location.js';
import { featureRegistry } from '../../common/nuxeo/schemas.js';
import { formatProblem } from '../../common/errors.js';
import { EXIT } from '../exit-codes.js';
import { parseMapping } from '../job/intake/mapping-file.js';
import { mappingRules } from '../job/intake/mapping-schema.js';
import { callFor } from '../config/templates.js';
import { readLocalMapping } from '../operator/mapping.js';
import { CRONTAB, LOCATION, location, type Command } from './command.js';

/**
 * `connect2erp validate`: everything `run` and `schedule` load before their first request — the
 * configuration, the jobs, the facet declarations that ship with the program and the crontab — so
 * that a file a run would miss is found here, as a configuration error. Contacts no server.
 */
function validateCommand(
  location: Required<ConfigLocation>,
  crontabOption: string | undefined,
  mappingFile: string | undefined,
  podsOption: string | undefined,
): number {
  const config = loadConfig(location, { contentServer: true, schedules: true, pods: podsOf(podsOption) });
  const rules = mappingRules(config, featureRegistry());
  const mapping =
    mappingFile === undefined ? undefined : parseMapping(readLocalMapping(mappingFile), mappingFile, rules);
  const entries = deploymentSchedules(location.configDir, crontabOption, config.tasks, location.jobsDir);
  const schedules = entries === undefined ? ', no crontab' : `, ${entries.length} schedule(s)`;
  const server =
    config.contentServer === undefined
      ? ', no content server'
      : `, content server with ${config.contentServer.connections.length} connection(s)`;
  process.stdout.write(
    `configuration is valid: ${config.tasks.length} task(s), ${config.erp.systems.length} ERP system(s)${schedules}${server}\n`,
  );
  if (mapping !== undefined)
    process.stdout.write(`mapping file ${mappingFile} is valid: ${mapping.mapping.length} folder(s) mapped\n`);
  for (const advice of config.advice) process.stdout.write(`warning: ${formatProblem(advice)}\n`);
  for (const task of config.tasks) {
    const { call } = callFor(task);
    if ('function' in call && call.function === 'ARCHIV_PROCESS_RFCINPUT') {
      process.stdout.write(
        `note: task ${task.name} calls ARCHIV_PROCESS_RFCINPUT, which takes no agent: SAP gives the work item to the agents its presetting names for the document type, and erpOTyp and erpObjId are not sent. For the document's own agent, declare SAP_WAPI_START_WORKFLOW (connect2erp template workflow-to-agent RFC).\n`,
      );
    }
  }
  return EXIT.ok;
}

export const command: Command = {
  exits: {
    0: 'valid (warnings may be printed)',
    2: 'a problem in the configuration, the jobs, the crontab or the mapping file',
    3: 'interrupted',
  },
  options: {
    ...LOCATION,
    crontab: CRONTAB,
    mapping: { type: 'string', value: 'FILE', text: 'also check this local mapping file, as a run would' },
    pods: {
      type: 'string',
      value: 'N',
      text: "runs calling SAP at once, to check against each system's agreedCalls (default: $CONNECT2ERP_PODS or 1)",
    },
  },
  run: async ({ strings }) => validateCommand(location(strings), strings.crontab, strings.mapping, strings.pods),
};
