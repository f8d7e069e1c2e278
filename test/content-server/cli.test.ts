import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as turn } from 'node:timers/promises';
import t from 'tap';
import { request } from 'undici';
import { sandboxEnv } from '../helpers/env.js';
import { PROJECT, cli, logLines, startCli } from '../helpers/run-cli.js';
import { SIGNED, fixture, servedEnv } from '../helpers/content-server.js';

// Processes of their own, each compiling the sources on start.
t.setTimeout(300_000);

t.test(
  'serve: health and readiness; on SIGTERM readiness says 503, the request under way finishes, exit 0',
  async (t) => {
    const env = await sandboxEnv(t);
    const file = join(env.location.configDir, 'contentServer.yaml');
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace('port: 8090', 'port: 0').replace(/^/, 'drainSeconds: 300\n'),
    );
    const serve = startCli(['serve', '--config', env.location.configDir]);
    t.teardown(() => void serve.child.kill('SIGKILL'));
    await serve.logged(/content server listening/);
    const port = Number(/"port":(\d+)/.exec(serve.output().stderr)?.[1]);
    const origin = `http://127.0.0.1:${port}`;
    t.equal((await request(`${origin}/healthz`)).statusCode, 200);
    t.equal((await request(`${origin}/readyz`)).statusCode, 200);
    const root = await request(`${origin}/`);
    t.equal(root.statusCode, 200, 'an availability probe of / is answered');
    t.equal(await root.body.text(), 'connect2erp content server\n');
    t.equal((await request(`${origin}/`, { method: 'HEAD' })).statusCode, 200, 'HEAD too');
    const info = await request(`${origin}/archivelink/S4H?serverInfo&pVersion=0047`);
    t.match(await info.body.text(), /^serverStatus="running";/);

    env.sandbox.faults.hold();
    const pending = request(`${origin}/archivelink/S4H?serverInfo&pVersion=0047&contRep=Z1`).then(async (r) => ({
      status: r.statusCode,
    }));
    const held = request(`${origin}/archivelink/S4H?${SIGNED.urls.getA}`);
    await env.sandbox.faults.whenHeld(1);
    serve.child.kill('SIGTERM');
    await serve.logged(/content server stopping/);
    t.equal((await request(`${origin}/readyz`)).statusCode, 503, 'no new work is sent to a stopping replica');
    t.equal((await request(`${origin}/healthz`)).statusCode, 200, 'alive while it drains');
    const late = await request(`${origin}/archivelink/S4H?serverInfo&pVersion=0047`);
    t.equal(late.statusCode, 200, 'still answering while it drains…');
    t.equal(late.headers.connection, 'close', '…and closing connections, so that clients go elsewhere');
    await late.body.dump();
    serve.child.kill('SIGTERM');
    await serve.logged(/content server closing now/);
    // Signals on and on from here to its end, the request under way answered after a thousand of them.
    let exited = false;
    void serve.exited.then(() => (exited = true));
    for (let sent = 1; !exited && serve.child.kill('SIGTERM'); sent++) {
      if (sent === 1000) env.sandbox.faults.release();
      await turn();
    }
    t.equal((await held).statusCode, 401, 'the request under way got its answer');
    t.equal((await pending).status, 200);
    t.equal((await serve.exited).code, 0);
    t.equal(
      logLines(serve.output().stderr, 'content server closing now'),
      1,
      'one line for all the signals after the first, not one per signal',
    );
    const secKey = decodeURIComponent(/secKey=([^&]+)/.exec(SIGNED.urls.getA)?.[1] as string);
    t.notOk(serve.output().stderr.includes(secKey.slice(0, 40)), 'no secKey in the logs');
    t.match(serve.output().stderr, /"command":"get".*"signed":true.*"status":401/, 'an access line per request');
  },
);

t.test('serve without contentServer.yaml, or with a broken one: exit 2 naming the file and key', async (t) => {
  const env = await sandboxEnv(t);
  const file = join(env.location.configDir, 'contentServer.yaml');
  writeFileSync(
    file,
    'connections:\n  - name: ECC\n    repositoryAuth: { type: basic, username: u, password: p }\n    contentRepositories:\n      - { contRep: z1, storagePath: relative }\n',
  );
  const broken = await cli(['validate', '--config', env.location.configDir]);
  t.equal(broken.code, 2);
  t.match(
    broken.stderr,
    /contentServer\.yaml: connections\.0\.contentRepositories\.0\.contRep: must be a content repository id/,
  );
  t.match(
    broken.stderr,
    /contentServer\.yaml: connections\.0\.contentRepositories\.0\.storagePath: must be an absolute/,
  );
  writeFileSync(
    file,
    'connections:\n  - name: ECC\n    repositoryAuth: { type: basic, username: u, password: p }\n    contentRepositories:\n      - { contRep: Z1, storagePath: /x }\n      - { contRep: Z1, storagePath: /y }\n  - name: ECC\n    repositoryAuth: { type: basic, username: u, password: p }\n    contentRepositories: [{ contRep: Z1, storagePath: /x }]\n',
  );
  const unknown = await cli(['validate', '--config', env.location.configDir]);
  t.match(unknown.stderr, /connections\.0\.name: "ECC" is not an ERP system of erpHttp\.yaml/);
  t.match(unknown.stderr, /connections\.0\.contentRepositories\.1\.contRep: content repository Z1 is listed twice/);
  t.match(unknown.stderr, /connections\.1\.name: connection names must be unique/);
  writeFileSync(file, readFileSync(join(PROJECT, 'config', 'contentServer.yaml'), 'utf8'));
  writeFileSync(file, readFileSync(file, 'utf8').replace('port: 8090', 'port: eighty'));
  const port = await cli(['serve', '--config', env.location.configDir]);
  t.equal(port.code, 2);
  t.match(port.stderr, /contentServer\.yaml: listen\.port: Invalid input: expected number/);
  rmSync(file);
  const none = await cli(['serve', '--config', env.location.configDir]);
  t.equal(none.code, 2);
  t.match(none.stderr, /contentServer\.yaml: connect2erp serve needs this file/);
  t.match((await cli(['validate', '--config', env.location.configDir])).stdout, /no content server/);
});

