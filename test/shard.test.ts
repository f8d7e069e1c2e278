import t from 'tap';
import { shardCondition, shardOf } from '../src/job/shard.js';
import { cli } from './helpers/run-cli.js';
import type { ConfigError, ConfigProblem } from '../common/errors.js';

// Runs over real HTTP: 2 s idle, several times that on a busy machine.
t.setTimeout(120_000);

/** Shards: disjoint uuid ranges that together cover every uuid, chosen on the command line or by an Indexed Job. */

t.test('k/n covers the uuid space in n ranges cut on its first four hex digits', async (t) => {
  t.equal(shardCondition(undefined), '');
  t.equal(shardCondition({ index: 0, count: 1 }), '', 'one shard is every document');
  t.same(
    [0, 1, 2, 3].map((index) => shardCondition({ index, count: 4 })),
    [
      " AND ecm:uuid < '4000'",
      " AND ecm:uuid >= '4000' AND ecm:uuid < '8000'",
      " AND ecm:uuid >= '8000' AND ecm:uuid < 'c000'",
      " AND ecm:uuid >= 'c000'",
    ],
  );
  t.equal(shardCondition({ index: 1, count: 3 }), " AND ecm:uuid >= '5555' AND ecm:uuid < 'aaaa'");
});

/** The problems of the ConfigError `read` throws. */
function problems(read: () => unknown): ConfigProblem[] | undefined {
  try {
    read();
  } catch (error) {
    return (error as ConfigError).problems;
  }
  return undefined;
}

t.test('--shard, else JOB_COMPLETION_INDEX with CONNECT2ERP_SHARDS; every mistake named', async (t) => {
  t.same(shardOf('2/4', {}), { index: 1, count: 4 });
  t.same(
    shardOf('1/1', { JOB_COMPLETION_INDEX: '3', CONNECT2ERP_SHARDS: '4' }),
    { index: 0, count: 1 },
    'the option first',
  );
  t.same(shardOf(undefined, { JOB_COMPLETION_INDEX: '0', CONNECT2ERP_SHARDS: '2' }), { index: 0, count: 2 });
  t.equal(shardOf(undefined, {}), undefined);
  t.equal(shardOf(undefined, { CONNECT2ERP_SHARDS: '4' }), undefined, 'no index, no shard');
  for (const bad of ['0/4', '5/4', '2', 'a/b', '1/0', '1/257'])
    t.match(
      problems(() => shardOf(bad, {})),
      [{ file: 'command line', path: '--shard' }],
      bad,
    );
  t.match(
    problems(() => shardOf(undefined, { JOB_COMPLETION_INDEX: '1' })),
    [{ file: 'environment', path: 'CONNECT2ERP_SHARDS', message: /must be the Job's completions/ }],
  );
  t.match(
    problems(() => shardOf(undefined, { JOB_COMPLETION_INDEX: '4', CONNECT2ERP_SHARDS: '4' })),
    [{ path: 'JOB_COMPLETION_INDEX', message: '"4" is not a shard of 4 (0 to 3)' }],
  );
});

t.test('a bad --shard stops the run before it starts, with the other problems of the command line', async (t) => {
  const result = await cli(['run', '--shard', '5/4', '--grace', 'soon']);
  t.equal(result.code, 2);
  t.match(result.stderr, '2 problem(s)');
  t.match(result.stderr, 'command line: --shard: "5/4" is not k/n with 1 ≤ k ≤ n ≤ 256, e.g. 2/4');
});
