/**
 * What a tool call looks like on the real path (client → Temporal → worker → real SDK → fake API,
 * PostgreSQL/PGlite): the model gets each tool's JSON Schema, bad input comes back as an error
 * result, the tool runs with the arguments the model sent while the transcript stores the call and
 * the result redacted, and the raw arguments survive a retried run without reaching history.
 */
import { z } from 'zod';
import { temporal } from '@temporalio/proto';
import { ApplicationFailure } from '@temporalio/common';
import { testDatabases } from '../support/databases';
import { fakeReply } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import { getSession } from '../../src/store/sessions-repo';
import { ToolRegistry } from '../../src/tools/registry';
import { RetryableToolError } from '../../src/tools/tool-errors';
import type { Store } from '../../src/store/connect';
import { allEntries } from '../support/store-readers';
import { flushStep, isFlushRequest, isSummarizerRequest, realisticMessage } from '../support/durable-turn-helpers';

const suite = integrationSuite();

const ANTHROPIC_KEY = `sk-ant-api03-${'Q7x'.repeat(14)}`;
const GITHUB_TOKEN = `ghp_${'a1B2'.repeat(9)}`;

const freshKey = (): { agent: string; key: string } => {
  const agent = `s${Math.random().toString(36).slice(2, 9)}`;
  return { agent, key: `agent:${agent}:main` };
};

/** Every stored row of the session, as the database holds it. */
async function storedText(store: Store, agent: string, key: string): Promise<string> {
  const session = await getSession(store.db, agent, key);
  return JSON.stringify(await allEntries(store.db, agent, session!.session_id));
}

function toolResults(body: { messages?: Array<{ content: any }> }): any[] {
  return (body.messages ?? [])
    .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((b: any) => b.type === 'tool_result');
}

