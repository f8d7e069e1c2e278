import type { TaskConfig } from '../config/task-schema.js';
import type { RepositoryReader } from '../repository/client.js';
import { messageOf, STATUSES } from '../status/facet.js';
import { statusQuery } from '../status/query.js';

interface TaskStatus {
  task: string;
  counts: Record<(typeof STATUSES)[number], number>;
  /** The first failures, oldest uid first, with SAP's or the job's message. */
  failures: Array<{ uid: string; path: string; message: string }>;
}

/** Documents per status per task, counted by the repository (one small query each), and the failures. */
export async function taskStatus(
  tasks: TaskConfig[],
  client: RepositoryReader,
  maxFailures = 50,
): Promise<TaskStatus[]> {
  return Promise.all(
    tasks.map(async (task) => {
      // FAILED is counted by the query that lists the failures; the others need one document each.
      const pages = await Promise.all(
        STATUSES.map((status) =>
          client.search(statusQuery(task, status), { pageSize: status === 'FAILED' ? maxFailures : 1 }),
        ),
      );
      const counts = Object.fromEntries(
        STATUSES.map((status, i) => [status, pages[i].resultsCount]),
      ) as TaskStatus['counts'];
      const failed = pages[STATUSES.indexOf('FAILED')];
      const failures = failed.entries.map((doc) => ({
        uid: doc.uid,
        path: doc.path,
        message: messageOf(doc.properties),
      }));
      return { task: task.name, counts, failures };
    }),
  );
}

/** The status as a terminal table. */
export function renderStatus(status: TaskStatus[]): string {
  const out = [`${'task'.padEnd(12)}${STATUSES.map((s) => s.padStart(14)).join('')}`];
  for (const { task, counts } of status)
    out.push(`${task.padEnd(12)}${STATUSES.map((s) => String(counts[s]).padStart(14)).join('')}`);
  for (const { task, counts, failures } of status) {
    if (failures.length === 0) continue;
    out.push(
      '',
      `failed in task ${task}${counts.FAILED > failures.length ? ` (first ${failures.length} of ${counts.FAILED})` : ''}:`,
    );
    for (const f of failures) out.push(`  ${f.path} (${f.uid})`, `    ${f.message}`);
  }
  return out.join('\n');
}
