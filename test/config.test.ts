import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { configLocation } from '../src/config/location.js';
import { loadConfig } from '../src/config/load.js';
import { podsOf } from '../src/config/pods.js';
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
  t.same(config.advice, [], 'and sized so that nothing holds a run back');
  t.same(
    loadConfig(configLocation({ config: join(import.meta.dirname, '..', 'config') }), { schedules: true }).advice,
    [],
    'its tasks start at different minutes',
  );
});

t.test(
  'validate warns about tasks whose runs start at the same minutes: both would label the same documents',
  async (t) => {
    const location = configDir({
      'config/storage.yaml': STORAGE,
      'config/erpHttp.yaml': ERP,
      'jobs/link.yaml': TASK,
      'jobs/workflow.yaml': 'name: workflow\nuseCase: workflow\nfunction: RFC\nschedule: "0 * * * *"\n',
      'jobs/barcode.yaml': 'name: barcode\nuseCase: barcode\nfunction: RFC\nschedule: "*/5 * * * *"\nenabled: false\n',
    });
    t.same(loadConfig(location).advice, [], 'only validate asks: a run does not work out a day of schedules');
    t.same(
      loadConfig(location, { schedules: true }).advice.map(
        (p) => `${p.file.split('/').slice(-2).join('/')}|${p.path}|${p.message}`,
      ),
      [
        "jobs/workflow.yaml|schedule|starts at the same minutes as task link (168 times a week): each run labels new documents before its task, so both would label the same ones at once; shift one by a minute or two (e.g. '2-59/5 * * * *' beside '*/5 * * * *')",
      ],
      'a disabled task starts nothing',
    );
  },
);

t.test('settings that hold a run back, and keys no longer used, are warnings with file and key', async (t) => {
  const advice = (files: Record<string, string>) =>
    loadConfig(configDir(files)).advice.map((p) => `${p.file.split('/').slice(-2).join('/')}|${p.path}|${p.message}`);
  const twoSystems = `${ERP}    maxConcurrentCalls: 32\n  - name: ECC\n    client: "200"\n    rfc: {url: "http://127.0.0.1:8081/sap/bc/soap/rfc", auth: {username: U, password: x}}\n`;
  t.same(
    advice({
      'config/storage.yaml': STORAGE,
      'config/erpHttp.yaml': twoSystems,
      'jobs/link.yaml': `${TASK}batchSize: 10\nconcurrency: 2\n`,
      'jobs/barcode.yaml': 'name: barcode\nuseCase: barcode\nfunction: RFC\nschedule: "* * * * *"\nbatchSize: 2\n',
      'jobs/workflow.yaml':
        'name: workflow\nuseCase: workflow\nfunction: RFC\nschedule: "* * * * *"\nbatchSize: 1\nenabled: false\n',
    }),
    [
      'jobs/link.yaml|concurrency|no longer used: a task reads ahead as far as the maxConcurrentCalls of its ERP systems need (erpHttp.yaml); remove the key',
      'jobs/link.yaml|batchSize|pages of 10 documents keep the 40 calls of ERP systems "S4H", "ECC" busy only while the repository answers a search 3 times as fast as SAP a call: raise it to 40 or more',
      "config/storage.yaml|maxConcurrentRequests|8 requests in flight keep the 40 calls of task barcode busy only while the repository answers 9 times as fast as SAP (each call needs its document's claim and outcome written): raise it to 40",
    ],
    'a task reads ahead for the calls of all its systems (ECC has the 8 a default gives); the bar codes send a page in one call, so small pages hold them back less, but their claims need requests as much (the first task with the most calls is named); the disabled task sends nothing',
  );
  t.same(
    advice({
      'config/storage.yaml': `${STORAGE}maxConcurrentRequests: 24\n`,
      'config/erpHttp.yaml': twoSystems,
      'jobs/link.yaml': `${TASK}batchSize: 16\nsystems: [S4H]\n`,
      'jobs/barcode.yaml':
        'name: barcode\nuseCase: barcode\nfunction: RFC\nschedule: "* * * * *"\nsystems: [ECC]\nbatchSize: 2\nrfc:\n  function: Z_BARCODE_ONE\n  parameters:\n    BARCODE: {property: "erpBarcode:barcode"}\n  result: {erpReference: "{BARCODE}"}\n',
    }),
    [
      'jobs/barcode.yaml|batchSize|pages of 2 documents keep the 8 calls of ERP system "ECC" busy only while the repository answers a search 3 times as fast as SAP a call: raise it to 8 or more',
      "config/storage.yaml|maxConcurrentRequests|24 requests in flight keep the 32 calls of task link busy only while the repository answers 1.7 times as fast as SAP (each call needs its document's claim and outcome written): raise it to 32",
    ],
    "a task's own call of one document at a time is held back by small pages like the built-in ones; half the calls in documents per page is enough",
  );
});

