import { BenchSandboxes, benchMapping, FOLDER, WORKSPACES, type JobRun } from './sandboxes.js';

/** One run given what a user's repository or a mistaken administrator would hand it, and its peak memory. */
export interface BadInput {
  input: string;
  exitCode: number;
  peakRssMb: number;
  /** What the run made of it, from its report. */
  outcome: string;
}

const MB = 1024 * 1024;

type Mapping = { mapping: Array<{ path: string; properties: Record<string, unknown> }> };

function mappingWith(change: (mapping: Mapping) => void): string {
  const mapping = JSON.parse(benchMapping()) as Mapping;
  change(mapping);
  return JSON.stringify(mapping);
}

const entryOf = (mapping: Mapping, path: string) =>
  mapping.mapping.find((e) => e.path === path) as Mapping['mapping'][0];

/** The report's own words for the run: its problems and failure, or what its phases did. */
function outcomeOf(run: JobRun): string {
  const { report } = run;
  if (report.failure !== undefined) return `stopped: ${report.failure.slice(0, 160)}`;
  const tasks = Object.entries(report.tasks)
    .map(([name, task]) => `${name} ${JSON.stringify(task.counts)}`)
    .join(', ');
  const problems =
    report.problems.length > 0 ? `${report.problems.length} problem(s): ${report.problems[0].slice(0, 160)}; ` : '';
  return `${problems}intake ${JSON.stringify(report.intake.counts)}; ${tasks}`;
}

/** A fresh pair of sandboxes set up by `prepare`, one run of the bundled job, its peak RSS. */
async function measure(
  input: string,
  prepare: (sandboxes: BenchSandboxes) => Promise<void> | void,
  run: { task?: string; exitCodes: number[] },
  entry: string,
): Promise<BadInput> {
  const sandboxes = await BenchSandboxes.start({ repositoryMs: 0, erpMs: 0 });
  try {
    await prepare(sandboxes);
    const done = await sandboxes.run({ ...run, entry });
    return { input, exitCode: done.exitCode, peakRssMb: done.peakRssKb / 1024, outcome: outcomeOf(done) };
  } finally {
    await sandboxes.stop();
  }
}

/**
 * The inputs that once made a run's memory follow them (issue 34): each run against its own
 * sandboxes, latency 0, the image's bundle. The first is the yardstick: an ordinary run.
 */
export async function badInputBench(entry: string, log: (line: string) => void): Promise<BadInput[]> {
  const rows: BadInput[] = [];
  const add = async (...args: Parameters<typeof measure>): Promise<void> => {
    log(`bad input: ${args[0]}`);
    rows.push(await measure(...args));
  };
  await add('30 ordinary documents (the yardstick)', (s) => s.addNew('link', 30), { exitCodes: [0] }, entry);
  // A description literal of `mb` for the 60 characters of SAP's DESCR: 5 MB passes the mapping
  // file.s own limit, 3 MB does not.
  const literal =
    (mb: number): Parameters<typeof measure>[1] =>
    async (s) => {
      await s.useMapping(
        mappingWith(
          (m) => (entryOf(m, FOLDER.link).properties['erpCreateALDocument:erpDescription'] = 'x'.repeat(mb * MB)),
        ),
      );
      s.addNew('link', 30);
    };
  await add(
    'a 5 MB literal for a 60-character SAP field in the mapping file, 30 documents',
    literal(5),
    { exitCodes: [2] },
    entry,
  );
  await add(
    'a 3 MB literal for a 60-character SAP field (a mapping file under its 4 MiB limit), 30 documents',
    literal(3),
    { exitCodes: [2] },
    entry,
  );
  await add(
    "95 documents whose 100 KB description is their SAP object's key",
    (s) => s.addNew('link', 95, { description: 'k'.repeat(100 * 1024) }),
    { exitCodes: [1] },
    entry,
  );
  await add(
    'a 50 MB search page: 50 documents with a 1 MB description each, read by the intake',
    (s) => s.addNew('link', 50, { description: 'p'.repeat(MB) }),
    { exitCodes: [1] },
    entry,
  );
  await add(
    'a mapping file of 3,000 entries',
    async (s) => {
      await s.useMapping(
        mappingWith((m) => {
          const [template] = m.mapping;
          for (let i = 0; i < 3000; i++)
            m.mapping.push({ ...template, path: `${WORKSPACES}/Many/F${String(i).padStart(4, '0')}` });
        }),
      );
      s.addNew('link', 30);
    },
    { exitCodes: [0] },
    entry,
  );
  await add(
    'a 200 MB file uploaded over Rest',
    (s) => {
      s.linkOverRest();
      s.addNew('link', 1, { content: Buffer.alloc(200 * MB, 7) });
    },
    { task: 'link', exitCodes: [0] },
    entry,
  );
  return rows;
}
