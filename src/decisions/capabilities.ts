// The capabilities, one line each: the wire half (src/api/<name>.ts: schemas, cross-field rules,
// an example) and how its decision opens on an engine. src/service.ts opens them, the routes serve
// them, /openapi.json documents them, the library offers them (`dm.<name>`, `dm.billed.<name>`) and
// the tests take their examples from here, in this order. A new capability is a schema file, a
// decision file and one line below.
import type { Static, TSchema } from '@sinclair/typebox';
import type { Engine, Session } from '../engine/engine.js';
import type { CapabilityApi } from '../api/capability.js';
import { compile, type Validator } from '../api/validate.js';
import { yesNoApi } from '../api/yes-no.js';
import { classifyApi } from '../api/classify.js';
import { classifyTreeApi } from '../api/classify-tree.js';
import { rateApi } from '../api/rate.js';
import { answerApi } from '../api/answer.js';
import { extractApi } from '../api/extract.js';
import { entitiesApi } from '../api/entities.js';
import { verifyApi } from '../api/verify.js';
import type { BilledBody } from './billing.js';
import type { HeadDecider } from './head-decider.js';
import type { OptionReadout } from './option-readout.js';
import { YesNo } from './yes-no.js';
import { Classify } from './classify.js';
import { ClassifyTree } from './classify-tree.js';
import { Rate } from './rate.js';
import { Answer } from './answer.js';
import { Extract } from './extract.js';
import { Entities } from './entities.js';
import { Verify } from './verify.js';

export const CAPABILITIES = [
  capability(yesNoApi, (o) => o.yesNo),
  capability(classifyApi, (o) => o.classify),
  capability(classifyTreeApi, (o) => new ClassifyTree(o.engine, o.classify, o.heads)),
  capability(rateApi, (o) => o.rate),
  capability(answerApi, (o) => new Answer(o.engine)),
  capability(extractApi, (o) => o.extract),
  capability(entitiesApi, (o) => new Entities(o.engine)),
  capability(verifyApi, (o) => new Verify(o.engine, o.heads)),
] as const;

/**
 * A decision: a validated request in, the response body and what it is billed for out. All its
 * model work runs in `session`, the one its request was admitted with (Engine.admit).
 */
export interface Decision<I, O> {
  run(input: I, session: Session): Promise<BilledBody<O>>;
}

/**
 * Decisions others build on (classify-tree on classify, chat on classify and extract, System One on
 * yes-no, classify and rate), opened once
 * per engine, the fitted heads the decisions apply (src/heads), when a store holds them, and the
 * shipped trained readouts of choices among options and of rate's levels, when fitted on the
 * engine's model.
 */
export class DecisionSet {
  private shared: { yesNo?: YesNo; classify?: Classify; rate?: Rate; extract?: Extract } = {};
  constructor(
    readonly engine: Engine,
    readonly heads?: HeadDecider,
    readonly readout?: OptionReadout,
    readonly rateReadout?: OptionReadout,
  ) {}
  get yesNo(): YesNo {
    return (this.shared.yesNo ??= new YesNo(this.engine, this.heads));
  }
  get rate(): Rate {
    return (this.shared.rate ??= new Rate(this.engine, this.heads, this.rateReadout));
  }
  get classify(): Classify {
    return (this.shared.classify ??= new Classify(this.engine, this.heads, this.readout));
  }
  get extract(): Extract {
    return (this.shared.extract ??= new Extract(this.engine));
  }
}

/** `classify-tree` -> `classifyTree`: the library's method and the service's field. */
export type Camel<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;

export interface Capability<N extends string, Q extends TSchema, R extends TSchema, D> extends CapabilityApi<N, Q, R> {
  method: Camel<N>;
  /** The one validator HTTP and the library share: schema, well-formed Unicode, then `check`. */
  validate: Validator<Static<Q>>;
  open(opened: DecisionSet): D;
  /** This capability opened on `opened`'s engine. */
  bind(opened: DecisionSet): BoundCapability;
}

/** A capability opened on an engine: its validator and its decision, typed together. */
export interface BoundCapability<I = unknown, O = unknown> {
  capability: Capability<string, TSchema, TSchema, unknown>;
  decision: Decision<I, O>;
  validate(body: unknown): I;
}

/** One line of the table: the wire half and how its decision opens. */
function capability<N extends string, Q extends TSchema, R extends TSchema, D extends Decision<Static<Q>, unknown>>(
  api: CapabilityApi<N, Q, R>,
  open: (opened: DecisionSet) => D,
): Capability<N, Q, R, D> {
  const method = api.name.replace(/-(.)/g, (_, c: string) => c.toUpperCase()) as Camel<N>;
  const validate = compile(api.request, { check: api.check });
  const c: Capability<N, Q, R, D> = {
    ...api,
    method,
    validate,
    open,
    bind: (opened) => ({ capability: c, decision: open(opened), validate }),
  };
  return c;
}

type Table = (typeof CAPABILITIES)[number];
type OutputOf<D> = D extends Decision<never, infer O> ? O : never;

/** Every capability's decision by method name (`yesNo`, `classifyTree`...). */
export type Decisions = { [C in Table as C['method']]: ReturnType<C['open']> };

/** Every capability's request and response body types by method name. */
export type Bodies = {
  [C in Table as C['method']]: { input: Static<C['request']>; output: OutputOf<ReturnType<C['open']>> };
};

/** Opens every capability on one engine, in table order. */
export function openCapabilities(opened: DecisionSet): { decisions: Decisions; bound: BoundCapability[] } {
  const bound: BoundCapability[] = CAPABILITIES.map((c) => c.bind(opened));
  const decisions = Object.fromEntries(bound.map((b) => [b.capability.method, b.decision])) as Decisions;
  return { decisions, bound };
}
