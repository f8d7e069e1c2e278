import type { ConfigLocation } from '../config/location.js';
import { EXIT } from '../exit-codes.js';
import { operatorSetUp } from '../operator/set-up.js';
import { renderStatus, taskStatus } from '../operator/status.js';
import { LOCATION, location, TASK, type Command, OPERATOR_EXITS } from './command.js';

/**
 * `connect2erp status`: documents per status per task, and the failures with their messages. Its
 * searches go out at once; with the repository down, the error is the one thing said, not after a
 * warning per search tried again.
 */
async function statusCommand(location: Required<ConfigLocation>, task: string | undefined): Promise<number> {
  const { client, tasks } = operatorSetUp(location, task, 'error');
  process.stdout.write(`${renderStatus(await taskStatus(tasks, client))}\n`);
  return EXIT.ok;
}

export const command: Command = {
  exits: OPERATOR_EXITS,
  options: { task: TASK, ...LOCATION },
  run: ({ strings }) => statusCommand(location(strings), strings.task),
};
