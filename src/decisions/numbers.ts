// The one number a span of text states, written in digits ("2,000 USD", "3.5%"), in words
// ("three", "twenty-five", "two hundred and ten") or both ("3 billion"). verify compares numbers
// through it and extract reads number fields with it.

const SMALL = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
];
const TENS = ['twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const WORDS = new Map<string, number>([
  ...SMALL.map((w, i) => [w, i] as const),
  ...TENS.map((w, i) => [w, 20 + 10 * i] as const),
]);
const SCALES = new Map([
  ['hundred', 100],
  ['thousand', 1e3],
  ['million', 1e6],
  ['billion', 1e9],
]);

// Digits (with thousands separators) optionally scaled, or a run of number words.
const SCALE = [...SCALES.keys()].join('|');
const WORD = [...WORDS.keys(), ...SCALES.keys()].join('|');
const NUMBER = new RegExp(
  String.raw`(-?\d[\d,\s]*(?:\.\d+)?)(?:\s*(${SCALE})\b)?|\b(?:${WORD})(?:(?:[\s-]+|\s+and\s+)(?:${WORD}))*\b`,
  'gi',
);

/** The number a span states; undefined when it states none or several. */
export function numberIn(s: string): number | undefined {
  const found = [...s.matchAll(NUMBER)];
  if (found.length !== 1) return undefined;
  const [whole, digits, scale] = found[0]!;
  const n =
    digits !== undefined
      ? Number(digits.replace(/[,\s]/g, '')) * (SCALES.get(scale?.toLowerCase() ?? '') ?? 1)
      : spelled(whole);
  return Number.isFinite(n) ? n : undefined;
}

/** "two hundred and ten" -> 210, "twenty-five thousand" -> 25000. */
function spelled(words: string): number {
  let total = 0;
  let group = 0; // the part below the last thousand / million / billion
  for (const w of words.toLowerCase().split(/[\s-]+/)) {
    const small = WORDS.get(w);
    const scale = SCALES.get(w);
    if (small !== undefined) group += small;
    else if (scale === 100) group = (group || 1) * 100;
    else if (scale !== undefined) {
      total += (group || 1) * scale;
      group = 0;
    }
  }
  return total + group;
}
