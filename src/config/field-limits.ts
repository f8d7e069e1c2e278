import { shortened } from '../../common/quote.js';
import { callFor } from './templates.js';
import type { TaskConfig, UseCase } from './task-schema.js';

/** An SAP field a repository property goes to, as a task's call declares it with its ABAP length. */
export interface FieldLimit {
  useCase: UseCase;
  task: string;
  target: string;
  length: number;
}

/** Transforms after which a value is as long as before: its length is the SAP field's to check. */
const LENGTH_KEEPING = new Set<unknown>(['upper']);

/**
 * For each repository property, the SAP fields its value goes to with their lengths, from every
 * task's call (its own or the built-in template). A value a transform may shorten (trim, substring,
 * map) or turn into another (date, flag) is checked when it is sent, not before.
 */
export function fieldLimits(tasks: TaskConfig[]): Map<string, FieldLimit[]> {
  const limits = new Map<string, FieldLimit[]>();
  for (const task of tasks) {
    for (const [target, spec] of Object.entries(callFor(task).call.parameters)) {
      if (spec.property === undefined || spec.length === undefined) continue;
      if (!spec.transform.every((t) => LENGTH_KEEPING.has(t))) continue;
      const limit = { useCase: task.useCase, task: task.name, target, length: spec.length };
      limits.set(spec.property, [...(limits.get(spec.property) ?? []), limit]);
    }
  }
  return limits;
}

/** The first SAP field of `useCase` that `value` is too long for, or undefined when it fits them all. */
export function tooLongFor(
  limits: Map<string, FieldLimit[]>,
  property: string,
  useCase: UseCase,
  value: string,
): FieldLimit | undefined {
  return limits.get(property)?.find((limit) => limit.useCase === useCase && value.length > limit.length);
}

/** Why a value does not fit its SAP field, the value quoted cut to a readable length. */
export const tooLongText = (value: string, limit: FieldLimit): string =>
  `"${shortened(value)}" is longer than the ${limit.length} characters of SAP field ${limit.target} (task ${limit.task})`;
