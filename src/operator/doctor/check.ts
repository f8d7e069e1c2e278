import { errorMessage } from '../../../common/errors.js';

/** A check passed, failed, or could not be made (nothing to check, or what it needs failed first). */
type Outcome = 'pass' | 'fail' | 'skip';

/** One line of `doctor`: where, what was found, and for a failure what to do. */
export interface Check {
  /** `configuration`, `repository`, `ERP system S4H`, `content server`. */
  section: string;
  outcome: Outcome;
  found: string;
  advice?: string;
}

/** The checks of one section, built in order. */
export class Section {
  readonly checks: Check[] = [];

  constructor(readonly name: string) {}

  pass(found: string): void {
    this.checks.push({ section: this.name, outcome: 'pass', found });
  }

  fail(found: string, advice: string): void {
    this.checks.push({ section: this.name, outcome: 'fail', found, advice });
  }

  skip(found: string, advice?: string): void {
    this.checks.push({ section: this.name, outcome: 'skip', found, ...(advice === undefined ? {} : { advice }) });
  }

  /** A check whose request failed: the failure is what was found. */
  failed(what: string, error: unknown, advice: string): void {
    this.fail(`${what}: ${errorMessage(error)}`, advice);
  }

  /** Runs a check; a request of it that fails is its failed line, never the end of the others. */
  async attempt(what: string, advice: string, check: () => Promise<void>): Promise<void> {
    try {
      await check();
    } catch (error) {
      this.failed(what, error, advice);
    }
  }
}

const MARK: Record<Outcome, string> = { pass: '✔', fail: '✘', skip: '–' };

/** The checks as a person reads them: a heading per section, a mark per line, advice below. */
export function renderChecks(checks: Check[]): string {
  const lines: string[] = [];
  let section: string | undefined;
  for (const check of checks) {
    if (check.section !== section) {
      if (section !== undefined) lines.push('');
      lines.push(check.section);
      section = check.section;
    }
    lines.push(`  ${MARK[check.outcome]} ${check.found}`);
    if (check.advice !== undefined) lines.push(`    → ${check.advice}`);
  }
  const failed = checks.filter((c) => c.outcome === 'fail').length;
  const skipped = checks.filter((c) => c.outcome === 'skip').length;
  lines.push('', `${checks.length - failed - skipped} passed, ${failed} failed, ${skipped} not checked`);
  return `${lines.join('\n')}\n`;
}
