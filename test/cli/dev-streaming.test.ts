import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { keel } from '../support/keel-cli';
import { startFakeAnthropic, fakeReply, type FakeAnthropic } from '../../src/testing';

describe('keel dev streams replies', () => {
  let fake: FakeAnthropic;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
  });
  afterAll(async () => fake.close());

  it('prints a model call’s text while the turn is still running, then the final reply', async () => {
    const home = await mkdtemp(join(tmpdir(), 'keel-dev-stream-'));
    fake.enqueue(
      fakeReply.toolUse([{ id: 'toolu_screen', name: 'read_screen', input: { waitFor: 'one moment' } }], {
        text: 'Looking, one moment.',
      }),
      fakeReply.text('Done looking: all clear.', { chunks: ['Done ', 'looking: ', 'all clear.'] }),
      // A call the tool refuses: its line says why.
      fakeReply.toolUse([{ id: 'toolu_bad', name: 'read_screen', input: {} }], { text: 'Trying.' }),
      fakeReply.text('Could not look.'),
    );
    const run = await keel(
      ['dev', '--session', 'agent:cli:main'],
      {
        DATABASE_URL: undefined,
        TEMPORAL_ADDRESS: undefined,
        KEEL_HOME: home,
        KEEL_TOOLS_MODULE: resolve(__dirname, '../support/cli-test-tools.ts'),
        ...fake.env,
      },
      'look around\nlook without saying what for\n/quit\n',
    );
    expect(run.code).toBe(0);
    // The tool ran between the two model calls: the chat had printed the first call's text by then.
    const toolResult = fake.requests[1]!.body.messages!.flatMap((m) =>
      Array.isArray(m.content) ? m.content : [],
    ).find((b: any) => b.type === 'tool_result');
    expect(toolResult.content[0].text).toContain('keel › Looking, one moment.');
    expect(toolResult.content[0].text).not.toContain('all clear');
    // The tool call shows as its own line between the two model calls' texts, as it runs.
    expect(run.stdout).toContain('keel › Looking, one moment.\n  ⚙ read_screen ok\nkeel › Done looking: all clear.\n');
    expect(run.stdout).toContain(
      'keel › Trying.\n  ⚙ read_screen error: invalid input for tool "read_screen": waitFor: ',
    );
    fake.assertScriptConsumed();
  }, 180_000);
});
