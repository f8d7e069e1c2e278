import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { ConfigError } from '../common/errors.js';
import { loadConfig } from '../src/config/load.js';
import { configLocation } from '../src/config/location.js';
import { PROJECT } from './helpers/run-cli.js';

/** Where a user's YAML trips, the problem says what they most likely meant. */

process.env.NUXEO_PASSWORD = 'x';
process.env.SAP_PASSWORD = 'x';

/** The shipped configuration with `edit` applied to one file; the problems loading it gives. */
function problems(file: string, edit: (text: string) => string): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'c2e-hints-'));
  cpSync(join(PROJECT, 'config'), join(dir, 'config'), { recursive: true });
  cpSync(join(PROJECT, 'jobs'), join(dir, 'jobs'), { recursive: true });
  const path = join(dir, file);
  writeFileSync(path, edit(readFileSync(path, 'utf8')));
  try {
    loadConfig(configLocation({ config: join(dir, 'config') }));
    return [];
  } catch (error) {
    return (error as ConfigError).problems.map((p) => `${p.path}: ${p.message}`);
  }
}

t.test('a misspelt key: the key it is closest to, at any depth, when one is close', async (t) => {
  t.same(
    problems('config/storage.yaml', (s) => s.replace('retryDelayMs:', 'retryDelay:')),
    [': unknown key "retryDelay" (did you mean retryDelayMs?)'],
  );
  t.same(
    problems('config/erpHttp.yaml', (s) => s.replace('dateFormat:', 'dateformat:')),
    ['systems.0.rfc: unknown key "dateformat" (did you mean dateFormat?)'],
  );
  t.same(
    problems('config/storage.yaml', (s) => `${s}colour: blue\n`),
    [': unknown key "colour"'],
    'no guess when none is close',
  );
});

t.test('a number or a yes where text is needed: quote it', async (t) => {
  t.match(
    problems('config/erpHttp.yaml', (s) => s.replace("client: '100'", 'client: 100')),
    [/^systems\.0\.client: .*\(YAML read the value as a number: quote it\)$/],
  );
});

t.test('a unit on a millisecond field: the number it means', async (t) => {
  t.match(
    problems('config/storage.yaml', (s) => s.replace('retryDelayMs: 1000', 'retryDelayMs: 10s')),
    [/^retryDelayMs: .*\(retryDelayMs is a number of milliseconds, without a unit: 10000\)$/],
  );
});

t.test("the shell's ${NAME} or $NAME for a variable the environment has, never repeating the value", async (t) => {
  const hint =
    "auth.password: refers to the environment variable NUXEO_PASSWORD the shell's way, which is not read: write ${env:NUXEO_PASSWORD}";
  t.same(
    problems('config/storage.yaml', (s) => s.replace('${env:NUXEO_PASSWORD}', '${NUXEO_PASSWORD}')),
    [hint],
  );
  t.same(
    problems('config/storage.yaml', (s) => s.replace('${env:NUXEO_PASSWORD}', '$NUXEO_PASSWORD')),
    [hint],
  );
  t.same(
    problems('config/storage.yaml', (s) => s.replace('${env:NUXEO_PASSWORD}', "'$S3cret${Ab_9}'")),
    [],
    'a literal password that only looks like one is taken as it is',
  );
});

t.test('an unquoted cron expression, which YAML reads as an alias: quote it', async (t) => {
  const alias = problems('jobs/link.yaml', (s) => s.replace("schedule: '*/5 * * * *'", 'schedule: */5 * * * *'));
  t.ok(alias.length > 0);
  t.ok(
    alias.every((p) => p.includes("quote it, as in schedule: '*/5 * * * *'")),
    alias.join('\n'),
  );
  // A lone alias parses, and only fails when the tree is built: a problem too, not a crash.
  t.match(
    problems('jobs/link.yaml', (s) => s.replace("schedule: '*/5 * * * *'", 'schedule: *x')),
    [/^: Unresolved alias .*\(a value starting with \* is read as a YAML alias: quote it/],
  );
});

t.test('in a union and in a record of call parameters too; no hint where nothing is likely', async (t) => {
  t.ok(
    problems('config/storage.yaml', (s) => s.replace('  username: Administrator', '  usename: Administrator')).includes(
      'auth: unknown key "usename" (did you mean username?)',
    ),
  );
  const call = readFileSync(join(PROJECT, 'test', 'fixtures', 'link-call.yaml'), 'utf8');
  t.ok(
    problems(
      'jobs/link.yaml',
      (s) =>
        `${s}${call.replace('property: erpCreateALDocument:erpObjectId', 'propety: erpCreateALDocument:erpObjectId')}`,
    ).includes('rfc.parameters.OBJECT_ID: unknown key "propety" (did you mean property?)'),
  );
  t.same(
    problems('config/storage.yaml', (s) => s.replace('  connectMs: 5000', '  connectMS: 5000')),
    ['timeouts: unknown key "connectMS" (did you mean connectMs?)'],
  );
  const plain = [
    problems('config/storage.yaml', (s) => s.replace('retryDelayMs: 1000', 'retryDelayMs: soon')),
    problems('config/storage.yaml', (s) => s.replace('retryDelayMs: 1000', 'retryDelayMs: true')),
    problems('config/storage.yaml', (s) => s.replace('pageSize: 100', "pageSize: '100'")),
    problems('jobs/link.yaml', (s) => s.replace('enabled: true', "enabled: 'yes'")),
    problems('config/storage.yaml', (s) => s.replace(/^url: .*$/m, 'url:')),
  ];
  for (const found of plain)
    t.notMatch(found.join('\n'), /\(.*(quote it|without a unit|did you mean)/, found.join('\n'));
  t.ok(plain.every((found) => found.length === 1));
  t.match(
    problems('config/storage.yaml', (s) => `${s}  bad: indentation\n bad\n`),
    [/^: /],
  );
});
