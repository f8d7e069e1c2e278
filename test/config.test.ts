import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { configLocation } from '../src/config/location.js';
import { loadConfig } from '../src/config/load.js';
import { ConfigError } from '../common/errors.js';

process.env.NUXEO_PASSWORD = 'secret-nuxeo';
process.env.SAP_PASSWORD = 'secret-sap';

function configDir(files: Record<string, string>): ReturnType<typeof configLocation> {
  const root = mkdtempSync(join(tmpdir(), 'c2e-config-'));
  mkdirSync(join(root, 'config'));
  mkdirSync(join(root, 'jobs'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(root, name), text);
  return configLocation({ config: join(root, 'config') });
}

const STORAGE =
  'url: http://127.0.0.1:8080/nuxeo\nauth: {type: basic, username: Administrator, password: "${env:NUXEO_PASSWORD}"}\nadminPath: /default-domain/workspaces/admin\n';
const ERP =
  'systems:\n  - name: S4H\n    client: "100"\n    rfc: {url: "http://127.0.0.1:8081/sap/bc/soap/rfc", auth: {username: U, password: "${env:SAP_PASSWORD}"}}\n';
const TASK = 'name: link\nuseCase: link\nfunction: RFC\nschedule: "*/5 * * * *"\n';

function problems(location: ReturnType<typeof configLocation>): string[] {
  try {
    loadConfig(location);
  } catch (error) {
    if (error instanceof ConfigError)
      return error.problems.map((p) => `${p.file.split('/').slice(-2).join('/')}|${p.path}|${p.message}`);
    throw error;
  }
  return [];
}

t.test('the shipped configuration is valid', async (t) => {
  const config = loadConfig(configLocation({ config: join(import.meta.dirname, '..', 'config') }));
  t.same(config.tasks.map((task) => task.useCase).sort(), ['barcode', 'link', 'workflow']);
  t.equal(
    config.storage.auth.type === 'basic' && config.storage.auth.password,
    'secret-nuxeo',
    'password from ${env:…}',
  );
  t.equal(config.storage.tls.rejectUnauthorized, true, 'TLS verification on by default');
});

t.test('a secret can come from a mounted file', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'c2e-secret-'));
  writeFileSync(join(root, 'token'), 'file-token-value\n');
  const location = configDir({
    'config/storage.yaml': `url: https://nuxeo.example.com/nuxeo\nauth: {type: token, token: "\${file:${join(root, 'token')}}"}\nadminPath: /x\n`,
    'config/erpHttp.yaml': ERP,
    'jobs/link.yaml': TASK,
  });
  const config = loadConfig(location);
  t.same(
    config.storage.auth,
    { type: 'token', token: 'file-token-value' },
    'trailing newline of the mounted file dropped',
  );
});

t.test('every problem is reported at once, with file and key path', async (t) => {
  const location = configDir({
    'config/storage.yaml':
      'url: ftp://nope\nauth: {type: basic, username: A, password: "${env:C2E_UNSET_VARIABLE}"}\nadminPath: relative\npageSize: 5000\ntypo: 1\n',
    'config/erpHttp.yaml': 'systems:\n  - name: S4H\n    client: "1"\n',
    'jobs/link.yaml': 'name: Link!\nuseCase: linking\nfunction: RFC\nschedule: "every minute"\nfilter: "dc:title = "\n',
    'jobs/broken.yaml': 'name: [unclosed\n',
  });
  const found = problems(location);
  const expected = [
    'config/storage.yaml|auth.password|environment variable C2E_UNSET_VARIABLE is not set',
    'config/storage.yaml|url|must be an http:// or https:// URL',
    'config/storage.yaml|adminPath|must be an absolute repository path',
    'config/storage.yaml|pageSize|',
    'config/storage.yaml||',
    'config/erpHttp.yaml|systems.0.client|must be a three-digit SAP client, e.g. "100"',
    'config/erpHttp.yaml|systems.0|needs an rfc or a rest connection',
    'jobs/link.yaml|name|lower-case letters, digits and dashes',
    'jobs/link.yaml|useCase|',
    'jobs/link.yaml|schedule|not a cron expression',
    'jobs/link.yaml|filter|not an NXQL condition',
    'jobs/broken.yaml||Flow sequence in block collection must be sufficiently indented and end with a ] at line 2, column 1:',
  ];
  for (const prefix of expected)
    t.ok(
      found.some((p) => p.startsWith(prefix)),
      `reports ${prefix}`,
    );
  t.ok(
    found.some((p) => p.includes('typo')),
    'an unknown key is named',
  );
  t.same(
    found.filter((p) => p.startsWith('config/storage.yaml|auth.password|')),
    [expected[0]],
    'an unset variable is one problem, not also an empty password',
  );
});

t.test('cross-file references are checked', async (t) => {
  const location = configDir({
    'config/storage.yaml': STORAGE,
    'config/erpHttp.yaml': ERP,
    'jobs/a.yaml': `${TASK}systems: [S4H, ECC]\n`,
    'jobs/b.yaml': TASK.replace('function: RFC', 'function: Rest'),
  });
  const found = problems(location);
  t.equal(found.length, 3);
  t.equal(found[0], 'jobs/a.yaml|systems.1|ERP system "ECC" is not defined in erpHttp.yaml');
  t.match(found[1], /^jobs\/b\.yaml\|name\|task name "link" is also used by .*jobs\/a\.yaml$/);
  t.equal(found[2], 'jobs/b.yaml|function|ERP system "S4H" has no rest connection');
});

t.test('missing files and unreadable CA files are named', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'c2e-empty-'));
  t.same(
    problems(configLocation({ config: join(root, 'config') })).map((p) => p.split('|').slice(1).join('|')),
    ['|cannot read the file', '|cannot read the file', '|cannot read the jobs folder'],
  );
  const location = configDir({
    'config/storage.yaml': `${STORAGE}tls: {caFile: /nonexistent/ca.pem}\n`,
    'config/erpHttp.yaml': ERP,
    'jobs/link.yaml': TASK,
  });
  t.same(problems(location), ['config/storage.yaml|tls.caFile|cannot read /nonexistent/ca.pem']);
});

t.test('duplicate systems, a transport the system lacks, a missing secret file and an empty file', async (t) => {
  const restOnly =
    '  - name: REST\n    client: "100"\n    rest: {url: "https://s4.example.com", auth: {username: U, password: p}}\n';
  const location = configDir({
    'config/storage.yaml': `url: https://n.example.com/nuxeo\nauth: {type: token, token: "\${file:/nonexistent/token}"}\nadminPath: /x\n`,
    'config/erpHttp.yaml': `${ERP}${ERP.replace('systems:\n', '')}${restOnly}`,
    'jobs/link.yaml': `${TASK}systems: [REST]\n`,
    'jobs/empty.yaml': '',
  });
  const found = problems(location);
  t.same(
    found.filter((p) => p.startsWith('config/storage.yaml|')),
    ['config/storage.yaml|auth.token|cannot read file /nonexistent/token'],
    'the secret file is named, once',
  );
  t.ok(found.includes('config/erpHttp.yaml|systems|system names must be unique'));
  t.ok(found.includes('jobs/link.yaml|systems.0|ERP system "REST" has no rfc connection'));
  t.ok(
    found.some((p) => p.startsWith('jobs/empty.yaml|name|')),
    'an empty file is checked like an empty object',
  );
});
