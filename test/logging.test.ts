import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sandboxEnv } from './helpers/env.js';
import { cli } from './helpers/run-cli.js';
import { PassThrough } from 'node:stream';
import { errorMessage } from '../common/errors.js';
import { createLogger, registerSecret } from '../src/log.js';

// Runs at debug level over real HTTP: 5 s idle, several times that on a busy machine.
t.setTimeout(120_000);

/** The log of whole runs, as an administrator's log collector receives it. */

const NUXEO_SECRET = 'Nx-S3cret-4711';
const SAP_SECRET = 'Sap-S3cret-0815';

t.test(
  'a run at debug level over RFC and Rest: every line has the run id, document lines the task and uid, no secret anywhere',
  async (t) => {
    const env = await sandboxEnv(t, { users: { connector: { password: NUXEO_SECRET, groups: ['administrators'] } } });
    env.erp.customizing.users.LOGTEST = { password: SAP_SECRET, rfc: '*', tables: [] };
    const { configDir, jobsDir } = env.location;
    const storage = join(configDir, 'storage.yaml');
    writeFileSync(storage, readFileSync(storage, 'utf8').replace('username: Administrator', 'username: connector'));
    // The SAP password comes from a mounted file, the repository's from the environment.
    const secretFile = join(env.dir, 'sap-password');
    writeFileSync(secretFile, `${SAP_SECRET}\n`);
    const erp = join(configDir, 'erpHttp.yaml');
    writeFileSync(
      erp,
      readFileSync(erp, 'utf8')
        .replaceAll('username: CONNECTOR', 'username: LOGTEST')
        .replaceAll('${env:SAP_PASSWORD}', `\${file:${secretFile}}`),
    );
    const link = join(jobsDir, 'link.yaml');
    writeFileSync(link, readFileSync(link, 'utf8').replace(/^function: RFC.*$/m, 'function: Rest'));

    const invoice = await env.upload('ERP/Invoices', 'invoice.pdf');
    const scan = await env.upload('ERP/Barcode', 'scan.pdf');
    const approval = await env.upload('ERP/Workflow', 'approval.pdf');
    const environment = { NUXEO_PASSWORD: NUXEO_SECRET, SAP_PASSWORD: 'unused', CONNECT2ERP_LOG_LEVEL: 'debug' };
    const first = await cli(['run', '--config', configDir], environment);
    for (const [uid, values] of [
      [invoice, { 'erpCreateALDocument:erpObjectId': '4711' }],
      [scan, { 'erpBarcode:barcode': 'BC-7' }],
    ] as const) {
      env.fill(uid, values);
    }
    const second = await cli(['run', '--config', configDir], environment);
    t.same([first.code, second.code], [0, 0]);
    t.equal(
      env.erp.tables.attachments.length + env.erp.tables.barcodes.length + env.erp.tables.inbox.length,
      3,
      'all three went through, the link over Rest',
    );

    const log = [first, second].map((r) => r.stderr + r.stdout).join('\n');
    const basic = (user: string, password: string) => Buffer.from(`${user}:${password}`).toString('base64');
    const secrets: Array<[string, string]> = [
      ['repository password', NUXEO_SECRET],
      ['SAP password', SAP_SECRET],
      ['repository Basic credentials', basic('connector', NUXEO_SECRET)],
      ['SAP Basic credentials', basic('LOGTEST', SAP_SECRET)],
      ...[...env.erp.csrf.sessions].flatMap(([session, token]): Array<[string, string]> => [
        ['SAP session cookie', session],
        ['CSRF token', token],
      ]),
    ];
    t.ok(env.erp.csrf.sessions.size > 0, 'the Rest call fetched a CSRF token and a session');
    for (const [what, secret] of secrets) t.notOk(log.includes(secret), `the ${what} never appears in the log`);

    const lines = [first, second]
      .flatMap((r) => r.stderr.split('\n'))
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    t.ok(lines.length >= 10, `${lines.length} JSON lines (stderr is not a terminal)`);
    t.ok(
      lines.every(
        (l) => typeof l.runId === 'string' && typeof l.message === 'string' && typeof l.timestamp === 'string',
      ),
      'every line: run id, static message, time',
    );
    t.ok(
      lines.some((l) => l.level === 'debug' && l.message === 'rest call'),
      'debug lines are there, so the search covered the requests',
    );
    const processed = lines.filter((l) => l.message === 'document processed');
    t.same(
      processed.map((l) => [l.task, l.uid]).sort(),
      [
        ['barcode', scan],
        ['link', invoice],
        ['workflow', approval],
      ].sort(),
      'document lines name the task and the uid',
    );
    const labelled = lines.filter((l) => l.message === 'document labelled');
    t.equal(labelled.length, 3, 'one intake line per new document');
    t.ok(
      labelled.every((l) => typeof l.uid === 'string'),
      'intake lines name the uid',
    );
    t.equal(new Set(lines.map((l) => l.runId)).size, 2, 'one run id per run');
  },
);

