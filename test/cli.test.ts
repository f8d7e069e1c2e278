import t from 'tap';
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { sandboxEnv } from './helpers/env.js';
import { CHILD_EXEC_ARGV, CLI, cli, PROJECT } from './helpers/run-cli.js';
import { loadPart } from '../src/commands/optional-part.js';
import { ConfigError } from '../common/errors.js';

/** The command line as an administrator uses it: real processes, real exit codes. */
// Each process compiles the TypeScript sources on start (seconds each on a busy machine): tap's 30 s default is too short.
t.setTimeout(360_000);

t.test('validate checks the shipped configuration without a server', async (t) => {
  const ok = await cli(['validate', '--config', join(PROJECT, 'config')]);
  t.equal(ok.code, 0, ok.stderr);
  t.match(ok.stdout, /configuration is valid: 3 task\(s\), 1 ERP system\(s\)/);
});

/** The shipped configuration and jobs in a folder of their own, for a test to change. */
function projectCopy(): { dir: string; config: string } {
  const dir = mkdtempSync(join(tmpdir(), 'c2e-cli-'));
  const config = join(dir, 'config');
  cpSync(join(PROJECT, 'config'), config, { recursive: true });
  cpSync(join(PROJECT, 'jobs'), join(dir, 'jobs'), { recursive: true });
  return { dir, config };
}

t.test('validate warns about a key no longer used, and still exits 0', async (t) => {
  const { dir, config } = projectCopy();
  writeFileSync(
    join(dir, 'jobs', 'link.yaml'),
    `${readFileSync(join(dir, 'jobs', 'link.yaml'), 'utf8')}concurrency: 2\n`,
  );
  const result = await cli(['validate', '--config', config]);
  t.equal(result.code, 0, result.stderr);
  t.match(result.stdout, /configuration is valid/);
  t.match(
    result.stdout,
    /\nwarning: \S+\/jobs\/link\.yaml: concurrency: no longer used: a task reads ahead as far as the maxConcurrentCalls of its ERP systems need/,
  );
});

t.test('validate --pods checks the calls of pods at once against agreedCalls; a bad pod count stops run', async (t) => {
  const { config } = projectCopy();
  const [four, agreed, bad] = await Promise.all([
    cli(['validate', '--config', config, '--pods', '4']),
    cli(['validate', '--config', config], { CONNECT2ERP_PODS: '4' }),
    cli(['run', '--config', config, '--dry-run'], { CONNECT2ERP_PODS: '4 pods' }),
  ]);
  t.equal(four.code, 0, four.stderr);
  t.match(
    four.stdout,
    /\nwarning: \S+\/config\/erpHttp\.yaml: systems\.0\.maxConcurrentCalls: 4 pods at once × 8 calls make 32 calls in flight to ERP system "S4H", more than the 8 its SAP team agreed to .*: lower it to 2\n/,
  );
  t.match(agreed.stdout, /32 calls in flight/, "the migration Job's CONNECT2ERP_PODS, as its pods see it");
  t.equal(bad.code, 2, 'a configuration problem, before any server is asked');
  t.match(bad.stderr, /"reason":"environment: CONNECT2ERP_PODS: \\"4 pods\\" is not a number of pods running at once/);
});

t.test('validate lists every problem and exits 2', async (t) => {
  const { config } = projectCopy();
  writeFileSync(
    join(config, 'storage.yaml'),
    readFileSync(join(config, 'storage.yaml'), 'utf8')
      .replace('pageSize: 100', 'pageSize: 5000')
      .replace(/^adminPath: .*$/m, 'adminPath: relative'),
  );
  const result = await cli(['validate', '--config', config], { NUXEO_PASSWORD: '' });
  t.equal(result.code, 2);
  t.match(result.stderr, /problem\(s\):/);
  t.match(result.stderr, /storage\.yaml: pageSize: /);
  t.match(result.stderr, /storage\.yaml: adminPath: must be an absolute repository path/);
});

t.test('usage errors exit 2 with the usage; help and the version exit 0', async (t) => {
  const unknown = await cli(['frobnicate']);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /^connect2erp: unknown command frobnicate\n\nusage: connect2erp <command> \[options\]/);
  const none = await cli([]);
  t.equal(none.code, 2);
  t.match(none.stderr, /^connect2erp: no command given\n/);
  const badOption = await cli(['run', '--nope']);
  t.equal(badOption.code, 2);
  t.match(
    badOption.stderr,
    /^connect2erp run: Unknown option '--nope'[\s\S]*\n\nusage: connect2erp run \[options\]/,
    "names the option and shows the command's usage",
  );
  t.notMatch(badOption.stderr, /did you mean/, 'nothing near --nope');
  const typo = await cli(['run', '--config', 'x', '--dryrun']);
  t.match(typo.stderr, /^connect2erp run: .*--dryrun.* \(did you mean --dry-run\?\)\n/, 'the option meant, named');
  t.match((await cli(['--frob'])).stderr, /^connect2erp: unknown option --frob\n/);
  const help = await cli(['--help']);
  t.equal(help.code, 0);
  t.match(
    help.stdout,
    /^usage: connect2erp <command> \[options\]\n\ncommands:\n {2}validate {2,}check the configuration/,
  );
  t.equal((await cli(['help'])).stdout, help.stdout, '`help` is --help');
  t.match(
    (await cli(['help', 'retry'])).stdout,
    /^usage: connect2erp retry \[options\]/,
    '`help COMMAND` is COMMAND --help',
  );
  const { version } = JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8')) as { version: string };
  for (const args of [['--version'], ['run', '--version']]) {
    const printed = await cli(args);
    t.same([printed.code, printed.stdout], [0, `${version}\n`], `${args.join(' ')} prints the version`);
  }
});

