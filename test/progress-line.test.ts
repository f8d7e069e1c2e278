import { Writable } from 'node:stream';
import t from 'tap';
import { ProgressLine } from '../src/commands/progress-line.js';

/** The progress line's text as a terminal of a given width receives it, on a clock the test sets. */
function terminal(columns?: number) {
  let output = '';
  const out = Object.assign(
    new Writable({
      write: (chunk: Buffer, _encoding, callback) => {
        output += chunk.toString('utf8');
        callback();
      },
    }),
    columns === undefined ? {} : { columns },
  );
  let now = 0;
  const line = new ProgressLine(out, () => now);
  return {
    line,
    advance: (ms: number) => (now += ms),
    /** The text after the last clear: what the row shows now. */
    shown: () => output.slice(output.lastIndexOf('\u001b[2K') + 4),
    output: () => output,
  };
}

t.test('a search that cannot count (resultsCount -1) leaves the total unknown: done only, no time left', async (t) => {
  const { line, advance, shown } = terminal();
  line.found('task link', 1000);
  line.found('task link', -1);
  line.done('task link');
  advance(1000);
  line.done('task link');
  t.equal(shown(), 'task link: 2 documents');
});

t.test('the line is cut to the terminal width, so a redraw never leaves a wrapped row behind', async (t) => {
  const { line, shown } = terminal(20);
  line.found('task workflow', 1234);
  t.equal(shown(), 'task workflow: 0 of');
  t.equal(shown().length, 19);
});

t.test('after end, a log line is written alone: the line does not come back before the summary', async (t) => {
  const { line, output } = terminal();
  line.found('task link', 2);
  line.end();
  const before = output().length;
  line.logStream.write('2026-11-24 error metrics push failed\n');
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(output().slice(before), '2026-11-24 error metrics push failed\n');
});

t.test('a backlog not all counted yet promises no end: "found so far", no time left until it is settled', async (t) => {
  const { line, advance, shown } = terminal();
  line.found('task link', 965);
  for (let i = 0; i < 899; i++) {
    advance(10);
    line.done('task link');
  }
  advance(200);
  line.done('task link');
  t.equal(shown(), 'task link: 900 of 965 documents found so far · 98.0/s', 'the intake still hands it documents');
  line.found('task link', 2035);
  line.settle('task link');
  advance(200);
  line.done('task link');
  t.match(shown(), /^task link: 901 of 3,000 documents · \d+\.\d\/s · about \d+ seconds left$/, 'then the time left');
});
