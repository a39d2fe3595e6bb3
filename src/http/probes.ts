// Liveness and readiness, and the process's phases around them: loading (the listener is open,
// the model is not), ready, draining (a stop was asked for: admitted requests finish, nothing new
// is admitted). GET /health is 200 whenever the process runs; GET /ready is 200 only when
// requests are admitted, else 503 not_ready in the envelope, or 503 store_unavailable while the
// database has not answered since start-up. Both are public.
import { ERRORS } from '../errors.js';
import type { ApiReply, Route } from './types.js';

export type Phase = 'loading' | 'ready' | 'draining';

export class Probes {
  private current: Phase = 'loading';
  private inflight = 0;
  private idle: (() => void) | undefined;
  private readonly started = performance.now();

  /** `storeReached` says whether the store has answered since start-up (and the heads are loaded). */
  constructor(private readonly storeReached: () => boolean = () => true) {}

  get phase(): Phase {
    return this.current;
  }

  /** The model is loaded and its routes are served. */
  ready(): void {
    if (this.current === 'loading') this.current = 'ready';
  }

  /** A stop was asked for: /ready turns 503 now. */
  drain(): void {
    this.current = 'draining';
  }

  /** GET /health, GET /ready, and while loading a 503 not_ready for every other GET and POST. */
  routes(): Route[] {
    const notReady = () => (this.current === 'loading' ? ERRORS.loading() : ERRORS.shuttingDown());
    const pending: Route['handler'] = async () => {
      if (this.current === 'loading') throw notReady();
      return UNROUTED; // any path the loaded service does not serve
    };
    return [
      {
        method: 'get',
        path: '/health',
        handler: async () => ({
          status: 200,
          body: { status: 'ok', phase: this.current, uptime_s: Math.round(performance.now() - this.started) / 1000 },
        }),
      },
      {
        method: 'get',
        path: '/ready',
        handler: async () => {
          if (this.current !== 'ready') throw notReady();
          if (!this.storeReached()) throw ERRORS.storeUnavailable('the database has not answered since start-up');
          return { status: 200, body: { status: 'ready' } };
        },
      },
      { method: 'get', path: '/*', handler: pending },
      { method: 'post', path: '/*', handler: pending },
    ];
  }

  /** `route` counted while it runs, its usage row included, so a drain can wait for it. */
  tracked = (route: Route): Route => ({
    ...route,
    handler: async (req) => {
      this.inflight++;
      try {
        return await route.handler(req);
      } finally {
        if (--this.inflight === 0) this.idle?.();
      }
    },
  });

  /** Resolves when no tracked request is running. */
  async settled(): Promise<void> {
    while (this.inflight > 0) await new Promise<void>((resolve) => (this.idle = resolve));
  }
}

// What uws.ts answers for a path no route serves.
const UNROUTED: ApiReply = { status: 404, body: 'Not Found', contentType: 'text/plain' };
