import { drain } from '../repository/pager.js';
import { applyPlans, type IntakeDeps, type IntakeOutcome } from './apply.js';
import type { MappingFile } from './mapping-schema.js';
import { intakeQuery, planDocument } from './plan.js';

/** The `Document created` replacement: label every new File under each mapped path; no new page once the run is stopping. */
export async function runIntake(
  mapping: MappingFile,
  deps: IntakeDeps & { pageSize: number; stop: AbortSignal },
): Promise<IntakeOutcome[]> {
  const outcomes: IntakeOutcome[] = [];
  const paths = mapping.mapping.map((e) => e.path);
  for (const entry of mapping.mapping) {
    for await (const page of drain(deps.client, intakeQuery(entry, paths), deps.pageSize, deps.stop)) {
      const results = await applyPlans(page.map((doc) => planDocument(entry, doc)), deps);
      for (const outcome of results) {
        const fields = { uid: outcome.plan.doc.uid, path: outcome.plan.doc.path, mapping: entry.path };
        if (outcome.skipped !== undefined) deps.log.info('document left to another run', { ...fields, reason: outcome.skipped });
        else if (outcome.error === undefined) deps.log.info('document labelled', { ...fields, status: outcome.plan.status['erpTaskStatus:status'] });
        else deps.log.warn('document not labelled', { ...fields, error: outcome.error, transient: outcome.transient ?? false });
      }
      outcomes.push(...results);
    }
  }
  return outcomes;
}