describe.each(testDatabases())('tool input and secrets on the real path, on $name', (database) => {
  const db = suite.storePerTest(database);

  it('sends each tool with the JSON Schema of its zod input, and answers input that fails it with an error naming the field', async () => {
    const ran: unknown[] = [];
    const tools = new ToolRegistry().register({
      name: 'resize',
      description: 'Resizes an image',
      input: z.object({
        width: z.number().int().positive(),
        height: z.number().int().positive(),
        keepRatio: z.boolean().default(true),
      }),
      run: async (input) => {
        ran.push(input);
        return 'resized';
      },
    });
    await suite.withWorker(db.store, { tools }, async ({ client, fake }) => {
      const first = fake.requests.length;
      fake.enqueue(
        fakeReply.toolUse([{ id: 'toolu_bad', name: 'resize', input: { width: 'wide', height: 10 } }]),
        fakeReply.text('Width must be a number, sorry.'),
      );
      const result = await client.sendMessage(freshKey().key, 'make it 800 wide');
      expect(result.reply).toBe('Width must be a number, sorry.');
      expect(result.modelCalls).toBe(2);
      expect(ran).toEqual([]);

      const tool = fake.requests[first]!.body.tools![0]!;
      expect(tool.name).toBe('resize');
      expect(tool.input_schema).toEqual({
        type: 'object',
        properties: {
          width: { type: 'integer', exclusiveMinimum: 0, maximum: Number.MAX_SAFE_INTEGER },
          height: { type: 'integer', exclusiveMinimum: 0, maximum: Number.MAX_SAFE_INTEGER },
          keepRatio: { type: 'boolean', default: true },
        },
        required: ['width', 'height'],
      });
      const [answer] = toolResults(fake.requests[first + 1]!.body);
      expect(answer.is_error).toBe(true);
      expect(answer.content[0].text).toMatch(/invalid input for tool "resize": width: .*expected number/i);
    });
  });

  it('runs the tool with the secret the model sent and stores the call and the result redacted', async () => {
    const seen: string[] = [];
    const tools = new ToolRegistry().register({
      name: 'deploy',
      description: 'Deploys with a key',
      input: z.object({ target: z.string(), apiKey: z.string() }),
      run: async ({ target, apiKey }) => {
        seen.push(apiKey);
        return `deployed ${target}; the registry answered with token ${GITHUB_TOKEN}`;
      },
    });
    await suite.withWorker(db.store, { tools }, async ({ client, store, fake }) => {
      const { agent, key } = freshKey();
      const first = fake.requests.length;
      fake.enqueue(
        fakeReply.toolUse([{ id: 'toolu_deploy', name: 'deploy', input: { target: 'prod', apiKey: ANTHROPIC_KEY } }]),
        fakeReply.text('Deployed.'),
      );
      expect((await client.sendMessage(key, 'deploy prod')).reply).toBe('Deployed.');

      expect(seen).toEqual([ANTHROPIC_KEY]);
      const stored = await storedText(store, agent, key);
      expect(stored).not.toContain(ANTHROPIC_KEY);
      expect(stored).not.toContain(GITHUB_TOKEN);
      expect(stored).toContain('[REDACTED:anthropic_key]');
      expect(stored).toContain('[REDACTED:github_token]');
      // The model's next call is built from the transcript: it never sees the secrets again either.
      expect(fake.requests[first + 1]!.rawBody).not.toContain(GITHUB_TOKEN);
      expect(toolResults(fake.requests[first + 1]!.body)[0].content[0].text).toBe(
        'deployed prod; the registry answered with token [REDACTED:github_token]',
      );
      // The raw arguments are gone once the result is stored.
      expect(
        await store.db.selectFrom('pending_tool_args').selectAll().where('agent_id', '=', agent).execute(),
      ).toEqual([]);
    });
  });

  it('stores a summary and memory notes that repeat a secret redacted, and the next turn never sends it to the model', async () => {
    await suite.withWorker(db.store, {}, async ({ client, store, fake }) => {
      const { agent, key } = freshKey();
      // A reply of a real length: the summary (which quotes the last request) is smaller than the exchange.
      fake.enqueue(fakeReply.text(realisticMessage('Noted.')));
      await client.sendMessage(key, 'We deploy billing on Friday.');
      // The summarizer and the memory flush write the secrets (model output nobody typed in this session).
      fake.respondWith((request) =>
        isSummarizerRequest(request)
          ? fakeReply.text(`Goal: deploy billing on Friday. The registry token is ${GITHUB_TOKEN}.`)
          : isFlushRequest(request)
            ? flushStep(request, `deploy key ${ANTHROPIC_KEY}`)
            : undefined,
      );
      expect((await client.compact(key, { keepRecentTokens: 0 })).status).toBe('succeeded');
      fake.respondWith(undefined);

      const stored = await storedText(store, agent, key);
      expect(stored).toContain('The registry token is [REDACTED:github_token]');
      expect(stored).not.toContain(GITHUB_TOKEN);
      const notes = await store.db.selectFrom('memory_notes').select('text').where('agent_id', '=', agent).execute();
      expect(notes).toEqual([{ text: 'deploy key [REDACTED:anthropic_key]' }]);

      fake.enqueue(fakeReply.text('Friday it is.'));
      const next = fake.requests.length;
      await client.sendMessage(key, 'When do we deploy?');
      const sent = fake.requests[next]!.rawBody;
      expect(sent).toContain('[REDACTED:github_token]');
      expect(sent).not.toContain(GITHUB_TOKEN);
      expect(sent).not.toContain(ANTHROPIC_KEY);
    });
  });

  it('keeps the raw arguments across a retried tool run, outside the transcript and Temporal history', async () => {
    const seen: string[] = [];
    let pendingDuringRun: unknown[] = [];
    let store!: Store;
    const tools = new ToolRegistry().register({
      name: 'login',
      description: 'Logs in',
      input: z.object({ password: z.string() }),
      run: async ({ password }) => {
        seen.push(password);
        if (seen.length === 1) {
          pendingDuringRun = await store.db
            .selectFrom('pending_tool_args')
            .select(['tool_call_id', 'arguments'])
            .execute();
          throw new RetryableToolError('the identity provider timed out');
        }
        return 'logged in';
      },
    });
    await suite.withWorker(db.store, { tools }, async (t) => {
      store = t.store;
      const { agent, key } = freshKey();
      const secret = `password=${'hunter2-'.repeat(3)}`;
      t.fake.enqueue(
        fakeReply.toolUse([{ id: 'toolu_login', name: 'login', input: { password: secret } }]),
        fakeReply.text('Logged in.'),
      );
      expect((await t.client.sendMessage(key, 'log in')).reply).toBe('Logged in.');

      // The second attempt ran with the same raw value the first one had.
      expect(seen).toEqual([secret, secret]);
      expect(pendingDuringRun).toEqual([{ tool_call_id: 'toolu_login', arguments: { password: secret } }]);
      expect(await storedText(t.store, agent, key)).not.toContain('hunter2');
      const history = await t.client.temporal.workflow.getHandle(t.client.identify(key).workflowId).fetchHistory();
      expect(Buffer.from(temporal.api.history.v1.History.encode(history).finish()).toString('utf8')).not.toContain(
        'hunter2',
      );
    });
  });

  it('releases the raw arguments of a tool that failed with the error result its call gets', async () => {
    const tools = new ToolRegistry().register({
      name: 'rotate_key',
      description: 'Rotates a key',
      input: z.object({ oldKey: z.string() }),
      run: async () => {
        throw ApplicationFailure.nonRetryable('the key service refused the rotation');
      },
    });
    await suite.withWorker(db.store, { tools }, async ({ client, store, fake }) => {
      const { agent, key } = freshKey();
      const first = fake.requests.length;
      fake.enqueue(
        fakeReply.toolUse([{ id: 'toolu_rot', name: 'rotate_key', input: { oldKey: ANTHROPIC_KEY } }]),
        fakeReply.text('The key service refused.'),
      );
      expect((await client.sendMessage(key, 'rotate my key')).reply).toBe('The key service refused.');
      expect(toolResults(fake.requests[first + 1]!.body)[0]).toMatchObject({
        is_error: true,
        content: [{ text: 'tool "rotate_key" failed: the key service refused the rotation' }],
      });
      expect(
        await store.db.selectFrom('pending_tool_args').select('tool_call_id').where('agent_id', '=', agent).execute(),
      ).toEqual([]);
    });
  });
});
