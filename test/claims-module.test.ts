import t from 'tap';
import fc from 'fast-check';
import { quietLog, sandboxEnv, type Env } from './helpers/env.js';
import { addFiles } from './helpers/backlog.js';
import { Claims } from '../src/job/claims/claims.js';
import type { Claim } from '../src/job/claims/claim.js';
import { liveWriter } from '../src/ports/repository-writer.js';
import { RepositoryClient } from '../src/repository/client.js';
import type { RepositoryDocument } from '../src/repository/document.js';
import { stillDue } from '../src/status/query.js';
import { NO_BLOBS, type StoredDoc } from '../sandbox/repository/store.js';

/**
 * The claims module on its own (src/job/claims/claims.ts), against the repository sandbox over
 * real HTTP: generated interleavings of two runs that read (possibly stale copies, as a lagging
 * search index gives them), claim, renew, settle and release the same documents, while the clock
 * moves past expiries, a user edits, the repository's answers to writes are lost and a run
 * crashes. After every step: no two runs hold an unexpired claim on one document; every claim in
 * the repository with a live run's token, unexpired, is one that run knows it holds (a lost answer never
 * leaves a claim behind its run's back); what a run lists in flight is what it holds; no document
 * is settled DONE twice. At the end, a later run takes over what is left: every document is DONE
 * exactly once and none is claimed. `C2E_CLAIMS_RUNS` sets the number of cases (CI: the default).
 */

const RUNS = Number(process.env.C2E_CLAIMS_RUNS ?? 100);
t.setTimeout(Math.max(120_000, RUNS * 5_000));

const TERMS = { name: 'link', claimTimeoutMs: 1_000 };
const STATUS_FACET = 'fct_erp_task_status';

const run = fc.constantFrom(0, 1);
const doc = fc.integer({ min: 0, max: 1 });
const step = fc.oneof(
  fc.record({ op: fc.constant('read' as const), run, doc }),
  fc.record({ op: fc.constant('search' as const), run }),
  fc.record({ op: fc.constant('acquire' as const), run, doc }),
  fc.record({ op: fc.constant('acquire' as const), run, doc }),
  fc.record({ op: fc.constant('renew' as const), run, doc }),
  fc.record({
    op: fc.constant('settle' as const),
    run,
    doc,
    status: fc.constantFrom('DONE' as const, 'RETRY' as const),
  }),
  fc.record({ op: fc.constant('release' as const), run, doc, repeated: fc.boolean() }),
  fc.record({ op: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 2_500 }) }),
  fc.record({ op: fc.constant('edit' as const), doc }),
  fc.record({ op: fc.constant('lose' as const), skip: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ op: fc.constant('crash' as const), run }),
);
type Step = typeof step extends fc.Arbitrary<infer S> ? S : never;

interface Run {
  id: string;
  claims: Claims;
  /** What this run holds, as the module answered it. */
  holds: Map<string, Claim>;
  /** Its copy of each document: possibly stale, as a search answered from a lagging index gives it. */
  view: Map<string, RepositoryDocument>;
}

let runs = 0;
let cases = 0;

function newRun(client: RepositoryClient, now: () => Date): Run {
  const id = `model-run-${++runs}`;
  return {
    id,
    claims: new Claims({ client, writer: liveWriter(client), runId: id, now }),
    holds: new Map(),
    view: new Map(),
  };
}

/** Documents labelled READY, straight in the repository and its index. */
function readyDocuments(env: Env): string[] {
  const uids = addFiles(
    env,
    'ClaimsModel',
    [0, 1].map((i) => `case-${++cases}-${i}.pdf`),
  );
  const { store } = env.sandbox;
  const actor = env.sandbox.actor();
  env.sandbox.index.sync(() => {
    for (const uid of uids) {
      const withFacet = store.addFacet(actor, store.get(uid) as StoredDoc, STATUS_FACET);
      store.update(actor, withFacet, { 'erpTaskStatus:status': 'READY', 'erpTaskStatus:attempts': 0 }, NO_BLOBS, {});
    }
  });
  return uids;
}

