/**
 * The application's workflow, on its own task queue: one question, three agent tasks in parallel
 * (one per angle), their answers merged. Each task is a Keel session running as a child workflow on
 * Keel's task queue; cancelling this workflow cancels all three.
 */
import { runAgentTask, type AgentTaskResult } from 'keel-agents/workflow';

export interface ResearchInput {
  readonly question: string;
  /** The Keel workers' task queue (their KEEL_TASK_QUEUE); default `keel`. */
  readonly keelTaskQueue?: string;
}

export interface ResearchAnswer {
  /** The three answers, one paragraph per angle. */
  readonly answer: string;
  /** Each task's reply and the session it ran in (`keel status <sessionKey>` shows it). */
  readonly perspectives: ReadonlyArray<{ readonly angle: string; readonly reply: string; readonly sessionKey: string }>;
  /** Tokens the three tasks spent. */
  readonly inputTokens: number;
  readonly outputTokens: number;
}

const ANGLES = ['history', 'engineering', 'economics'] as const;

export async function researchWorkflow(input: ResearchInput): Promise<ResearchAnswer> {
  const results: AgentTaskResult[] = await Promise.all(
    ANGLES.map((angle) =>
      runAgentTask({
        agentId: 'research',
        text: `Answer from the ${angle} angle, in two sentences: ${input.question}`,
        // A task, not a conversation: the short system prompt, and only the tool it needs.
        promptMode: 'minimal',
        tools: ['lookup'],
        ...(input.keelTaskQueue ? { taskQueue: input.keelTaskQueue } : {}),
      }),
    ),
  );
  const perspectives = results.map((r, i) => ({ angle: ANGLES[i]!, reply: r.reply, sessionKey: r.sessionKey }));
  return {
    answer: perspectives.map((p) => `${p.angle}: ${p.reply}`).join('\n\n'),
    perspectives,
    inputTokens: results.reduce((sum, r) => sum + r.usage.inputTokens, 0),
    outputTokens: results.reduce((sum, r) => sum + r.usage.outputTokens, 0),
  };
}
