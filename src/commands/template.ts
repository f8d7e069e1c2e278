import { USE_CASES, type UseCase } from '../config/task-schema.js';
import { EXIT } from '../report/report.js';
import { templateYaml } from '../tasks/templates.js';

const isUseCase = (text: string | undefined): text is UseCase => USE_CASES.includes(text as UseCase);

/** `connect2erp template USE_CASE RFC|Rest`: the built-in call as YAML, to adapt in a task file. */
export function templateCommand(useCase: string | undefined, transport: string | undefined): number {
  if (!isUseCase(useCase) || (transport !== 'RFC' && transport !== 'Rest')) {
    process.stderr.write(`usage: connect2erp template ${USE_CASES.join('|')} RFC|Rest\n`);
    return EXIT.configuration;
  }
  process.stdout.write(templateYaml(useCase, transport));
  return EXIT.ok;
}
