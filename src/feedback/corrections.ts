// Corrections through the API (POST /v1/decision-machine-1/feedback): a kept decision's id and what
// it should have answered, or a whole fit line for a decision the service never saw. Each is
// checked as `decision-machine fit` checks a line (a label off the set, a level off the scale:
// 400 naming the field), stored for the organization that sent it, and handed to the refits.
import { randomBytes } from 'node:crypto';
import { ERRORS } from '../errors.js';
import type { Correction, Store } from '../store/store.js';
import { readKeptLine, withoutText } from './hashed-texts.js';
import type { CorrectionNotice } from './refits.js';

/** What a stored correction answers (202). */
export interface CorrectionReceipt {
  object: 'correction';
  id: string;
  /** The corrected decision's id, null for a fit line sent whole. */
  decision: string | null;
  capability: string;
  /** The signature id of the decision: the head its corrections fit. */
  signature: string;
  /** Corrections of this decision the organization has sent, this one included. */
  corrections: number;
}

export interface CorrectionsOptions {
  /** How long a decision may be corrected, ms (DM_FEEDBACK_RETENTION). */
  retentionMs: number;
  /** False: a correction sent whole is stored with its text's hash, not the text (DM_FEEDBACK_TEXTS=hash). */
  keepTexts?: boolean;
  /** Told of every stored correction (the refits, src/feedback/refits.ts). */
  onCorrection?: (notice: CorrectionNotice) => void;
}

export class Corrections {
  constructor(
    private readonly store: Store,
    private readonly options: CorrectionsOptions,
  ) {}

  /** Checks and stores one correction for `organization`; throws the 400 or 404 it deserves. */
  async correct(body: unknown, organization: string): Promise<CorrectionReceipt> {
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      throw invalid('body: a JSON object, {"id", "expect"} or a fit line {"cap", "req", "expect"}');
    const fields = body as Record<string, unknown>;
    const { line, decision, answer } =
      'id' in fields ? await this.ofDecision(fields, organization) : { line: wholeLine(fields), decision: null };
    const example = readKeptLine(line);
    const json = JSON.stringify(line);
    const correction: Correction = {
      id: decision?.id ?? `cor_${randomBytes(12).toString('hex')}`,
      organization,
      signature: example.sig.id,
      line: this.options.keepTexts === false ? withoutText(json) : json,
      head: decision?.head ?? '',
      right: answer === undefined ? null : sameAnswer(answer, line.expect),
      at: new Date().toISOString(),
    };
    await stored(this.store.saveCorrection(correction));
    const count = await stored(this.store.countCorrections(organization, example.sig.id));
    // A decision no head made is what the shipped decision answers: the route check needs no asking.
    const routeAnswer = decision && decision.head === '' ? answer : undefined;
    this.options.onCorrection?.({ organization, example, id: correction.id, routeAnswer, count });
    return {
      object: 'correction',
      id: correction.id,
      decision: decision?.id ?? null,
      capability: example.sig.definition.capability,
      signature: example.sig.id,
      corrections: count,
    };
  }

  /** The fit line of a kept decision with the sent expect; 404 when the caller cannot correct it. */
  private async ofDecision(fields: Record<string, unknown>, organization: string) {
    const { id, expect, question, ...rest } = fields;
    if (typeof id !== 'string') throw invalid('id: the x-decision-id of the decision to correct, a string');
    if (question !== undefined && (typeof question !== 'string' || question === ''))
      throw invalid('question: the id of the System One question to correct, a string');
    const extra = Object.keys(rest)[0];
    if (extra !== undefined) throw invalid(`${extra}: not a field of a correction (id, expect, question)`);
    if (expect === null || typeof expect !== 'object' || Array.isArray(expect))
      throw invalid('expect: an object, as a fit line holds it (answer, label, path, level or matches)');
    // A System One request keeps each question as `<id>/<question id>`.
    const kept = await stored(this.store.findDecision(question === undefined ? id : `${id}/${question}`));
    const since = Date.now() - this.options.retentionMs;
    if (!kept || kept.organization !== organization || Date.parse(kept.at) < since) {
      const shown = id.length > 64 ? `${JSON.stringify(id.slice(0, 64))}…` : JSON.stringify(id);
      const asked = question === undefined ? '' : ` (question ${JSON.stringify(String(question).slice(0, 64))})`;
      throw ERRORS.decisionNotFound(`${shown}${asked}`, days(this.options.retentionMs));
    }
    const line = { ...(JSON.parse(kept.line) as Record<string, unknown>), expect };
    return { line, decision: kept, answer: JSON.parse(kept.answer) as Record<string, unknown> };
  }
}

/** A fit line sent whole: exactly cap, req and expect. */
function wholeLine(fields: Record<string, unknown>): Record<string, unknown> & { expect?: unknown } {
  const extra = Object.keys(fields).find((k) => k !== 'cap' && k !== 'req' && k !== 'expect');
  if (extra !== undefined)
    throw invalid(`${extra}: not a field of a correction ({"id", "expect"} or {"cap", "req", "expect"})`);
  if (!('cap' in fields)) throw invalid('body: {"id", "expect"} or a fit line {"cap", "req", "expect"}');
  return fields;
}

/** Whether the decision answered what the correction expects (a confirmation, not a correction). */
function sameAnswer(answer: Record<string, unknown>, expect: unknown): boolean {
  const [key] = Object.keys(answer);
  return key !== undefined && JSON.stringify(answer[key]) === JSON.stringify((expect as Record<string, unknown>)[key]);
}

const invalid = (message: string) => ERRORS.invalidRequest(message);

/** A store call whose failure is the client's 503 (retry later), not a 500: nothing was stored. */
function stored<T>(call: Promise<T>): Promise<T> {
  return call.catch((err: unknown) => {
    throw ERRORS.storeUnavailable(`corrections cannot be reached (${(err as Error).message}); nothing was stored`);
  });
}

function days(ms: number): string {
  const d = ms / 86_400_000;
  return Number.isInteger(d) ? `${d} day${d === 1 ? '' : 's'}` : `${Math.round(ms / 1000)} s`;
}
