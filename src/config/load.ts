import { accessSync, constants, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { ConfigError, type ConfigProblem } from '../../common/errors.js';
import { contentServerSchema, type ContentServerConfig } from './content-server-schema.js';
import type { ConfigLocation } from './location.js';
import { erpSchema, type ErpConfig } from './erp-schema.js';
import { hintedMessage, yamlMessage } from './hints.js';
import { resolveReferences } from './secrets.js';
import { callsAdvice, configAdvice, scheduleAdvice, type Advice } from './advice.js';
import { claimProblems } from './claim-budget.js';
import { storageSchema, type StorageConfig } from './storage-schema.js';
import { taskSchema, type TaskConfig } from './task-schema.js';
import { readTargetProblems } from './read-targets.js';
import { callFor } from './templates.js';

export interface Config {
  storage: StorageConfig;
  erp: ErpConfig;
  tasks: TaskConfig[];
  /** `contentServer.yaml`, when the deployment has one (`connect2erp serve` needs it). */
  contentServer?: ContentServerConfig;
  /** Settings that load but hold runs back, and keys no longer used (advice.ts): warnings. */
  advice: Advice[];
}

/** The content server's file, beside storage.yaml. */
export const CONTENT_SERVER_FILE = 'contentServer.yaml';

/** A bad record key says only "Invalid key in record"; the reason is in its nested issue. Others get a hint when one is likely. */
function issueMessage(issue: z.core.$ZodIssue, schema: z.ZodType, data: unknown): string {
  return issue.code === 'invalid_key'
    ? issue.issues.map((i) => i.message).join('; ')
    : hintedMessage(issue, schema, data);
}

/**
 * Read one YAML file, resolve its secret references (unless `secrets` is false: they stay as
 * written, for a command that reads none of them) and validate it; problems are collected.
 */
function loadFile<T extends z.ZodType>(
  path: string,
  schema: T,
  problems: ConfigProblem[],
  secrets = true,
): z.infer<T> | undefined {
  const file = path;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    problems.push({ file, path: '', message: `cannot read the file (${unreadable(error)})` });
    return undefined;
  }
  const document = parseDocument(text);
  // With prettyErrors (the default) the first line names the line and column.
  for (const error of document.errors) problems.push({ file, path: '', message: yamlMessage(error.message) });
  if (document.errors.length > 0) return undefined;
  let tree: unknown;
  try {
    tree = document.toJS();
  } catch (error) {
    // A lone alias (`schedule: *x`) parses, and only fails here.
    problems.push({ file, path: '', message: yamlMessage((error as Error).message) });
    return undefined;
  }
  const before = problems.length;
  const resolved = secrets ? resolveReferences(tree, file, problems) : tree;
  // A reference that could not be read stands as '': the schema's complaint about that empty value would report the same key twice.
  const unresolved = new Set(problems.slice(before).map((problem) => problem.path));
  // Read once a run: zod's fast path would compile code for each object schema first (new Function), for one use.
  const result = schema.safeParse(resolved ?? {}, { jitless: true });
  if (!result.success) {
    for (const issue of result.error.issues) {
      const key = issue.path.join('.');
      if (!unresolved.has(key)) problems.push({ file, path: key, message: issueMessage(issue, schema, resolved) });
    }
    return undefined;
  }
  checkTlsFiles(result.data, file, problems);
  return result.data;
}

const TLS_FILES = new Set(['caFile', 'certFile', 'keyFile']);

/** A configured CA, certificate or key file must be readable now, not at the first HTTPS call. */
function checkTlsFiles(tree: unknown, file: string, problems: ConfigProblem[], path: string[] = []): void {
  if (tree === null || typeof tree !== 'object') return;
  for (const [key, value] of Object.entries(tree)) {
    if (TLS_FILES.has(key) && typeof value === 'string') {
      try {
        accessSync(value, constants.R_OK);
      } catch {
        problems.push({ file, path: [...path, key].join('.'), message: `cannot read ${value}` });
      }
    } else {
      checkTlsFiles(value, file, problems, [...path, key]);
    }
  }
}

/** Why a file or folder could not be read, as a person reads it. */
const unreadable = (error: unknown): string => {
  const { code } = error as NodeJS.ErrnoException;
  return code === 'ENOENT' ? 'it does not exist' : String(code);
};