t.test('certs list, approve and revoke: the administrator decides what signs', async (t) => {
  const env = await servedEnv(t, {
    connection: {
      contentRepositories: [
        { contRep: 'Z1', storagePath: '/default-domain/workspaces/sap-archive/Z1' },
        { contRep: 'Z2', storagePath: '/default-domain/workspaces/sap-archive' },
      ],
    },
  });
  const config = ['--config', env.location.configDir];
  t.match((await cli(['certs', 'list', ...config])).stdout, /no certificate filed yet/);
  const authId = 'CN%3DS4H,OU%3Dconnect2erp,O%3DSAP%20Trust%20Community,C%3DDE';
  t.equal((await env.call('PUT', `putCert&pVersion=0047&contRep=Z1&authId=${authId}`, fixture('dsa.p7b'))).status, 200);
  const list = await cli(['certs', 'list', ...config]);
  t.match(
    list.stdout,
    /Z1-[0-9A-F]{16} {2}PENDING\n {2}connection S4H, content repository Z1, authId CN=S4H,OU=connect2erp/,
  );
  const name = /(Z1-[0-9A-F]{16})/.exec(list.stdout)?.[1] as string;
  const fingerprint = /SHA-256 ([0-9A-F]{64})/.exec(list.stdout)?.[1] as string;
  t.equal((await env.call('GET', SIGNED.urls.infoA)).status, 401);
  const approved = await cli(['certs', 'approve', fingerprint.slice(0, 12), ...config]);
  t.equal(approved.code, 0, approved.stderr);
  t.match(approved.stdout, new RegExp(`${name} is approved`));
  t.equal(
    (await env.call('GET', SIGNED.urls.infoA)).status,
    404,
    'signed by an approved certificate: the document is looked up',
  );
  t.equal((await cli(['certs', 'revoke', name, ...config])).code, 0);
  t.equal((await env.call('GET', SIGNED.urls.infoA)).status, 401);
  const wrong = await cli(['certs', 'approve', 'Z1-0000', ...config]);
  t.equal(wrong.code, 2);
  t.match(wrong.stderr, /no certificate named or with a fingerprint starting "Z1-0000"/);
  t.equal((await cli(['certs', 'approve', ...config])).code, 2);
  t.equal((await cli(['certs', 'burn', ...config])).code, 2);
  t.equal((await env.call('PUT', `putCert&pVersion=0047&contRep=Z1&authId=${authId}`, 'garbage')).status, 406);
  t.equal((await env.call('PUT', `putCert&pVersion=0047&contRep=Z2&authId=${authId}`, fixture('dsa.der'))).status, 200);
  const both = await cli(['certs', 'approve', fingerprint.slice(0, 12), ...config]);
  t.equal(both.code, 2);
  t.match(both.stderr, /designates 2 certificates; give more of the fingerprint/, 'the same certificate for Z1 and Z2');
});

t.test('serve and certs read only what they use: no jobs folder, no SAP password', async (t) => {
  const env = await sandboxEnv(t);
  rmSync(env.location.jobsDir, { recursive: true, force: true });
  const file = join(env.location.configDir, 'contentServer.yaml');
  writeFileSync(file, readFileSync(file, 'utf8').replace('port: 8090', 'port: 0'));
  const list = await cli(['certs', 'list', '--config', env.location.configDir], { SAP_PASSWORD: undefined });
  t.equal(list.code, 0, list.stderr);
  const serve = startCli(['serve', '--config', env.location.configDir], { SAP_PASSWORD: undefined });
  t.teardown(() => void serve.child.kill('SIGKILL'));
  await serve.logged(/content server listening/);
  serve.child.kill('SIGTERM');
  t.equal((await serve.exited).code, 0);

  const erp = join(env.location.configDir, 'erpHttp.yaml');
  writeFileSync(erp, 'systems: none\n');
  const broken = await cli(['certs', 'list', '--config', env.location.configDir], { SAP_PASSWORD: undefined });
  t.equal(broken.code, 2);
  t.match(broken.stderr, /erpHttp\.yaml: systems: /, 'the system names come from erpHttp.yaml, checked');
  for (const command of ['serve', 'certs']) {
    const help = await cli([command, '--help']);
    t.notMatch(help.stdout, /--jobs/, `${command} offers no task folder: it reads none`);
  }
  const nowhere = await cli(['certs', 'list', '--config', join(env.dir, 'no-such-folder')]);
  t.equal(nowhere.code, 2);
  t.match(nowhere.stderr, /no-such-folder/, 'a configuration folder that is not there is named');
});
