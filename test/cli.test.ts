import t from 'tap';
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { sandboxEnv } from './helpers/env.js';
import { CLI, cli, PROJECT } from './helpers/run-cli.js';

/** The command line as an administrator uses it: real processes, real exit codes. */
// Each process compiles the TypeScript sources on start (seconds each on a busy machine): tap's 30 s default is too short.
t.setTimeout(240_000);

t.test('validate checks the shipped configuration without a server', async (t) => {
  const ok = await cli(['validate', '--config', join(PROJECT, 'config')]);
  t.equal(ok.code, 0, ok.stderr);
  t.match(ok.stdout, /configuration is valid: 3 task\(s\), 1 ERP system\(s\)/);
});

t.test('validate lists every problem and exits 2', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'c2e-cli-'));
  const config = join(dir, 'config');
  cpSync(join(PROJECT, 'config'), config, { recursive: true });
  cpSync(join(PROJECT, 'jobs'), join(dir, 'jobs'), { recursive: true });
  writeFileSync(join(config, 'storage.yaml'), readFileSync(join(config, 'storage.yaml'), 'utf8').replace('pageSize: 100', 'pageSize: 5000').replace(/^adminPath: .*$/m, 'adminPath: relative'));
  const result = await cli(['validate', '--config', config], { NUXEO_PASSWORD: '' });
  t.equal(result.code, 2);
  t.match(result.stderr, /problem\(s\):/);
  t.match(result.stderr, /storage\.yaml: pageSize: /);
  t.match(result.stderr, /storage\.yaml: adminPath: must be an absolute repository path/);
});

t.test('usage errors exit 2, help exits 0', async (t) => {
  const unknown = await cli(['frobnicate']);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /unknown command: frobnicate\nusage: connect2erp/);
  const badOption = await cli(['run', '--nope']);
  t.equal(badOption.code, 2);
  t.match(badOption.stderr, /Unknown option '--nope'/);
  const help = await cli(['--help']);
  t.equal(help.code, 0);
  t.match(help.stderr, /^usage: connect2erp/);
});

t.test('run --dry-run prints the table and writes the JSON report', async (t) => {
  const env = await sandboxEnv(t);
  await env.upload('ERP/Invoices', 'invoice-1.pdf');
  const report = join(env.dir, 'report.json');
  const result = await cli(['run', '--dry-run', '--config', env.location.configDir, '--report', report]);
  t.equal(result.code, 0, result.stderr);
  t.match(result.stdout, /\(dry run: nothing was written\)/);
  t.match(result.stdout, /intake: 1 to label \(0 ready, 1 waiting for input\), 0 errors/);
  t.match(result.stdout, /values that would be written:\n {2}\/default-domain\/workspaces\/ERP\/Invoices\/invoice-1\.pdf/);
  const json = JSON.parse(readFileSync(report, 'utf8'));
  t.equal(json.dryRun, true);
  t.equal(json.intake.documents[0].result, 'planned');
  t.match(result.stderr, /"message":"run started"/, 'logs are JSON lines when not on a terminal');
});

t.test('run reports a missing task as a configuration error', async (t) => {
  const env = await sandboxEnv(t);
  const result = await cli(['run', '--config', env.location.configDir, '--task', 'nope']);
  t.equal(result.code, 2);
  t.match(result.stdout, /configuration problem: .*no task named "nope"/);
});

t.test('sandbox prints its URL and stops on SIGTERM', async (t) => {
  const data = mkdtempSync(join(tmpdir(), 'c2e-sbx-'));
  const child = spawn(process.execPath, [...process.execArgv, CLI, 'sandbox', '--repo-port', '0', '--erp-port', '0', '--data', data]);
  let stdout = '';
  const url = await new Promise<string>((resolve) => child.stdout.on('data', (d) => {
    stdout += d;
    const m = /repository sandbox: (\S+)/.exec(stdout);
    if (m && stdout.includes('state kept in')) resolve(m[1]);
  }));
  const res = await fetch(`${url}/api/v1/path/default-domain`, { headers: { Authorization: `Basic ${Buffer.from('Administrator:Administrator').toString('base64')}` } });
  t.equal(res.status, 200, 'the printed URL answers');
  t.match(stdout, `state kept in ${data}`);
  child.kill('SIGTERM');
  const [code] = await once(child, 'close');
  t.equal(code, 0);
});

t.test('demo runs the whole feature', async (t) => {
  const result = await cli(['demo']);
  t.equal(result.code, 0, result.stderr);
  t.match(result.stdout, /=== dry run: what the job would do ===[\s\S]*intake: 4 to label/);
  t.match(result.stdout, /=== run ===[\s\S]*intake: 4 labelled \(1 ready, 3 waiting for input\)/);
  t.match(result.stdout, /=== run ===[\s\S]*task workflow: 1 DONE/, 'the ready document goes to SAP at once');
  t.match(result.stdout, /=== a user fills in [^\n]*\n[\s\S]*task barcode: 1 DONE[\s\S]*task link: 1 PENDING_INPUT, 1 DONE[\s\S]*invoice-4711\.pdf\s+DONE\s+BKPF 100019000000222023/, 'a filled-in value moves a waiting document on');
  t.match(result.stdout, /=== one more run: nothing left to do ===[\s\S]*intake: 0 labelled[\s\S]*task barcode: nothing to do/);
  t.match(result.stdout, /=== what landed in the ERP sandbox ===\n\{\n {2}"links": \[\n {4}\{\n {6}"client": "100",\n {6}"SAP_OBJECT": "BKPF"/);
});

t.test('a sandbox that cannot start says why', async (t) => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.teardown(() => blocker.close());
  const result = await cli(['sandbox', '--repo-port', String((blocker.address() as AddressInfo).port)]);
  t.equal(result.code, 1);
  t.match(result.stderr, /^connect2erp: listen EADDRINUSE/);
});
