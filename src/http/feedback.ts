// The routes of decisions that learn from use (src/feedback): corrections in, the heads they
// taught listed with their live figures. Behind the gate like every /v1 route: a correction is
// billed and limited as a request, and an organization sees and corrects only its own.
import { CAPABILITY_PREFIX } from '../api/capability.js';
import type { Feedback } from '../feedback/feedback.js';
import { parseJson } from './json.js';
import type { Route } from './types.js';

export function feedbackRoutes(feedback: Feedback): Route[] {
  return [
    {
      method: 'post',
      path: `${CAPABILITY_PREFIX}/feedback`,
      handler: async (req) => ({
        status: 202,
        body: await feedback.corrections.correct(parseJson(req), req.organization ?? ''),
        billing: { inputTokens: 0 },
      }),
    },
    {
      method: 'get',
      path: '/v1/heads',
      // Keys off (organization ''): every head; keys on: the deployment's and the caller's own.
      handler: async (req) => ({
        status: 200,
        body: { object: 'list', data: await feedback.heads(req.organization || undefined) },
      }),
    },
  ];
}
