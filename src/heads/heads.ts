// The heads a service applies: every head of the store fitted on this model, reloaded when the
// store changes (every replica of a deployment polls the same store, so all serve the same heads).
// A head fitted on another model is not loaded: its features mean nothing on this one.
import type { HeadRecord, Store } from '../store/store.js';
import type { HeadParams } from './logistic.js';
import { signatureId, type Signature } from './signature.js';
import { READING_VERSION } from '../decisions/reading.js';

/** A head ready to apply. */
export interface Head {
  id: string;
  capability: string;
  /** '' for the deployment's head; else the one organization whose requests it decides. */
  organization: string;
  /** The signature id of the decision it decides (its own id for a deployment head). */
  signature: string;
  createdAt: string;
  examples: number;
  outcomes: string[];
  params: HeadParams;
}

/** What a head's record keeps besides its weights. */
export interface HeadMeta {
  outcomes: string[];
  dim: number;
  strength: number;
  /** The fit's figures: cross-validated accuracy zero-shot and fitted, folds, seconds. */
  report: Record<string, number | string>;
  /** The version of the reading its features were read with (reading.ts READING_VERSION; absent: 1). */
  reading?: number;
}

/** The parameters as the store keeps them: mean, scale, weights and bias, Float32, little-endian. */
export function encodeParams(p: HeadParams): Uint8Array {
  const all = new Float32Array(2 * p.dim + p.outcomes * p.dim + p.outcomes);
  all.set(p.mean, 0);
  all.set(p.scale, p.dim);
  all.set(p.weights, 2 * p.dim);
  all.set(p.bias, 2 * p.dim + p.outcomes * p.dim);
  return new Uint8Array(all.buffer);
}

export function decodeParams(bytes: Uint8Array, outcomes: number, dim: number): HeadParams {
  const want = (2 * dim + outcomes * dim + outcomes) * 4;
  if (bytes.byteLength !== want) throw new Error(`head weights: ${bytes.byteLength} bytes, expected ${want}`);
  const all = new Float32Array(bytes.slice().buffer);
  return {
    outcomes,
    dim,
    mean: all.subarray(0, dim),
    scale: all.subarray(dim, 2 * dim),
    weights: all.subarray(2 * dim, 2 * dim + outcomes * dim),
    bias: all.subarray(2 * dim + outcomes * dim),
  };
}

/** A stored record as a head for the model `model` of hidden size `dim`; throws saying why not. */
export function headOf(record: HeadRecord, model: string, dim: number): Head {
  if (record.model !== model) {
    throw new Error(
      `head ${record.id} was fitted on model sha256 ${record.model.slice(0, 12)}..., this service runs ` +
        `${model.slice(0, 12)}...: refit it on this model (decision-machine fit)`,
    );
  }
  const meta = JSON.parse(record.meta) as HeadMeta;
  if ((meta.reading ?? 1) !== READING_VERSION) {
    throw new Error(
      `head ${record.id} was read with an earlier reading of its decision (version ${meta.reading ?? 1}, ` +
        `this service reads version ${READING_VERSION}): refit it (decision-machine fit)`,
    );
  }
  if (meta.dim !== dim) throw new Error(`head ${record.id}: hidden size ${meta.dim}, this model's is ${dim}`);
  return {
    id: record.id,
    capability: record.capability,
    organization: record.organization,
    signature: signatureId(record.signature),
    createdAt: record.createdAt,
    examples: record.examples,
    outcomes: meta.outcomes,
    params: decodeParams(record.weights, meta.outcomes.length, dim),
  };
}

const headKey = (organization: string, signature: string) => `${organization}\n${signature}`;

const POLL_MS = 2000;
const FIRST_POLL_MS = 1000;

export class Heads {
  private heads = new Map<string, Head>();
  private version = '';
  private timer?: NodeJS.Timeout;
  private failing = false;
  private closed = false;

  private constructor(
    private readonly store: Store,
    private readonly model: string,
    private readonly dim: number,
    private readonly warn: (message: string) => void,
  ) {}

  /**
   * Loads the store's heads for `model` and keeps them current (polling every 2 s). A store that
   * does not answer is warned about once per outage and asked again at the next poll; at open it
   * fails the open unless `storeMayBeAway`, and then `loaded` says when the heads have been read.
   */
  static async open(
    store: Store,
    model: string,
    dim: number,
    warn: (m: string) => void,
    storeMayBeAway = false,
  ): Promise<Heads> {
    const heads = new Heads(store, model, dim, warn);
    if (!storeMayBeAway) await heads.reload();
    const poll = () =>
      heads.reload().then(
        () => (heads.failing = false),
        (err: Error) => {
          if (!heads.failing) warn(`heads: ${err.message}; asked again at the next poll`);
          heads.failing = true;
        },
      );
    if (!heads.loaded) await poll();
    // Every second until the heads are read once (GET /ready waits for them), then every 2 s.
    const next = (): void => {
      if (heads.closed) return;
      heads.timer = setTimeout(() => void poll().then(next), heads.loaded ? POLL_MS : FIRST_POLL_MS);
      heads.timer.unref();
    };
    next();
    return heads;
  }

  get loaded(): boolean {
    return this.version !== '';
  }

  /**
   * The head that decides `sig` for `organization`: the one it taught, else the deployment's
   * (a head taught by one organization never decides another's requests).
   */
  find(sig: Signature, organization = ''): Head | undefined {
    return (organization && this.heads.get(headKey(organization, sig.id))) || this.heads.get(headKey('', sig.id));
  }

  /** Every head applied, or only those that decide `organization`'s requests. */
  list(organization?: string): Head[] {
    const all = [...this.heads.values()];
    return organization === undefined
      ? all
      : all.filter((h) => h.organization === '' || h.organization === organization);
  }

  /** Reads the store again when it changed. */
  async reload(): Promise<void> {
    const version = await this.store.headsVersion();
    if (version === this.version) return;
    const next = new Map<string, Head>();
    for (const listed of await this.store.listHeads()) {
      const record = await this.store.findHead(listed.id);
      if (!record) continue;
      try {
        const head = headOf(record, this.model, this.dim);
        next.set(headKey(head.organization, head.signature), head);
      } catch (err) {
        this.warn((err as Error).message);
      }
    }
    this.heads = next;
    this.version = version;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }
}
