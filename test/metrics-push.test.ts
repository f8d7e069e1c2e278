import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { sandboxEnv } from './helpers/env.js';
import { cli } from './helpers/run-cli.js';

/** `run --metrics-push URL` against Debian's real Prometheus Pushgateway (prometheus-pushgateway). */
t.setTimeout(120_000);

const PUSHGATEWAY = '/usr/bin/prometheus-pushgateway';

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * A Pushgateway of its own, on a free port, in memory (Debian's build persists to
 * /var/lib/prometheus/pushgateway.data unless told otherwise, which every test and run would share);
 * stopped with the test. Its routes are under a prefix of its own, so that another gateway that
 * took the port first (another suite running on the machine) is never taken for it: then it exits,
 * and it is started again on another port.
 */
async function pushgateway(t: Test): Promise<string> {
  for (;;) {
    const port = await freePort();
    const prefix = `/gateway-${randomUUID()}`;
    const args = [`--web.listen-address=127.0.0.1:${port}`, `--web.route-prefix=${prefix}`, '--persistence.file='];
    const child = spawn(PUSHGATEWAY, args, { stdio: 'ignore' });
    t.teardown(() => void child.kill());
    const url = `http://127.0.0.1:${port}${prefix}`;
    // Started when it says so on /-/ready; until then connections are refused.
    while (child.exitCode === null) {
      const ready = await fetch(`${url}/-/ready`).then(
        (res) => res.ok,
        () => false,
      );
      if (ready) return url;
      await sleep(50);
    }
  }
}

/** The samples of one metric as the Pushgateway exposes them, `{labels} value` by line. */
const samples = (exposition: string, name: string): string[] =>
  exposition
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`))
    .map((line) => line.slice(name.length));

t.test(
  "a run's counts and durations per phase, task and result reach the Pushgateway, one group per task",
  async (t) => {
    const url = await pushgateway(t);
    const env = await sandboxEnv(t);
    for (const name of ['scan-1.pdf', 'scan-2.pdf']) await env.upload('ERP/Barcode', name);
    const link = await cli(['run', '--task', 'link', '--metrics-push', url, '--config', env.location.configDir]);
    t.equal(link.code, 0, link.stderr);
    const barcode = await cli(['run', '--task', 'barcode', '--metrics-push', url, '--config', env.location.configDir]);
    t.equal(barcode.code, 0, barcode.stderr);
    const dryRun = await cli(['run', '--dry-run', '--metrics-push', url, '--config', env.location.configDir]);
    t.equal(dryRun.code, 0, dryRun.stderr);
    const exposition = await (await fetch(`${url}/metrics`)).text();
    t.same(
      samples(exposition, 'connect2erp_run_dry_run').sort(),
      [
        '{instance="",job="connect2erp",run="all"} 1',
        '{instance="",job="connect2erp",run="barcode"} 0',
        '{instance="",job="connect2erp",run="link"} 0',
      ],
      'a run of every task is the group `all`; a dry run says so',
    );
    const labelled = samples(exposition, 'connect2erp_documents').filter((line) => line.includes('result="labelled"'));
    t.same(
      labelled.sort(),
      [
        '{instance="",job="connect2erp",phase="intake",result="labelled",run="all",task=""} 0',
        '{instance="",job="connect2erp",phase="intake",result="labelled",run="barcode",task=""} 0',
        '{instance="",job="connect2erp",phase="intake",result="labelled",run="link",task=""} 2',
      ],
      'the first run labelled the two scans, the others nothing',
    );
    t.ok(
      samples(exposition, 'connect2erp_documents').includes(
        '{instance="",job="connect2erp",phase="task",result="PENDING_INPUT",run="barcode",task="barcode"} 2',
      ),
      'the bar-code run found them waiting for their bar codes',
    );
    t.same(
      samples(exposition, 'connect2erp_run_exit_code').sort(),
      [
        '{instance="",job="connect2erp",run="all"} 0',
        '{instance="",job="connect2erp",run="barcode"} 0',
        '{instance="",job="connect2erp",run="link"} 0',
      ],
      'one group per task: the second push kept the first',
    );
    t.match(
      exposition,
      /connect2erp_phase_duration_seconds\{[^}]*phase="task"[^}]*state="finished"[^}]*task="barcode"\} \d/,
    );
    t.match(exposition, /# HELP connect2erp_documents Documents of the last run, per phase, task and result/);
  },
);

t.test('an SAP system down is pushed as an outage, with the exit code 4', async (t) => {
  const url = await pushgateway(t);
  const env = await sandboxEnv(t);
  const erpYaml = join(env.location.configDir, 'erpHttp.yaml');
  const live = /url: http:\/\/[\d.:]+\/sap\/bc\/soap\/rfc/.exec(readFileSync(erpYaml, 'utf8'))?.[0] as string;
  writeFileSync(erpYaml, readFileSync(erpYaml, 'utf8').replace(live, 'url: http://127.0.0.1:1/sap/bc/soap/rfc'));
  await env.upload('ERP/Workflow', 'approval.pdf');
  const run = await cli(['run', '--metrics-push', url, '--config', env.location.configDir]);
  t.equal(run.code, 4, run.stderr);
  const exposition = await (await fetch(`${url}/metrics`)).text();
  t.same(samples(exposition, 'connect2erp_erp_outage'), [
    '{instance="",job="connect2erp",kind="unavailable",run="all",system="S4H",task="",transport="RFC"} 1',
  ]);
  t.ok(samples(exposition, 'connect2erp_run_exit_code').includes('{instance="",job="connect2erp",run="all"} 4'));

  // A function module refused: the task's lane is named.
  writeFileSync(erpYaml, readFileSync(erpYaml, 'utf8').replace('url: http://127.0.0.1:1/sap/bc/soap/rfc', live));
  env.erp.customizing.users.CONNECTOR.rfc = ['RFC_PING'];
  await env.upload('ERP/Workflow', 'approval-2.pdf');
  const refused = await cli(['run', '--task', 'workflow', '--metrics-push', url, '--config', env.location.configDir]);
  t.equal(refused.code, 2, refused.stderr);
  const after = await (await fetch(`${url}/metrics`)).text();
  t.ok(
    samples(after, 'connect2erp_erp_outage').includes(
      '{instance="",job="connect2erp",kind="refused",run="workflow",system="S4H",task="workflow",transport="RFC"} 1',
    ),
  );
});

t.test(
  'a push that fails is logged at level error without the credentials of the URL; the run keeps its exit code',
  async (t) => {
    const env = await sandboxEnv(t);
    const result = await cli([
      'run',
      '--task',
      'link',
      '--metrics-push',
      'http://ops:pushS3cret@127.0.0.1:9',
      '--config',
      env.location.configDir,
    ]);
    t.equal(result.code, 0);
    const line = result.stderr.split('\n').find((l) => l.includes('metrics push failed'));
    t.match(JSON.parse(line ?? '{}'), { level: 'error', url: 'http://127.0.0.1:9/' });
    t.notMatch(result.stderr, 'pushS3cret');
  },
);

t.test('--metrics-push takes an http or https URL, checked before the run starts', async (t) => {
  for (const url of ['pushgateway:9091', 'not a url']) {
    const result = await cli(['run', '--metrics-push', url]);
    t.equal(result.code, 2);
    t.match(result.stderr, `command line: --metrics-push: "${url}" is not an http:// or https:// URL`);
  }
});
