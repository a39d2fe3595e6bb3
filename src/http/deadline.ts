// A deadline per request: the configured ceiling (DM_REQUEST_TIMEOUT_MS), lowered by the
// caller's x-request-timeout-ms. Past it the request's signal aborts, which cancels its jobs
// (queued ones leave the queue, running ones stop at the next graph node) and frees their
// slots, and the caller gets 504 timeout at once, without waiting for the jobs to unwind.
import { ERRORS } from '../errors.js';
import type { Route } from './types.js';

export const TIMEOUT_HEADER = 'x-request-timeout-ms';

/** `route` with a deadline of at most `ceilingMs`, counted from when its body has been read. */
export function withDeadline(route: Route, ceilingMs: number): Route {
  return {
    ...route,
    handler: async (req) => {
      const ms = deadlineOf(req.headers[TIMEOUT_HEADER], ceilingMs);
      const expired = new AbortController();
      // The handler and the engine see one signal: the client going away or the deadline.
      req.signal = AbortSignal.any([req.signal, expired.signal]);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          expired.abort();
          reject(ERRORS.timeout(ms));
        }, ms);
        route
          .handler(req)
          .then(resolve, reject)
          .finally(() => clearTimeout(timer));
      });
    },
  };
}

/** The header's milliseconds (a whole number from 1), never above the ceiling; the ceiling without it. */
export function deadlineOf(sent: string | undefined, ceilingMs: number): number {
  if (sent === undefined) return ceilingMs;
  if (!/^\d{1,12}$/.test(sent.trim()) || Number(sent) < 1)
    throw ERRORS.invalidRequest(
      `${TIMEOUT_HEADER}: must be a whole number of milliseconds, at least 1 (got ${JSON.stringify(sent.slice(0, 32))})`,
    );
  return Math.min(Number(sent), ceilingMs);
}
