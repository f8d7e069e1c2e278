import { readFileSync } from 'node:fs';

/**
 * The CPU time a process, or one of its threads, has used so far, user and system, in ms (Linux:
 * /proc/<pid>/stat, or /proc/<pid>/task/<thread>/stat, in USER_HZ ticks of 1/100 s).
 */
export function cpuMsOf(pid: number, thread?: number): number {
  const stat = readFileSync(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`, 'utf8');
  // The command's name comes in parentheses and may hold spaces: the fields are read after its last
  // ')', where utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