t.test("the pods running at once × a system's calls are checked against what its SAP team agreed", async (t) => {
  const warnings = (erp: string, pods?: number) =>
    loadConfig(configDir({ 'config/storage.yaml': STORAGE, 'config/erpHttp.yaml': erp, 'jobs/link.yaml': TASK }), {
      pods,
    })
      .advice.filter((p) => p.path.startsWith('systems.'))
      .map((p) => `${p.file.split('/').slice(-2).join('/')}|${p.path}|${p.task}|${p.message}`);
  t.same(warnings(ERP), [], 'one run of the calls agreed for the connector');
  t.same(
    warnings(ERP, 4),
    [
      'config/erpHttp.yaml|systems.0.maxConcurrentCalls|undefined|4 pods at once × 8 calls make 32 calls in flight to ERP system "S4H", more than the 8 its SAP team agreed to (maxConcurrentCalls, as the README has it agreed for the connector); if the SAP team agreed to more for all pods together, set agreedCalls to that: lower it to 2',
    ],
    'without agreedCalls, maxConcurrentCalls is what was agreed: four pods make four times that; about the deployment, not a task',
  );
  t.same(warnings(`${ERP}    agreedCalls: 32\n`, 4), [], 'four pods of 8 calls within the 32 agreed');
  const unused = `${ERP}  - name: ECC\n    client: "200"\n    agreedCalls: 2\n    rfc: {url: "http://127.0.0.1:8081/sap/bc/soap/rfc", auth: {username: U, password: x}}\n`;
  t.same(
    loadConfig(
      configDir({
        'config/storage.yaml': STORAGE,
        'config/erpHttp.yaml': unused,
        'jobs/link.yaml': `${TASK}systems: [S4H]\n`,
      }),
    ).advice.filter((p) => p.path.startsWith('systems.')),
    [],
    'ECC agreed to 2 calls, but no task calls it',
  );
  t.same(
    warnings(`${ERP}    agreedCalls: 3\n`, 4),
    [
      'config/erpHttp.yaml|systems.0.maxConcurrentCalls|undefined|4 pods at once × 8 calls make 32 calls in flight to ERP system "S4H", more than the 3 its SAP team agreed to (agreedCalls): lower it to 1 and run at most 3 pods at once',
    ],
    'fewer calls agreed than pods: one call each, from fewer pods',
  );
  t.same(
    warnings(`${ERP}    maxConcurrentCalls: 16\n    agreedCalls: 12\n`),
    [
      'config/erpHttp.yaml|systems.0.maxConcurrentCalls|undefined|16 calls in flight to ERP system "S4H" are more than the 12 its SAP team agreed to (agreedCalls): lower it to 12',
    ],
    'one run alone may already call more than agreed',
  );
  t.equal(podsOf(undefined, {}), 1, 'neither the option nor the environment: one run');
  t.equal(podsOf(undefined, { CONNECT2ERP_PODS: '' }), 1, 'an empty variable is no variable');
  t.equal(podsOf(undefined, { CONNECT2ERP_PODS: '4' }), 4, "the migration Job's parallelism");
  t.equal(podsOf('2', { CONNECT2ERP_PODS: '4' }), 2, 'the option before the environment');
  const refused = (option: string | undefined, env: NodeJS.ProcessEnv): string | undefined => {
    try {
      podsOf(option, env);
    } catch (error) {
      if (error instanceof ConfigError) return error.message;
    }
    return undefined;
  };
  t.equal(refused('0', {}), 'command line: --pods: "0" is not a number of pods running at once, 1 to 256');
  t.equal(
    refused(undefined, { CONNECT2ERP_PODS: 'four' }),
    'environment: CONNECT2ERP_PODS: "four" is not a number of pods running at once, 1 to 256',
  );
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

t.test('missing folders, files and unreadable CA files are named, with why and how to name others', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'c2e-empty-'));
  t.same(problems(configLocation({ config: join(root, 'config') })), [
    `${join(root, 'config').split('/').slice(-2).join('/')}||no configuration folder here; name it with --config DIR or $CONNECT2ERP_CONFIG (else ./config is used)`,
  ]);
  writeFileSync(join(root, 'a-file'), '');
  t.match(
    problems(configLocation({ config: join(root, 'a-file', 'config') })),
    [/\|\|no configuration folder here/],
    'under a file (ENOTDIR): the same message',
  );
  mkdirSync(join(root, 'config', 'erpHttp.yaml'), { recursive: true });
  t.same(
    problems(configLocation({ config: join(root, 'config') })).map((p) => p.split('|').slice(1).join('|')),
    [
      '|cannot read the file (it does not exist)',
      '|cannot read the file (EISDIR)',
      '|cannot read the jobs folder (it does not exist); it is --jobs DIR, else $CONNECT2ERP_JOBS, else the jobs folder beside the configuration folder',
    ],
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

t.test('a URL holding a user or password is refused, the key to use named, the password never repeated', async (t) => {
  process.env.C2E_URL_PASSWORD = 's3cret-in-url';
  t.teardown(() => delete process.env.C2E_URL_PASSWORD);
  const location = configDir({
    'config/storage.yaml':
      'url: "http://svc:${env:C2E_URL_PASSWORD}@nuxeo.example.com/nuxeo"\nauth: {type: basic, username: A, password: B}\nadminPath: /x\n',
    'config/erpHttp.yaml':
      'systems:\n  - name: S4H\n    client: "100"\n    rfc:\n      url: "https://sap-user@s4h.example.com/sap/bc/soap/rfc"\n      auth: {username: U, password: P}\n',
    'jobs/link.yaml': TASK,
  });
  const found = problems(location);
  const message =
    'must not hold a user or password (user:password@host): give them under auth, the password as ${env:…} or ${file:…}';
  t.ok(found.includes(`config/storage.yaml|url|${message}`), 'the repository URL');
  t.ok(found.includes(`config/erpHttp.yaml|systems.0.rfc.url|${message}`), 'an SAP URL with a user alone');
  t.notMatch(found.join('\n'), 's3cret', 'the password is in no message');
});