t.test(
  "--help and -h print each command's usage and act on nothing: run --help against a live sandbox changes nothing",
  async (t) => {
    const env = await sandboxEnv(t);
    await env.upload('ERP/Workflow', 'approval.pdf'); // what a real run would label and send to SAP at once
    const before = env.snapshot();
    const config = ['--config', env.location.configDir];
    const run = await cli(['run', ...config, '--help']);
    t.equal(run.code, 0, run.stderr);
    t.equal(run.stderr, '', 'no log: nothing started');
    const lines = run.stdout.split('\n');
    t.equal(lines[0], 'usage: connect2erp run [options]');
    for (const option of [
      '--dry-run',
      '--task NAME',
      '--report FILE',
      '--report-html FILE',
      '--max-duration D',
      '--grace D',
      '--config DIR',
      '--jobs DIR',
      '-h, --help',
    ]) {
      t.ok(
        lines.some((line) => new RegExp(`^ {2}(    )?${option.replace(/[-]/g, '\\-')} +\\S`).test(line)),
        `${option} has a line with what it does`,
      );
    }
    t.match(
      run.stdout,
      /\nexit codes: 0 success, 1 some documents failed, 2 configuration error, 3 interrupted, 4 an ERP system unavailable\n$/,
    );
    t.equal((await cli(['run', '-h', '--dry-run', ...config])).stdout, run.stdout, '-h is --help, wherever it stands');
    // Each command lists the codes it uses, in its own words: doctor has no documents to fail.
    for (const [name, codes] of [
      [
        'doctor',
        /\nexit codes: 0 every check passed, 1 an error doctor could not check around, 2 a check failed, or the configuration, 3 interrupted\n$/,
      ],
      [
        'status',
        /\nexit codes: 0 done, 1 a server failed it \(the message says which\), 2 configuration or usage error, 3 interrupted\n$/,
      ],
      ['serve', /\nexit codes: 0 stopped by SIGTERM, requests drained, 1 could not start/],
      ['sandbox', /\nexit codes: 0 stopped by SIGTERM or Ctrl-C, 1 could not start/],
    ] as const)
      t.match((await cli([name, '--help'])).stdout, codes, `${name}'s exit codes`);
    t.equal(env.snapshot(), before, 'the repository and the ERP tables are as they were');
    t.equal(
      env.props(
        (await env.client.search("SELECT * FROM File WHERE dc:title = 'approval.pdf'", { pageSize: 1 })).entries[0].uid,
      )['erpTaskStatus:status'],
      undefined,
      'the document is not labelled',
    );

    const usages: Array<[string[], RegExp]> = [
      [
        ['validate', '--help', '--crontab', '/nonexistent'],
        /^usage: connect2erp validate \[options\]\n[\s\S]*\n {6}--crontab FILE +schedules/,
      ],
      [['schedule', '-h'], /^usage: connect2erp schedule \[options\]/],
      [
        ['status', '--help', '--config', '/nonexistent'],
        /^usage: connect2erp status \[options\]\n[\s\S]*\n {6}--task NAME +only this task\n/,
      ],
      [['retry', '-h'], /^usage: connect2erp retry \[options\]\n[\s\S]*\n {6}--doc UID +only this document\n/],
      [
        ['template', '--help'],
        /^usage: connect2erp template link\|link-by-reference\|barcode\|workflow\|workflow-to-agent\|read-supplier-invoice\|read-purchase-order RFC\|Rest\n/,
      ],
      [
        ['sandbox', '--help', '--repo-port', '1'],
        /^usage: connect2erp sandbox \[options\]\n[\s\S]*\n {6}--repo-port N +repository sandbox port \(default 8080\)\n/,
      ],
      [['demo', '-h'], /^usage: connect2erp demo \[options\]\n[\s\S]*\n {6}--data DIR +keep the sandbox's state/],
    ];
    for (const [args, usage] of usages) {
      const printed = await cli(args);
      t.equal(printed.code, 0, `${args.join(' ')}: ${printed.stderr}`);
      t.match(printed.stdout, usage, `${args.join(' ')} prints its usage and does nothing else`);
    }
    t.equal(env.snapshot(), before, 'still nothing changed');
  },
);

t.test('run --dry-run prints the table and writes the JSON report', async (t) => {
  const env = await sandboxEnv(t);
  await env.upload('ERP/Invoices', 'invoice-1.pdf');
  const report = join(env.dir, 'report.json');
  const result = await cli(['run', '--dry-run', '--config', env.location.configDir, '--report', report]);
  t.equal(result.code, 0, result.stderr);
  t.match(result.stdout, /\(dry run: nothing was written\)/);
  t.match(result.stdout, /intake: 1 to label \(0 ready, 1 waiting for input\), 0 errors/);
  t.match(
    result.stdout,
    /values that would be written:\n {2}\/default-domain\/workspaces\/ERP\/Invoices\/invoice-1\.pdf/,
  );
  const json = JSON.parse(readFileSync(report, 'utf8'));
  t.equal(json.dryRun, true);
  t.equal(json.intake.documents[0].result, 'planned');
  t.match(result.stderr, /"message":"run started"/, 'logs are JSON lines when not on a terminal');
});

t.test(
  'report paths are checked before any work: a missing folder, a folder for a file or a place that cannot be written stops the run at once, exit 2',
  async (t) => {
    const env = await sandboxEnv(t);
    await env.upload('ERP/Workflow', 'approval.pdf'); // what a run would label and send to SAP at once
    const before = env.snapshot();
    const config = ['--config', env.location.configDir];
    const missing = await cli(['run', ...config, '--report-html', '/nonexistent/dir/r.html', '--report', env.dir]);
    t.equal(missing.code, 2, missing.stderr);
    t.match(missing.stderr, /^2 problem\(s\):\n/);
    t.match(missing.stderr, `command line: --report: ${env.dir} is a folder; give a file name`);
    t.match(missing.stderr, 'command line: --report-html: /nonexistent/dir is not an existing folder');
    const readOnly = await cli(['run', ...config, '--report', '/proc/report.json']);
    t.equal(readOnly.code, 2);
    t.match(
      readOnly.stderr,
      /command line: --report: cannot write in \/proc \(E[A-Z]+\)/,
      'a folder the run cannot write in (as a read-only root file system)',
    );
    t.equal(readOnly.stdout, '', 'no run, no summary');
    const same = join(env.dir, 'run-report');
    const twice = await cli(['run', ...config, '--report', same, '--report-html', `${env.dir}/./run-report`]);
    t.equal(twice.code, 2);
    t.match(
      twice.stderr,
      `command line: --report-html: is the same file as --report (${same}): give each report its own`,
    );
    t.equal(env.snapshot(), before, 'nothing was labelled or sent');
    const ok = await cli(['run', ...config, '--task', 'workflow', '--report', join(env.dir, 'r.json')]);
    t.equal(ok.code, 0, 'a writable place is fine');
    t.same(
      readdirSync(env.dir).filter((name) => name.startsWith('.connect2erp-probe')),
      [],
      'the probe file is gone',
    );
  },
);

t.test('run reports a missing task as a configuration error', async (t) => {
  const env = await sandboxEnv(t);
  const result = await cli(['run', '--config', env.location.configDir, '--task', 'nope']);
  t.equal(result.code, 2);
  t.match(result.stdout, /configuration problem: .*no task named "nope"/);
});

t.test(
  'sandbox prints its URL, takes latency, search lag and faults from a file to rehearse outages with, and stops on SIGTERM',
  async (t) => {
    const data = mkdtempSync(join(tmpdir(), 'c2e-sbx-'));
    const faults = join(data, 'faults.yaml');
    writeFileSync(
      faults,
      [
        'repository:',
        '  searchLagMs: 3600000',
        '  faults:',
        '    - { method: GET, path: /path/default-domain/workspaces, status: 503, times: 1 }',
        'erp:',
        '  soapRfcActive: false',
        '',
      ].join('\n'),
    );
    const child = spawn(process.execPath, [
      ...CHILD_EXEC_ARGV,
      CLI,
      'sandbox',
      '--repo-port',
      '0',
      '--erp-port',
      '0',
      '--data',
      join(data, 'state'),
      '--faults',
      faults,
    ]);
    let stdout = '';
    const [url, erpUrl] = await new Promise<string[]>((resolve) =>
      child.stdout.on('data', (d) => {
        stdout += d;
        const urls = [/repository sandbox: (\S+)/.exec(stdout)?.[1], /ERP sandbox: (\S+)/.exec(stdout)?.[1]];
        if (stdout.includes('fault(s) set')) resolve(urls as string[]);
      }),
    );
    const admin = { Authorization: `Basic ${Buffer.from('Administrator:Administrator').toString('base64')}` };
    const res = await fetch(`${url}/api/v1/path/default-domain`, { headers: admin });
    t.equal(res.status, 200, 'the printed URL answers');
    t.match(stdout, `state kept in ${join(data, 'state')}`);
    t.match(stdout, 'search lag 3600000 ms, latency 0 ms (repository) and 0 ms (ERP), 1 fault(s) set');
    t.equal(
      (await fetch(`${url}/api/v1/path/default-domain/workspaces`, { headers: admin })).status,
      503,
      'the fault, once',
    );
    t.equal((await fetch(`${url}/api/v1/path/default-domain/workspaces`, { headers: admin })).status, 200);
    await fetch(`${url}/api/v1/path/default-domain/workspaces`, {
      method: 'POST',
      headers: { ...admin, 'Content-Type': 'application/json' },
      body: JSON.stringify({ 'entity-type': 'document', type: 'File', name: 'new.pdf' }),
    });
    const search = (await (
      await fetch(
        `${url}/api/v1/search/execute?query=${encodeURIComponent("SELECT * FROM File WHERE ecm:name = 'new.pdf'")}`,
        { headers: admin },
      )
    ).json()) as { resultsCount: number };
    t.equal(search.resultsCount, 0, 'the search lags');
    t.equal(
      (
        await fetch(`${erpUrl}?sap-client=100`, {
          method: 'POST',
          headers: { Authorization: `Basic ${Buffer.from('CONNECTOR:sandbox').toString('base64')}` },
          body: '<x/>',
        })
      ).status,
      403,
      'SOAP-RFC inactive in SICF',
    );
    child.kill('SIGTERM');
    const [code] = await once(child, 'close');
    t.equal(code, 0);

    writeFileSync(faults, 'repository:\n  faults:\n    - { method: GET, tiems: 1 }\nerp:\n  latencyMs: soon\n');
    const bad = await cli(['sandbox', '--faults', faults]);
    t.equal(bad.code, 2, 'a broken settings file is a configuration error');
    t.match(bad.stderr, `${faults}: repository.faults.0: Unrecognized key: "tiems"`);
    t.match(bad.stderr, `${faults}: erp.latencyMs: `);
    t.match((await cli(['sandbox', '--faults', join(data, 'none.yaml')])).stderr, 'none.yaml: cannot read the file');
    writeFileSync(faults, 'repository: [');
    t.equal((await cli(['sandbox', '--faults', faults])).code, 2, 'not YAML');
  },
);

t.test('demo runs the whole feature', async (t) => {
  const result = await cli(['demo']);
  t.equal(result.code, 0, result.stderr);
  t.match(result.stdout, /=== dry run: what the job would do ===[\s\S]*intake: 4 to label/);
  t.match(result.stdout, /=== run ===[\s\S]*intake: 4 labelled \(1 ready, 3 waiting for input\)/);
  t.match(result.stdout, /=== run ===[\s\S]*task workflow: 1 DONE/, 'the ready document goes to SAP at once');
  t.match(
    result.stdout,
    /=== a user fills in [^\n]*\n[\s\S]*task barcode: 1 DONE[\s\S]*task link: 1 PENDING_INPUT, 1 DONE[\s\S]*invoice-4711\.pdf\s+DONE\s+BKPF 100019000000222023/,
    'a filled-in value moves a waiting document on',
  );
  t.match(
    result.stdout,
    /=== one more run: nothing left to do ===[\s\S]*intake: 0 labelled[\s\S]*task barcode: nothing to do/,
  );
  t.match(
    result.stdout,
    /=== what landed in the ERP sandbox ===\n\{\n {2}"links": \[\n {4}\{\n {6}"client": "100",\n {6}"SAP_OBJECT": "BKPF"/,
  );
});

t.test('a sandbox that cannot start says why', async (t) => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.teardown(() => blocker.close());
  const result = await cli(['sandbox', '--repo-port', String((blocker.address() as AddressInfo).port)]);
  t.equal(result.code, 1);
  t.match(result.stderr, /^connect2erp: listen EADDRINUSE/);
});

t.test('where the sandboxes are not installed, the commands that need them say so and how to get them', async (t) => {
  await t.rejects(loadPart('demo', [new URL('file:///nowhere/sandbox/part.js')]), {
    constructor: ConfigError,
    message:
      'connect2erp demo: the sandboxes are not part of this installation (the production image leaves them out); run them from a clone of the repository: npm ci && npx connect2erp demo',
  });
});
