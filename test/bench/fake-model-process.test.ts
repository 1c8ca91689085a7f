/**
 * turn-latency's fake model runs in a process of its own (its garbage is not Keel's to collect);
 * the bench reads each turn's requests from it over IPC.
 */
import { AnthropicModelClient } from '../../src/model/anthropic-client';
import { startFakeModelProcess, type FakeModelProcess } from '../../bench/support/fake-model-process';

describe('startFakeModelProcess', () => {
  let fake: FakeModelProcess;
  beforeAll(async () => {
    fake = await startFakeModelProcess();
  }, 60_000);
  afterAll(async () => {
    await fake?.close();
  });

  it('answers "ok" through the real SDK and reports each batch of requests, keeping the largest body', async () => {
    const client = new AnthropicModelClient({ apiKey: 'sk-ant-test', baseURL: fake.url });
    const reply = await client.complete({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'short' }],
      maxTokens: 16,
    });
    expect(reply.content).toEqual([{ type: 'text', text: 'ok' }]);
    await client.complete({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'a longer question '.repeat(20) }],
      maxTokens: 16,
    });
    const batch = await fake.take('session-a');
    expect(batch).toHaveLength(2);
    expect(batch[1]!.bytes).toBeGreaterThan(batch[0]!.bytes);
    for (const request of batch) expect(request.fakeWorkMs).toBeGreaterThan(0);
    const kept = JSON.parse((await fake.body('session-a'))!) as {
      messages: Array<{ content: Array<{ text: string }> }>;
    };
    expect(kept.messages[0]!.content[0]!.text).toContain('a longer question');
    // A later batch starts after the last one taken.
    expect(await fake.take('session-b')).toEqual([]);
    expect(await fake.body('session-b')).toBeUndefined();
  });
});
