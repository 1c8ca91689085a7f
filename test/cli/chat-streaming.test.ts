import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describeOnPostgres } from '../support/postgres-only';
import { freshSchemaUrl } from '../support/databases';
import { startFakeAnthropic, fakeReply, type FakeAnthropic } from '../../src/testing';
import {
  spawnWorkerProcess,
  startTemporalTestEnv,
  uniqueTaskQueue,
  type TemporalTestEnv,
  type WorkerProcess,
} from '../support/temporal';
import { entryArgs } from '../support/compiled-entries';

const root = resolve(__dirname, '../..');

describeOnPostgres(
  'keel chat streams replies from running workers',
  'another process hears NOTIFY only through a PostgreSQL server',
  () => {
    let env: TemporalTestEnv;
    let fake: FakeAnthropic;
    let worker: WorkerProcess | undefined;
    beforeAll(async () => {
      [env, fake] = await Promise.all([startTemporalTestEnv(), startFakeAnthropic()]);
    });
    afterAll(async () => {
      await worker?.kill();
      await fake?.close();
      await env?.close();
    });

    it('prints a model call’s text while the worker still waits on a tool, the tool’s line once it ran, then the final reply', async () => {
      const url = await freshSchemaUrl(process.env.TEST_DATABASE_URL!);
      const gate = join(await mkdtemp(join(tmpdir(), 'keel-chat-')), 'open');
      const taskQueue = uniqueTaskQueue();
      const shared = { ...env.processEnv, DATABASE_URL: url, KEEL_TASK_QUEUE: taskQueue };
      worker = spawnWorkerProcess({
        ...shared,
        ...fake.env,
        KEEL_TOOLS_MODULE: resolve(__dirname, '../support/cli-test-tools.ts'),
        KEEL_TEST_GATE: gate,
      });
      await worker.ready;
      const firstRequest = fake.requests.length;
      fake.enqueue(
        fakeReply.toolUse([{ id: 'toolu_gate', name: 'wait_for_gate', input: {} }], { text: 'Looking, one moment.' }),
        fakeReply.text('Done looking: all clear.', { chunks: ['Done ', 'looking: ', 'all clear.'] }),
      );

      const chatEnv = { ...process.env, TS_NODE_SWC: 'true', TS_NODE_TRANSPILE_ONLY: 'true', ...shared };
      const chat = spawn(process.execPath, [...entryArgs('workers/keel.ts', chatEnv), 'chat', 'agent:chat:main'], {
        cwd: root,
        env: chatEnv,
      });
      let stdout = '';
      let stderr = '';
      // The gate opens once the chat printed the first call's text: only streaming can print it that early.
      let opened = false;
      chat.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        if (opened || !stdout.includes('keel › Looking, one moment.')) return;
        opened = true;
        writeFile(gate, 'open').catch((err: unknown) => (stderr += `gate: ${String(err)}`));
      });
      chat.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      chat.stdin.end('look around\n/quit\n');
      const code = await new Promise<number | null>((r) => chat.on('close', r));

      expect({ code, stderr }).toMatchObject({ code: 0 });
      const requests = fake.requests.slice(firstRequest);
      expect(requests).toHaveLength(2);
      const toolResult = requests[1]!.body
        .messages!.flatMap((m) => (Array.isArray(m.content) ? m.content : []))
        .find((b: any) => b.type === 'tool_result');
      expect(toolResult.content[0].text).toBe('released');
      // The tool's line comes from the worker's notice while the turn runs, between the two calls' texts, once.
      expect(stdout).toContain('keel › Looking, one moment.\n  ⚙ wait_for_gate ok\nkeel › Done looking: all clear.\n');
      expect(stdout.match(/⚙ wait_for_gate/g)).toHaveLength(1);
      fake.assertScriptConsumed();
    }, 240_000);
  },
);
