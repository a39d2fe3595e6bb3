// answer: an extractive answer span, decoded by the span kernel (only runs of the text's own
// tokens may be written), or null when the model's "None" is likelier than the best span.
import type { Engine, Session } from '../engine/engine.js';
import { charsOf, type BilledBody } from './billing.js';
import { promptTokensOf } from './cost.js';
import { Prompt } from './prompt.js';
import { logit, sigmoid } from './distribution.js';
import { numberIn } from './numbers.js';
import { Source, type TextSpan } from './source.js';
import { Reader } from './windows.js';
import { textsOf } from './texts.js';
import { ERRORS } from '../errors.js';
import type { Static } from '@sinclair/typebox';
import type { AnswerRequest, AnswerResult as AnswerResultSchema } from '../api/answer.js';

export type AnswerInput = Static<typeof AnswerRequest>;
export type AnswerResult = Static<typeof AnswerResultSchema>;

/** One result; a list for several texts or several questions; texts x questions, text-major. */
export type AnswerOutput = AnswerResult | { results: AnswerResult[] } | { results: { results: AnswerResult[] }[] };

// One system prompt for both branches of a question: copying its answer and checking that the
// text states one. Telling the model it will also be asked yes/no questions makes it abstain more
// where the text lacks the answer (docs/performance.md, "Where the decision code's constants come from").
const SYSTEM =
  'You answer questions about a text by copying the exact words of the text that answer the question, ' +
  'as few words as possible. If the text does not contain the answer, reply None. ' +
  'Asked a yes/no question, reply Yes or No.';

// Whether to answer: the span's log-odds plus CHECK_WEIGHT times the check's Yes/No log-odds plus
// CHECK_BIAS, fitted on the fit half of every development set with answers (the best mean accuracy
// per set over a grid, ties kept near the middle; figures in docs/performance.md).
const CHECK_WEIGHT = 0.5;
const CHECK_BIAS = 0.25;

export class Answer {
  private readonly prompt: Prompt;
  private readonly none: number;
  private readonly yesNo: Int32Array; // the first tokens of "Yes" and "No"
  private readonly reader: Reader;

  constructor(private readonly engine: Engine) {
    this.prompt = new Prompt(engine, SYSTEM);
    this.reader = new Reader(engine);
    this.none = this.prompt.option('None')[0]!;
    this.yesNo = Int32Array.from(['Yes', 'No'], (o) => this.prompt.option(o)[0]!);
  }

  async run(input: AnswerInput, session: Session): Promise<BilledBody<AnswerOutput>> {
    const { texts, list: textList } = textsOf(input);
    const questions = [...(input.question !== undefined ? [input.question] : []), ...(input.questions ?? [])];
    if (questions.length === 0) throw ERRORS.invalidRequest('body: provide question or questions');
    const questionList = input.questions !== undefined;
    const excerpts = await Promise.all(texts.map((t) => this.reader.focus(session, t, questions)));
    const sources = excerpts.map((e) => new Source(this.engine, e));
    // Per question two branches on one prefill: one copies the answer, the other (after all the
    // copying ones) scores Yes against No to "does the text state the answer?".
    const branches = [
      ...questions.map((q) => this.prompt.branch(`Question: ${q}`)),
      ...questions.map((q) =>
        this.prompt.branch(`Yes or no: does the text state the answer to this question? ${q.trim()}`),
      ),
    ];
    const how = { none: this.none, maxSpanTokens: 48, firstOptions: this.yesNo, scoredBranches: questions.length };
    const jobs = sources.map((source) => source.job(this.prompt.prefix(`Text: ${source.text}\n\n`), branches, how));
    const found = await session.spans(jobs);
    const answered = found.map((r, i) =>
      questions.map((question, b): AnswerResult => {
        const best = r.spans[b]![0];
        const span = best ? sources[i]!.span(best.start, best.end) : null;
        const none = r.noneLogprobs[b]!;
        // "None" and the span's first token compete at the first step; the span's own probability
        // is its share there times the probability of continuing (and closing) exactly this span.
        // With the check's log-odds it makes the answer's probability; below 0.5 there is none.
        if (!best || !span) return { question, answer: null, probability: 0, start: null, end: null };
        const own = Math.exp(best.logprob - best.firstLogprob) / (1 + Math.exp(none - best.firstLogprob));
        const [yes, no] = r.firstLogprobs.subarray(2 * (questions.length + b), 2 * (questions.length + b) + 2);
        const probability = sigmoid(logit(own) + CHECK_WEIGHT * (yes! - no!) + CHECK_BIAS);
        if (probability < 0.5) return { question, answer: null, probability: 0, start: null, end: null };
        const { text, start, end } = withoutAskedUnit(withoutCause(span, question), question);
        return { question, answer: text, probability, start, end };
      }),
    );
    let body: AnswerOutput;
    if (textList && questionList) body = { results: answered.map((results) => ({ results })) };
    else if (textList) body = { results: answered.map((r) => r[0]!) };
    else if (questionList) body = { results: answered[0]! };
    else body = answered[0]![0]!;
    return {
      body,
      inputChars: charsOf(input.text, input.texts) + charsOf(input.question, input.questions) * texts.length,
      inputTokens: promptTokensOf(found),
    };
  }
}

/**
 * A count whose unit the question already names is answered by the number alone: "How many hours
 * per week is the contract?" gets "38", not "38 hours per week". Applies only where the span is one
 * number followed by words that all occur in the question (a plural "s" aside); "330 metres" for
 * "How tall is it?" keeps its unit.
 */
export function withoutAskedUnit(span: TextSpan, question: string): TextSpan {
  const m = /^(\S+)\s+(\S.*)$/su.exec(span.text);
  const n = m && numberIn(m[1]!);
  if (!m || n === undefined || numberIn(span.text) !== n) return span;
  const asked = new Set(words(question).flatMap((w) => [w, w.replace(/s$/, '')]));
  if (!words(m[2]!).every((w) => asked.has(w) || asked.has(w.replace(/s$/, '')))) return span;
  return { text: m[1]!, start: span.start, end: span.start + m[1]!.length };
}

/**
 * The answer to a "why" question is the reason itself: "because of fog in Amsterdam" is answered
 * "fog in Amsterdam". The connective is the question's, not part of the reason.
 */
export function withoutCause(span: TextSpan, question: string): TextSpan {
  if (!/^\W*why\b/i.test(question)) return span;
  const m = /^(?:because of|because|due to|owing to|as a result of)\s+(?=\S)/i.exec(span.text);
  return m ? { text: span.text.slice(m[0].length), start: span.start + m[0].length, end: span.end } : span;
}

function words(s: string): string[] {
  return s
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '');
}
