import { closeSync, openSync, readSync, rmSync } from 'node:fs';
import { errorMessage } from '../../../common/errors.js';
import { replaceFile, writeAll } from './replace-file.js';
import type { RunReport } from './report.js';

const FLUSH_AT = 64 * 1024;

/** The phases records are added under: the intake, and each task by name. */
export const INTAKE = 'intake';
export const taskPhase = (name: string): string => `task ${name}`;

/** A report that could not be written, with its file and the reason; the last good one is left in place. */
export class ReportNotWritten extends Error {
  override readonly name = 'ReportNotWritten';

  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`the report ${file} was not written (${reason}); the one before is left as it was`);
  }
}

/**
 * The JSON report file (`--report`) with every document's record, however many: records are
 * spooled to one file per phase as the run makes them, and copied into the report when it is
 * written. One record per line. A spool that cannot be written (a full disk) never stops the run:
 * the records after it are dropped and `write` says why the report was not written.
 */
export class ReportFile {
  private readonly spools = new Map<string, { path: string; fd: number; buffer: string }>();
  private failure?: string;

  constructor(readonly path: string) {}

  add(phase: string, record: object): void {
    if (this.failure !== undefined) return;
    try {
      this.spool(phase, record);
    } catch (error) {
      this.failure = errorMessage(error);
      this.removeSpools();
    }
  }

  private spool(phase: string, record: object): void {
    let spool = this.spools.get(phase);
    const line = `\n    ${JSON.stringify(record)}`;
    if (spool === undefined) {
      const path = `${this.path}.${this.spools.size}.part`;
      spool = { path, fd: openSync(path, 'w'), buffer: line };
      this.spools.set(phase, spool);
    } else {
      spool.buffer += `,${line}`;
    }
    if (spool.buffer.length >= FLUSH_AT) this.flush(spool);
  }

  private flush(spool: { fd: number; buffer: string }): void {
    writeAll(spool.fd, spool.buffer);
    spool.buffer = '';
  }

  /** The report as JSON, each phase's `documents` the full list from its spool; ReportNotWritten when it cannot be. */
  write(report: RunReport): void {
    try {
      if (this.failure !== undefined) throw new ReportNotWritten(this.path, this.failure);
      replaceFile(this.path, (out) => this.writeTo(out, report));
    } catch (error) {
      throw error instanceof ReportNotWritten ? error : new ReportNotWritten(this.path, errorMessage(error));
    } finally {
      this.removeSpools();
    }
  }

  private writeTo(out: number, report: RunReport): void {
    const { intake, tasks, ...rest } = report;
    writeAll(out, `${JSON.stringify(rest, null, 2).slice(0, -2)},\n  "intake": `);
    this.phase(out, INTAKE, intake);
    writeAll(out, ',\n  "tasks": {');
    Object.entries(tasks).forEach(([name, summary], i) => {
      writeAll(out, `${i === 0 ? '' : ','}\n  ${JSON.stringify(name)}: `);
      this.phase(out, taskPhase(name), summary);
    });
    writeAll(out, '\n  }\n}\n');
  }

  private removeSpools(): void {
    for (const spool of this.spools.values()) {
      closeSync(spool.fd);
      rmSync(spool.path, { force: true });
    }
    this.spools.clear();
  }

  private phase(out: number, name: string, summary: { documents: unknown[]; unlisted: number }): void {
    const { documents: _listed, unlisted: _count, ...rest } = summary;
    // `rest` always has counts: its closing brace gives way to the documents.
    writeAll(out, `${JSON.stringify(rest).slice(0, -1)},"documents": [`);
    const spool = this.spools.get(name);
    if (spool !== undefined) {
      this.flush(spool);
      copy(spool.path, out);
    }
    writeAll(out, '\n  ]}');
  }
}

function copy(from: string, to: number): void {
  const fd = openSync(from, 'r');
  const chunk = Buffer.alloc(FLUSH_AT);
  try {
    for (let n = readSync(fd, chunk); n > 0; n = readSync(fd, chunk)) writeAll(to, chunk.subarray(0, n));
  } finally {
    closeSync(fd);
  }
}
