import t from 'tap';
import { sandboxEnv } from './helpers/env.js';

for (const [pageSize, round, n] of [
  [5, 3, 25],
  [10, 10, 60],
]) {
  t.test(`${pageSize}/${round}`, async (t) => {
    const env = await sandboxEnv(t, {
      sandbox: { repository: { searchLagMs: 0 } },
      storage: { pageSize: String(pageSize), intakeRoundSize: String(round) },
    });
    await Promise.all(Array.from({ length: n }, (_, i) => env.upload('ERP/Workflow', `a-${i}.pdf`)));
    const report = await env.job({ task: 'workflow' });
    t.equal(env.erp.tables.inbox.length, n, JSON.stringify(report.tasks.workflow.counts));
    t.equal(report.exitCode, 0, JSON.stringify(report, null, 1).slice(0, 3000));
  });
}