function listTaskFiles(jobsDir: string, problems: ConfigProblem[]): string[] {
  try {
    return readdirSync(jobsDir)
      .filter((name) => /\.ya?ml$/.test(name))
      .sort()
      .map((name) => join(jobsDir, name));
  } catch (error) {
    problems.push({
      file: jobsDir,
      path: '',
      message: `cannot read the jobs folder (${unreadable(error)}); it is --jobs DIR, else $CONNECT2ERP_JOBS, else the jobs folder beside the configuration folder`,
    });
    return [];
  }
}

/** True for a folder; false for anything else, or a path that cannot be looked at (ENOTDIR, EACCES). */
function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** A configuration folder that is not there: which one was looked for, and how to name another. */
function missingFolder(configDir: string): ConfigError | undefined {
  if (isFolder(configDir)) return undefined;
  return new ConfigError([
    {
      file: configDir,
      path: '',
      message: 'no configuration folder here; name it with --config DIR or $CONNECT2ERP_CONFIG (else ./config is used)',
    },
  ]);
}

/** The task's call puts a document's address into SAP (a `documentUrl` value). */
const linksByAddress = (task: TaskConfig): boolean =>
  Object.values(callFor(task).call.parameters).some((spec) => spec.documentUrl !== undefined);

/** Checks that span files: names are unique and every task's ERP systems exist with its transport. */
function crossCheck(
  erpFile: string,
  erp: ErpConfig,
  tasks: Array<{ file: string; task: TaskConfig }>,
  problems: ConfigProblem[],
): void {
  const systems = new Map(erp.systems.map((s) => [s.name, s]));
  if (systems.size !== erp.systems.length) {
    problems.push({ file: erpFile, path: 'systems', message: 'system names must be unique' });
  }
  const seen = new Map<string, string>();
  for (const { file, task } of tasks) {
    const other = seen.get(task.name);
    if (other !== undefined)
      problems.push({ file, path: 'name', message: `task name "${task.name}" is also used by ${other}` });
    seen.set(task.name, file);
    const names = task.systems ?? [...systems.keys()];
    names.forEach((name, i) => {
      const system = systems.get(name);
      const path = task.systems ? `systems.${i}` : 'function';
      if (system === undefined) {
        problems.push({ file, path, message: `ERP system "${name}" is not defined in erpHttp.yaml` });
      } else if ((task.function === 'RFC' ? system.rfc : system.rest) === undefined) {
        problems.push({
          file,
          path,
          message: `ERP system "${name}" has no ${task.function === 'RFC' ? 'rfc' : 'rest'} connection`,
        });
      } else if (system.documentLinks === undefined && linksByAddress(task)) {
        problems.push({
          file,
          path,
          message: `the task links by address (documentUrl), and ERP system "${name}" has no documentLinks in erpHttp.yaml to make one`,
        });
      }
    });
  }
}

/** Every connection names an ERP system (spec §2.3: `source` matches a name of erpHttp.yaml); ids are unique. */
function crossCheckContentServer(
  file: string,
  contentServer: ContentServerConfig,
  erp: ErpConfig,
  problems: ConfigProblem[],
): void {
  const systems = new Map(erp.systems.map((s) => [s.name, s]));
  const names = new Set<string>();
  contentServer.connections.forEach((connection, i) => {
    const system = systems.get(connection.name);
    if (system === undefined)
      problems.push({
        file,
        path: `connections.${i}.name`,
        message: `"${connection.name}" is not an ERP system of erpHttp.yaml (documents carry it in erpHttpContent:source)`,
      });
    const links = system?.documentLinks;
    if (links?.via === 'serve' && !(connection.documentLinks?.keys ?? []).includes(links.key))
      problems.push({
        file,
        path: `connections.${i}.documentLinks.keys`,
        message: `the job signs the links of ${connection.name} with documentLinks.key of erpHttp.yaml, which is not among these keys: SAP users' links would not open`,
      });
    if (names.has(connection.name))
      problems.push({ file, path: `connections.${i}.name`, message: 'connection names must be unique' });
    names.add(connection.name);
    const repositories = new Set<string>();
    connection.contentRepositories.forEach((repository, j) => {
      if (repositories.has(repository.contRep))
        problems.push({
          file,
          path: `connections.${i}.contentRepositories.${j}.contRep`,
          message: `content repository ${repository.contRep} is listed twice`,
        });
      repositories.add(repository.contRep);
    });
  });
}

