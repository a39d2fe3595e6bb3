// Where a sweep's texts come from. Generated texts are drawn from a seeded generator: the same
// seed gives the same texts in the same order on every machine, and every text differs from the
// others from its first word on, so no prompt cache can serve one text's tokens to another
// (only the instructions a capability puts before the text are shared). `--texts FILE` sends a
// user's own requests instead: JSONL lines of `{"cap": CAPABILITY, "req": BODY}` (the shape of
// `decision-machine fit`'s file and of the evaluation sets; other keys, such as `expect`, are ignored).
import { readFileSync } from 'node:fs';
import { uniform } from '../heads/random.js';

const NAMES = ['Maria Lopez', 'Jon Berg', 'Aiko Tanaka', 'Omar Haddad', 'Lena Fischer', 'Raj Patel', 'Eva Novak'];
const PLACES = ['Lisbon', 'Oslo', 'Osaka', 'Cairo', 'Munich', 'Pune', 'Prague', 'Leeds', 'Quito', 'Perth'];
const THINGS = ['invoice', 'parcel', 'contract', 'refund', 'booking', 'laptop', 'subscription', 'lease', 'ticket'];
const OPENINGS = ['Yesterday', 'This morning', 'Last week', 'On Monday', 'After lunch', 'Late on Friday', 'Today'];
const EVENTS = [
  'reported that the {thing} from {place} was charged twice',
  'asked whether the {thing} could be moved to {place}',
  'said the {thing} arrived damaged and wants a replacement',
  'confirmed that the {thing} was paid in full',
  'complained that nobody answered about the {thing}',
  'wrote that the {thing} has to be cancelled before day {n}',
  'noted that the {thing} costs {n} EUR more than agreed',
];
const TAILS = [
  'The team promised an answer within {n} days.',
  'A manager in {place} will call back.',
  'No further action is needed at this point.',
  'The customer has been with us since {year}.',
  'Two earlier messages about this went unanswered.',
  'The case was marked urgent by support.',
];

/** Texts of about `chars` characters (cut at a word), different for every index. */
export class TextGenerator {
  private readonly random: () => number;

  constructor(seed: number) {
    this.random = uniform(seed);
  }

  next(chars: number): string {
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(this.random() * xs.length)]!;
    const fill = (s: string) =>
      s
        .replaceAll('{thing}', pick(THINGS))
        .replaceAll('{place}', pick(PLACES))
        .replaceAll('{n}', String(2 + Math.floor(this.random() * 400)))
        .replaceAll('{year}', String(2000 + Math.floor(this.random() * 26)));
    let text = '';
    while (text.length < chars) {
      text += `${pick(OPENINGS)} ${pick(NAMES)} ${fill(pick(EVENTS))}. ${fill(pick(TAILS))} `;
    }
    const cut = text.slice(0, chars);
    const lastSpace = cut.lastIndexOf(' ');
    return (lastSpace > chars / 2 ? cut.slice(0, lastSpace) : cut).trim();
  }
}

/** One request of a user's file. */
export interface FileRequest {
  cap: string;
  req: Record<string, unknown>;
}

/** The lines of a `--texts` file; throws naming the line that is not `{"cap", "req"}`. */
export function readRequests(file: string): FileRequest[] {
  const out: FileRequest[] = [];
  for (const [i, line] of readFileSync(file, 'utf8').split('\n').entries()) {
    if (!line.trim()) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new Error(`${file}:${i + 1}: not JSON`);
    }
    const { cap, req } = (parsed ?? {}) as { cap?: unknown; req?: unknown };
    if (typeof cap !== 'string' || req === null || typeof req !== 'object' || Array.isArray(req))
      throw new Error(`${file}:${i + 1}: expected {"cap": CAPABILITY, "req": {...}}`);
    out.push({ cap, req: req as Record<string, unknown> });
  }
  if (out.length === 0) throw new Error(`${file}: no requests`);
  return out;
}
