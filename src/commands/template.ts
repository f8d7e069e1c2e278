import { EXIT } from '../exit-codes.js';
import { TEMPLATE_NAMES, templateYaml, type TemplateName } from '../config/templates.js';
import type { Command } from './command.js';

const isTemplate = (text: string | undefined): text is TemplateName => TEMPLATE_NAMES.includes(text as TemplateName);
const TRANSPORTS = { rfc: 'RFC', rest: 'Rest' } as const;

/**
 * `connect2erp template NAME RFC|Rest`: a built-in call as YAML, to adapt in a task file. The
 * arguments are taken in any case (`Link rest`), as people type them.
 */
function templateCommand(nameGiven: string | undefined, transportGiven: string | undefined): number {
  const name = nameGiven?.toLowerCase();
  const key = String(transportGiven).toLowerCase();
  const transport = Object.hasOwn(TRANSPORTS, key) ? TRANSPORTS[key as keyof typeof TRANSPORTS] : undefined;
  if (!isTemplate(name) || transport === undefined) {
    process.stderr.write(`usage: connect2erp template ${TEMPLATE_NAMES.join('|')} RFC|Rest\n`);
    return EXIT.configuration;
  }
  const yaml = templateYaml(name, transport);
  if (yaml === undefined) {
    process.stderr.write(
      `connect2erp template: no ${transport} template for ${name}: SAP offers no standard REST service for it; declare the call under rest: in the task file, or use RFC\n`,
    );
    return EXIT.configuration;
  }
  process.stdout.write(yaml);
  return EXIT.ok;
}

export const command: Command = {
  exits: { 0: 'printed', 2: 'no such template' },
  args: `${TEMPLATE_NAMES.join('|')} RFC|Rest`,
  options: {},
  run: async ({ positionals }) => templateCommand(positionals[1], positionals[2]),
};