/** The tasks a command works on: all, or the one named; an unknown name is a configuration error. */
export function selectTasks(tasks: TaskConfig[], name: string | undefined, jobsDir: string): TaskConfig[] {
  const selected = tasks.filter((t) => name === undefined || t.name === name);
  if (name !== undefined && selected.length === 0)
    throw new ConfigError([
      {
        file: jobsDir,
        path: '',
        message: `no task named "${name}"; the tasks: ${tasks.map((t) => t.name).join(', ')}`,
      },
    ]);
  return selected;
}

/**
 * Load and validate `storage.yaml`, `erpHttp.yaml`, `jobs/*.yaml` and, when asked for and
 * present, `contentServer.yaml`; with `schedules`, the advice includes tasks that start together;
 * `pods` (default 1) is how many runs call SAP at once.
 * Contacts no server.
 * Throws one ConfigError listing every problem with its file and key path.
 */
export function loadConfig(
  location: Required<ConfigLocation>,
  parts: { contentServer?: boolean; schedules?: boolean; pods?: number } = {},
): Config {
  const missing = missingFolder(location.configDir);
  if (missing !== undefined) throw missing;
  const problems: ConfigProblem[] = [];
  const storagePath = join(location.configDir, 'storage.yaml');
  const storage = loadFile(storagePath, storageSchema, problems);
  const erpPath = join(location.configDir, 'erpHttp.yaml');
  const erp = loadFile(erpPath, erpSchema, problems);
  const tasks: Array<{ file: string; task: TaskConfig }> = [];
  for (const path of listTaskFiles(location.jobsDir, problems)) {
    const task = loadFile(path, taskSchema, problems);
    if (task) tasks.push({ file: path, task });
    for (const problem of task?.read === undefined ? [] : readTargetProblems(task.read))
      problems.push({ file: path, path: ['read', ...problem.path].join('.'), message: problem.message });
  }
  const contentServerPath = join(location.configDir, CONTENT_SERVER_FILE);
  // Only the commands that use it read it: a run needs none of the content server's secrets.
  const contentServer =
    parts.contentServer === true && existsSync(contentServerPath)
      ? loadFile(contentServerPath, contentServerSchema, problems)
      : undefined;
  if (erp) crossCheck(erpPath, erp, tasks, problems);
  if (erp) problems.push(...claimProblems(erp, tasks));
  if (erp && contentServer) crossCheckContentServer(contentServerPath, contentServer, erp, problems);
  if (problems.length > 0 || !storage || !erp) throw new ConfigError(problems);
  const advice = configAdvice({ file: storagePath, config: storage }, erp, tasks);
  advice.push(...callsAdvice({ file: erpPath, config: erp }, tasks, parts.pods ?? 1));
  if (parts.schedules === true) advice.push(...scheduleAdvice(tasks));
  return { storage, erp, tasks: tasks.map((t) => t.task), contentServer, advice };
}

/**
 * What `serve` and `certs` read: storage.yaml (the repository) and contentServer.yaml, its
 * connections checked against erpHttp.yaml's system names. No jobs folder and none of the SAP
 * systems' secrets: neither command uses them. `contentServer` is undefined when the file is absent.
 */
export function loadContentServerConfig(location: Required<ConfigLocation>): Pick<Config, 'storage' | 'contentServer'> {
  const missing = missingFolder(location.configDir);
  if (missing !== undefined) throw missing;
  const problems: ConfigProblem[] = [];
  const storage = loadFile(join(location.configDir, 'storage.yaml'), storageSchema, problems);
  const contentServerPath = join(location.configDir, CONTENT_SERVER_FILE);
  const contentServer = existsSync(contentServerPath)
    ? loadFile(contentServerPath, contentServerSchema, problems)
    : undefined;
  // Read for its systems' names only: the SAP passwords are the job's, not serve's or certs'.
  const erp = loadFile(join(location.configDir, 'erpHttp.yaml'), erpSchema, problems, false);
  if (erp && contentServer) crossCheckContentServer(contentServerPath, contentServer, erp, problems);
  if (problems.length > 0 || !storage) throw new ConfigError(problems);
  return { storage, contentServer };
}