t.test('at the default level, one info line per batch of documents, not one per document', async (t) => {
  const env = await sandboxEnv(t, { storage: { pageSize: '5' } });
  for (let i = 0; i < 12; i++) await env.upload('ERP/Workflow', `approval-${i}.pdf`);
  env.sandbox.index.catchUp();
  const { code, stderr } = await cli(['run', '--config', env.location.configDir]);
  t.equal(code, 0, stderr);
  const lines = stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const info = lines.filter((l) => l.level === 'info');
  t.same(
    info.filter((l) => l.message === 'documents labelled').map((l) => [l.documents, l.READY]),
    [
      [5, 5],
      [5, 5],
      [2, 2],
    ],
    "the intake's pages of 5",
  );
  t.same(
    info.filter((l) => l.message === 'documents settled').map((l) => [l.task, l.documents, l.DONE]),
    [['workflow', 12, 12]],
    "the task's batch of 50, said at its end",
  );
  t.equal(info.length, 6, 'with the run started and finished: 6 info lines for 12 documents');
  t.notOk(
    lines.some((l) => l.message === 'document labelled' || l.message === 'document processed'),
    'the lines per document are at level debug',
  );
  t.notOk(stderr.includes('undefined'), 'no undefined field');
});

t.test('logging: readable on a terminal, JSON elsewhere, secrets masked', async (t) => {
  const lines = (json: boolean, write: (log: ReturnType<typeof createLogger>) => void): string => {
    const stream = new PassThrough();
    let out = '';
    stream.on('data', (d) => (out += d));
    write(createLogger({ json, stream, level: 'info' }));
    return out;
  };
  registerSecret('hunter2-secret');
  const readable = lines(false, (log) =>
    log.info('request sent', {
      url: 'http://x/?p=hunter2-secret',
      attempt: 2,
      headers: { Authorization: 'Basic abc' },
      ids: ['a'],
    }),
  );
  t.match(
    readable,
    /^\S+ info request sent url=http:\/\/x\/\?p=\*\*\* attempt=2 headers=\{"Authorization":"\*\*\*"\} ids=\["a"\]\n$/,
  );
  t.match(
    lines(false, (log) => log.info('bare')),
    /^\S+ info bare\n$/,
    'no fields, no trailing space',
  );
  t.match(
    lines(false, (log) => log.info('run started', { dryRun: false, shard: undefined })),
    /^\S+ info run started dryRun=false\n$/,
    'a field without a value is left out, as in JSON',
  );
  const json = JSON.parse(lines(true, (log) => log.warn('w', { password: null, token: 'tok' })));
  t.same(
    [json.message, json.level, json.password, json.token],
    ['w', 'warn', null, '***'],
    'a null secret stays null; a set one is masked',
  );
  t.equal(errorMessage('plain'), 'plain', 'a thrown non-Error is shown as text');
});

t.test(
  'what needs a person is an error line on stderr: refused repository credentials, a configuration problem; status says its error first and once',
  async (t) => {
    const env = await sandboxEnv(t);
    const refused = await cli(['run', '--task', 'workflow', '--config', env.location.configDir], {
      NUXEO_PASSWORD: 'wrong',
      CONNECT2ERP_LOG_LEVEL: 'warn',
    });
    t.equal(refused.code, 2);
    const errors = refused.stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.level === 'error');
    t.match(errors, [{ message: 'run stopped', reason: /HTTP 401.*check the credentials in storage\.yaml/ }]);

    const broken = await cli(['validate', '--config', env.location.configDir, '--jobs', join(env.dir, 'nowhere')]);
    t.equal(broken.code, 2);
    t.match(
      broken.stderr,
      /"level":"error","message":"configuration refused","problems":\[".*nowhere: cannot read the jobs folder/,
    );

    env.sandbox.faults.add({ status: 503, times: 1000 });
    const status = await cli(['status', '--config', env.location.configDir]);
    t.equal(status.code, 1);
    const lines = status.stderr.trim().split('\n');
    t.match(lines, [/^connect2erp: .*HTTP 503/], 'one line: the error');
  },
);
