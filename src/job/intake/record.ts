import type { IntakeRecord } from '../records.js';
import { statusOf } from '../../status/facet.js';
import type { IntakeOutcome } from './apply.js';

/** A document's intake outcome as its record. */
export function intakeRecord(outcome: IntakeOutcome): IntakeRecord {
  const { plan, error, transient, folderPath, skipped } = outcome;
  const result = skipped !== undefined ? 'skipped' : error !== undefined ? 'error' : 'labelled';
  return {
    uid: plan.doc.uid,
    path: plan.doc.path,
    mapping: plan.entry.path,
    useCase: plan.useCase,
    result,
    status: result === 'labelled' ? String(statusOf(plan.status)) : undefined,
    facets: plan.facets,
    values: plan.values,
    folder: folderPath,
    missing: plan.missing,
    error,
    transient,
    skipped,
  };
}
