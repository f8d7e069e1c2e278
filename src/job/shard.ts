import { ConfigError } from '../../common/errors.js';
import { nxqlString } from '../nxql/literal.js';

/** One of `count` disjoint parts of the documents, by uuid: what one of `count` pods works on. */
export interface Shard {
  /** From 0. */
  index: number;
  count: number;
}

/** The uuid space is cut by its first four hex digits: 65,536 slices, shared out as evenly as `count` allows. */
const SLICES = 0x10000;
const MAX_SHARDS = 256;

/**
 * The shard's condition on `ecm:uuid`, to append to a search ('' without a shard). Nuxeo's uuids
 * are UUID text in lower-case hex, so their text order is the order of the slices; the pager's
 * keyset pages within it.
 */
export function shardCondition(shard: Shard | undefined): string {
  if (shard === undefined) return '';
  const bound = (k: number): string =>
    nxqlString(
      Math.floor((k * SLICES) / shard.count)
        .toString(16)
        .padStart(4, '0'),
    );
  const lower = shard.index === 0 ? '' : ` AND ecm:uuid >= ${bound(shard.index)}`;
  const upper = shard.index === shard.count - 1 ? '' : ` AND ecm:uuid < ${bound(shard.index + 1)}`;
  return `${lower}${upper}`;
}

const problem = (path: string, message: string): ConfigError =>
  new ConfigError([{ file: path.startsWith('--') ? 'command line' : 'environment', path, message }]);

/**
 * The shard a run takes: `--shard k/n` (k from 1), else a Kubernetes Indexed Job's
 * `JOB_COMPLETION_INDEX` (from 0) with `CONNECT2ERP_SHARDS`, the Job's `completions`, which
 * Kubernetes does not pass on by itself; else none, every document.
 */
export function shardOf(option: string | undefined, env: NodeJS.ProcessEnv = process.env): Shard | undefined {
  if (option !== undefined) {
    const match = /^(\d+)\/(\d+)$/.exec(option);
    const [k, n] = match === null ? [0, 0] : [Number(match[1]), Number(match[2])];
    if (n < 1 || n > MAX_SHARDS || k < 1 || k > n)
      throw problem('--shard', `"${option}" is not k/n with 1 ≤ k ≤ n ≤ ${MAX_SHARDS}, e.g. 2/4`);
    return { index: k - 1, count: n };
  }
  const index = env.JOB_COMPLETION_INDEX;
  if (index === undefined) return undefined;
  const count = Number(env.CONNECT2ERP_SHARDS);
  if (!Number.isInteger(count) || count < 1 || count > MAX_SHARDS)
    throw problem(
      'CONNECT2ERP_SHARDS',
      `JOB_COMPLETION_INDEX is set (an Indexed Job), so CONNECT2ERP_SHARDS must be the Job's completions, 1 to ${MAX_SHARDS}`,
    );
  if (!/^\d+$/.test(index) || Number(index) >= count)
    throw problem('JOB_COMPLETION_INDEX', `"${index}" is not a shard of ${count} (0 to ${count - 1})`);
  return { index: Number(index), count };
}
