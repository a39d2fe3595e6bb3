// answer: an extractive answer span, decoded by the span kernel (only runs of the text's own
// tokens may be written), or null when the model's "None" is likelier than the best span.
import type { Engine } from '../engine/engine.js';
import { charsOf, type Billed } from './billing.js';
import { Prompt } from './prompt.js';
import { Source } from './source.js';
import { Reader } from './windows.js';
import { textsOf } from './texts.js';
import { ServiceError } from '../errors.js';
import type { Static } from '@sinclair/typebox';
import type { AnswerRequest, AnswerResult as AnswerResultSchema } from '../api/answer.js';

export type AnswerInput = Static<typeof AnswerRequest>;
export type AnswerResult = Static<typeof AnswerResultSchema>;

/** One result; a list for several texts or several questions; texts x questions, text-major. */
export type AnswerOutput = AnswerResult | { results: AnswerResult[] } | { results: { results: AnswerResult[] }[] };

const SYSTEM =
  'You answer questions about a text by copying the exact words of the text that answer the question, ' +
  'as few words as possible. If the text does not contain the answer, reply None.';

export class Answer {
  private readonly prompt: Prompt;
  private readonly none: number;
  private readonly reader: Reader;

  constructor(private readonly engine: Engine) {
    this.prompt = new Prompt(engine, SYSTEM);
    this.reader = new Reader(engine);
    this.none = this.prompt.option('None')[0]!;
  }

  async run(input: AnswerInput, signal?: AbortSignal): Promise<Billed<AnswerOutput>> {
    const { texts, list: textList } = textsOf(input);
    const questions = [...(input.question !== undefined ? [input.question] : []), ...(input.questions ?? [])];
    if (questions.length === 0) throw new ServiceError('invalid_request', 'body: provide question or questions');
    const questionList = input.questions !== undefined;
    const excerpts = await Promise.all(texts.map((t) => this.reader.focus(t, questions)));
    const sources = excerpts.map((e) => new Source(this.engine, e));
    const jobs = sources.map((source) =>
      source.job(
        this.prompt.prefix(`Text: ${source.text}\n\n`),
        questions.map((q) => this.prompt.branch(`Question: ${q}`)),
        { none: this.none, maxSpanTokens: 48 },
      ),
    );
    const found = await this.engine.spans(jobs, signal);
    const answered = found.map((r, i) =>
      questions.map((question, b): AnswerResult => {
        const best = r.spans[b]![0];
        const span = best ? sources[i]!.span(best.start, best.end) : null;
        const none = r.noneLogprobs[b]!;
        // "None" and the span's first token compete at the first step; the span's probability is
        // its share there times the probability of continuing (and closing) exactly this span.
        // A span the model finds less likely than not is no answer.
        const probability =
          !best || !span ? 0 : Math.exp(best.logprob - best.firstLogprob) / (1 + Math.exp(none - best.firstLogprob));
        if (!span || probability < 0.5) return { question, answer: null, probability: 0, start: null, end: null };
        return { question, answer: span.text, probability, start: span.start, end: span.end };
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
      inputTokens: found.reduce((n, r) => n + r.promptTokens, 0),
    };
  }
}
