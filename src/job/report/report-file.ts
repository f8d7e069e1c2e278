import { closeSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import type { RunReport } from './report.js';

const FLUSH_AT = 64 * 1024;

/** The phases records are added under: the intake, and each task by name. */
export const INTAKE = 'intake';
export const taskPhase = (name: string): string => `task ${name}`;

/**
 * The JSON report file (`--report`) with every document's record, however many: records are
 * spooled to one file per phase as the run makes them, and copied into the report when it is
 * written. One record per line.
 */
export class ReportFile {
  private readonly spools = new Map<string, { path: string; fd: number; buffer: string }>();

  constructor(private readonly path: string) {}

  add(phase: string, record: object): void {
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
    writeSync(spool.fd, spool.buffer);
    spool.buffer = '';
  }

  /** The report as JSON, each phase's `documents` the full list from its spool. */
  write(report: RunReport): void {
    const out = openSync(this.path, 'w');
    try {
      const { intake, tasks, ...rest } = report;
      writeSync(out, `${JSON.stringify(rest, null, 2).slice(0, -2)},\n  "intake": `);
      this.phase(out, INTAKE, intake);
      writeSync(out, ',\n  "tasks": {');
      Object.entries(tasks).forEach(([name, summary], i) => {
        writeSync(out, `${i === 0 ? '' : ','}\n  ${JSON.stringify(name)}: `);
        this.phase(out, taskPhase(name), summary);
      });
      writeSync(out, '\n  }\n}\n');
    } finally {
      closeSync(out);
      for (const spool of this.spools.values()) {
        closeSync(spool.fd);
        rmSync(spool.path, { force: true });
      }
    }
  }

  private phase(out: number, name: string, summary: { documents: unknown[]; unlisted: number }): void {
    const { documents: _listed, unlisted: _count, ...rest } = summary;
    // `rest` always has counts: its closing brace gives way to the documents.
    writeSync(out, `${JSON.stringify(rest).slice(0, -1)},"documents": [`);
    const spool = this.spools.get(name);
    if (spool !== undefined) {
      this.flush(spool);
      copy(spool.path, out);
    }
    writeSync(out, '\n  ]}');
  }
}

function copy(from: string, to: number): void {
  const fd = openSync(from, 'r');
  const chunk = Buffer.alloc(FLUSH_AT);
  try {
    for (let n = readSync(fd, chunk); n > 0; n = readSync(fd, chunk)) writeSync(to, chunk, 0, n);
  } finally {
    closeSync(fd);
  }
}
