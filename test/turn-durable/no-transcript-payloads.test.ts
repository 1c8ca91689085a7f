import { z } from 'zod';
import { testDatabases } from '../support/databases';
import { fakeReply } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import { admissionKinds, freshDurableAgent, payloadSizes } from '../support/durable-turn-helpers';
import { getSession } from '../../src/store/sessions-repo';
import { ToolRegistry } from '../../src/tools/registry';

/** The bound: no workflow or activity payload may exceed 256 KB. */
const MAX_PAYLOAD_BYTES = 256 * 1024;
const HUGE_CHARS = 20 * 1024 * 1024;

const suite = integrationSuite();

describe.each(testDatabases())('no payload holds a transcript on $name', (database) => {
  const db = suite.storePerTest(database);

  it('stores a 20 MB tool result whole, shows the model a truncated copy with a note, and keeps every history payload under 256 KB', async () => {
    // Log lines, as a real tool would return (a 200k-character run of one character makes the
    // tokenizer quadratic: a separate finding, see the report).
    const line = 'INFO 2026-01-01T00:00:00Z worker-7 processed batch of records without error\n';
    const huge = `BEGIN\n${line.repeat(Math.ceil(HUGE_CHARS / line.length))}END`;
    const tools = new ToolRegistry().register({
      name: 'dump_logs',
      description: 'Returns every log line',
      input: z.object({}),
      run: async () => huge,
    });
    await suite.withWorker(db.store, { tools }, async ({ client, store, fake }) => {
      fake.enqueue(
        fakeReply.toolUse([{ id: 'toolu_dump', name: 'dump_logs', input: {} }]),
        fakeReply.text('the logs are long'),
      );
      const agent = freshDurableAgent();
      const key = `agent:${agent}:main`;
      const result = await client.sendMessage(key, 'show me the logs');
      expect(result.reply).toBe('the logs are long');

      // Stored whole.
      const session = await getSession(store.db, agent, key);
      const stored = await store.db
        .selectFrom('transcript_entries')
        .select(['byte_size', 'payload'])
        .where('agent_id', '=', agent)
        .where('session_id', '=', session!.session_id)
        .where('role', '=', 'toolResult')
        .executeTakeFirstOrThrow();
      const storedText = (stored.payload as any).message.content[0].text as string;
      expect(storedText).toBe(huge);
      expect(stored.byte_size).toBeGreaterThan(HUGE_CHARS);

      // The model saw a truncated copy with the note.
      const second = fake.requests[fake.requests.length - 1]!;
      const toolResult = second.body
        .messages!.flatMap((m) => (Array.isArray(m.content) ? m.content : []))
        .find((b: any) => b.type === 'tool_result');
      const seen = (toolResult.content as Array<{ text: string }>).map((b) => b.text).join('');
      expect(seen.startsWith('BEGIN\nINFO')).toBe(true);
      expect(seen).not.toContain('\nEND');
      expect(seen).toContain('Tool result truncated for the model');
      expect(seen.length).toBeLessThan(1024 * 1024);
      expect(second.rawBody.length).toBeLessThan(2 * 1024 * 1024);

      // No payload in the session workflow's history comes near the transcript.
      const history = await client.temporal.workflow.getHandle(client.identify(key).workflowId).fetchHistory();
      const sizes = payloadSizes(history);
      expect(sizes.length).toBeGreaterThan(5);
      expect(Math.max(...sizes)).toBeLessThan(MAX_PAYLOAD_BYTES);
      // One sender, one round trip: the request rode in the Update-with-Start, no Signal.
      expect(await admissionKinds(client.temporal, client.identify(key).workflowId)).toEqual({
        byUpdate: 1,
        bySignal: 0,
      });
    });
  }, 300_000);
});
