// A trained readout for choosing among options: one scorer of "this option fits this text", fitted
// across many label sets (bench/train/readouts.ts) so that it holds for label sets it never saw.
// Per option it adds to the zero-shot reading z (the option's log-probability with the label set's
// prior divided out) the log-probability that the reply ends after the whole option, e, and a
// linear function of the model's hidden state at the option's last token, h, both read with the
// whole prompt before the option:
//
//   s = a z + b e + v . h,   P(option) = softmax(s) over the options
//
// e and h are centred over the options (softmax ignores what every option shares). With v = 0,
// b = 0 it is the zero-shot reading at temperature 1/a: the fit is regularised toward that. The
// data file (readouts/options.json) says what it was fitted on, for which model (sha256), and how
// it did on sources it was not fitted on.
import { existsSync, readFileSync } from 'node:fs';
import type { ScoreJob, ScoreResult } from '../binding.js';
import { READING_VERSION } from './reading.js';

export interface OptionReadoutData {
  modelSha256: string;
  layer: number; // ScoreJob.hiddenLayers' index: -1 is the final state
  a: number;
  b: number;
  v: number[];
  /** The scores' softmax temperature (1 when absent), fitted on labelled decisions the readout was not fitted on. */
  temperature?: number;
  /** The version of the reading it was fitted on (absent: 1). */
  reading?: number;
  provenance: Record<string, unknown>;
}

export const OPTION_READOUT_FILE = new URL('../../../src/decisions/readouts/options.json', import.meta.url);

/**
 * The job that reads every option after `prompt` (the whole prompt the options are scored after):
 * one branch per option's tokens, the end of turn scored after each, `layer`'s hidden state kept.
 */
export function optionsJob(prompt: Int32Array, options: Int32Array[], endOfTurn: Int32Array, layer: number): ScoreJob {
  return { prefix: prompt, branches: options, options: [endOfTurn], hidden: true, hiddenLayers: [layer] };
}

export class OptionReadout {
  constructor(private readonly data: OptionReadoutData) {}

  /**
   * The shipped readout when there is one and it was fitted on this model (`sha256`, asked only
   * when there is one: hashing a model given by path takes seconds) and on the reading in use
   * (`reading`: the version of the decision's reading, reading.ts or rate.ts).
   */
  static async forModel(
    sha256: () => Promise<string>,
    file: URL | string = OPTION_READOUT_FILE,
    reading = READING_VERSION,
  ): Promise<OptionReadout | undefined> {
    if (!existsSync(file)) return undefined;
    const data = JSON.parse(readFileSync(file, 'utf8')) as OptionReadoutData;
    if ((data.reading ?? 1) !== reading) return undefined;
    return data.modelSha256 === (await sha256()) ? new OptionReadout(data) : undefined;
  }

  /** The layer whose state it reads (ScoreJob.hiddenLayers: -1 is the final state). */
  get layer(): number {
    return this.data.layer;
  }

  /** Each option's score s from its zero-shot reading z and the job's result, at the readout's temperature. */
  scores(z: number[], read: ScoreResult): number[] {
    const { a, b, v, temperature = 1 } = this.data;
    const dim = v.length;
    const hidden = read.hidden!;
    const e = Array.from(read.logprobs);
    const eMean = e.reduce((s, x) => s + x, 0) / e.length;
    // v . (h - mean h) differs from v . h by the same amount for every option: softmax drops it.
    return z.map((zk, k) => {
      let vh = 0;
      for (let d = 0; d < dim; d++) vh += v[d]! * hidden[k * dim + d]!;
      return (a * zk + b * (e[k]! - eMean) + vh) / temperature;
    });
  }
}
