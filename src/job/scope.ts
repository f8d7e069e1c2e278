import { nxqlString } from '../nxql/literal.js';
import { shardCondition, type Shard } from './shard.js';

/** Nuxeo's document ids: UUID text in lower-case hex. */
export const DOCUMENT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Which documents a run takes, as a condition on `ecm:uuid` to append to each of its searches:
 * its shard, and with `--doc` that one document alone ('' for every document).
 */
export function scopeCondition(shard: Shard | undefined, doc: string | undefined): string {
  const one = doc === undefined ? '' : ` AND ecm:uuid = ${nxqlString(doc)}`;
  return `${shardCondition(shard)}${one}`;
}
