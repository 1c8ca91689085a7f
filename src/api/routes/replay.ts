import type { Hono } from 'hono';
import { agentConfig } from '../../config/agent-config';
import { currentReplayPolicy, parseReplayPolicy, ReplayPolicyError } from '../../replay/replay-policy';
import { ReplaySourceError, storedTranscript } from '../../replay/replay-source';
import { runReplay } from '../../replay/replay-report';
import { replayAdvice } from '../../replay/replay-advice';
import { renderReplayHtml } from '../../replay/replay-html';
import type { ApiDeps } from '../api-deps';
import { parseBody, parsePath } from '../parse-request';
import { ApiProblem } from '../problem';
import { replayBody, sessionKeyParams } from '../request-schemas';

/**
 * `POST /v1/sessions/{sessionKey}/replay`: the session replayed under its agent's configuration and
 * the policy in the body, answered as `keel replay --html` writes it (a page with Chart.js inlined).
 */
export function registerReplayRoutes(app: Hono, deps: ApiDeps): void {
  app.post('/v1/sessions/:sessionKey/replay', async (c) => {
    const { sessionKey } = parsePath(c, sessionKeyParams);
    const { policy } = await parseBody(c, replayBody);
    const { agentId } = deps.client.identify(sessionKey);
    const config = agentConfig(deps.settings, agentId);
    let edited;
    try {
      edited = parseReplayPolicy(policy, config, { source: '(the console)', defaultName: 'what-if', sessionKey });
    } catch (err) {
      if (err instanceof ReplayPolicyError) throw new ApiProblem(400, 'invalid-request', err.message, 'policy');
      throw err;
    }
    // A model summary would spend on the provider from a page view: the console replays extractively.
    if (edited.summarizer === 'model')
      throw new ApiProblem(
        400,
        'invalid-request',
        'policy.summarizer: "model" spends on the provider; use `keel replay` for it, or "extractive"',
        'policy',
      );
    const transcript = await storedTranscript(deps.db, agentId, sessionKey).catch((err: unknown) => {
      throw err instanceof ReplaySourceError ? new ApiProblem(404, 'unknown-session', err.message, 'sessionKey') : err;
    });
    const current = currentReplayPolicy(config, sessionKey);
    const policies =
      edited.name === current.name ? [current, { ...edited, name: `${edited.name} (edited)` }] : [current, edited];
    const report = await runReplay(transcript, policies, { advice: replayAdvice(transcript, agentId, config) });
    return c.html(renderReplayHtml(report));
  });
}