t.test('two runs claiming the same documents, with lost answers, expiry and crashes', async (t) => {
  const env = await sandboxEnv(t);
  const client = new RepositoryClient(env.config.storage, quietLog);
  const props = (uid: string) => (env.sandbox.store.get(uid) as StoredDoc).properties;

  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 30 }), async (steps) => {
      let clock = Date.parse('2026-01-01T00:00:00Z') + cases * 1_000_000;
      const now = () => new Date(clock);
      const uids = readyDocuments(env);
      const live = [newRun(client, now), newRun(client, now)];
      const done = new Map<string, number>();
      const problems: string[] = [];

      const settled = (uid: string) => done.set(uid, (done.get(uid) ?? 0) + 1);
      const drop = (r: Run, claim: Claim) => {
        r.holds.delete(claim.doc.uid);
        r.claims.letGo(claim);
      };
      const check = (after: string) => {
        for (const uid of uids) {
          const holders = live.filter((r) => (r.holds.get(uid)?.expires.getTime() ?? 0) > clock);
          if (holders.length > 1) problems.push(`${after}: ${uid} held unexpired by two runs`);
          const token = props(uid)['erpTaskStatus:claimedBy'];
          // A claim given back expired at once (it may be in SAP) stays on the document, for the next run to take over.
          const unexpired = Date.parse(String(props(uid)['erpTaskStatus:claimExpires'])) > clock;
          const owner = live.find((r) => unexpired && typeof token === 'string' && token.startsWith(`${r.id}/`));
          if (owner !== undefined && owner.holds.get(uid)?.token !== token)
            problems.push(`${after}: ${uid} carries a claim of ${owner.id} that the run does not know of`);
          if ((done.get(uid) ?? 0) > 1) problems.push(`${after}: ${uid} settled DONE twice`);
        }
        for (const r of live) {
          const listed = r.claims
            .inFlight()
            .map((d) => d.uid)
            .sort();
          const held = [...r.holds.keys()].sort();
          if (listed.join() !== held.join())
            problems.push(`${after}: ${r.id} lists ${listed.join()} in flight, holds ${held.join()}`);
        }
      };

      const apply = async (s: Step): Promise<void> => {
        if (s.op === 'tick') clock += s.ms;
        else if (s.op === 'lose') env.sandbox.faults.add({ method: 'PUT', skip: s.skip, loseAnswer: true });
        else if (s.op === 'crash') live[s.run] = newRun(client, now);
        else if (s.op === 'search') for (const uid of uids) live[s.run].view.set(uid, await client.getById(uid));
        else if (s.op === 'edit') {
          const stored = env.sandbox.store.get(uids[s.doc]) as StoredDoc;
          env.sandbox.index.sync(() =>
            env.sandbox.store.update(env.sandbox.actor(), stored, { 'dc:description': `edit ${clock}` }, NO_BLOBS, {}),
          );
        } else await runStep(live[s.run], uids[s.doc], s);
      };

      const runStep = async (
        r: Run,
        uid: string,
        s: Exclude<Step, { op: 'tick' | 'lose' | 'crash' | 'edit' | 'search' }>,
      ) => {
        const claim = r.holds.get(uid);
        if (s.op === 'read') r.view.set(uid, await client.getById(uid));
        else if (s.op === 'acquire') {
          const seen = r.view.get(uid) ?? (await client.getById(uid));
          if (claim !== undefined || !stillDue(seen.properties, now())) return;
          const acquired = await r.claims.acquire(seen, TERMS);
          if (acquired !== undefined) r.holds.set(uid, acquired);
        } else if (claim === undefined) return;
        else if (s.op === 'renew') {
          const renewal = await r.claims.renew(claim);
          if ('claim' in renewal) r.holds.set(uid, renewal.claim);
          else {
            // As a lane does: a renewal not written is given back unsent.
            await r.claims.release(claim, false);
            drop(r, claim);
          }
        } else if (s.op === 'settle') {
          const ending =
            s.status === 'DONE'
              ? { status: 'DONE' as const, reference: 'ref', message: undefined }
              : { status: 'RETRY' as const, message: 'again', attempts: 1, retryAt: new Date(clock + 500) };
          if ((await r.claims.settle(claim, ending)) && s.status === 'DONE') settled(uid);
          drop(r, claim);
        } else {
          await r.claims.release(claim, s.repeated);
          drop(r, claim);
        }
      };

      try {
        for (const s of steps) {
          await apply(s);
          check(JSON.stringify(s));
        }
        env.sandbox.faults.clear();
        // A later run, once every claim has expired, takes over whatever is left and sends it.
        clock += 10 * TERMS.claimTimeoutMs;
        const later = newRun(client, now);
        live.push(later);
        for (const uid of uids) {
          const seen = await client.getById(uid);
          if (!stillDue(seen.properties, now())) continue;
          const claim = await later.claims.acquire(seen, TERMS);
          if (claim === undefined) problems.push(`${uid} could not be taken over at the end`);
          else if (await later.claims.settle(claim, { status: 'DONE', reference: 'ref', message: undefined }))
            settled(uid);
        }
        for (const uid of uids) {
          if (done.get(uid) !== 1) problems.push(`${uid} settled DONE ${done.get(uid) ?? 0} times`);
          if (props(uid)['erpTaskStatus:status'] !== 'DONE')
            problems.push(`${uid} ends ${String(props(uid)['erpTaskStatus:status'])}`);
          if (props(uid)['erpTaskStatus:claimedBy'] != null) problems.push(`${uid} ends claimed`);
        }
      } finally {
        env.sandbox.faults.clear();
      }
      if (problems.length > 0) throw new Error(problems.join('\n'));
    }),
    { numRuns: RUNS, seed: Number(process.env.C2E_CLAIMS_SEED ?? 57) },
  );
  t.pass(`${RUNS} generated interleavings held every claim's promises`);
});
