/**
 * The payload codec on the real path: a worker and a KeelClient with KEEL_ENCRYPTION_KEYS run a turn
 * (user text, a tool call whose first attempt fails quoting its argument, the model's reply) and a
 * manual compaction (the summarizer's summary), each carrying a planted string. The raw histories of
 * the session and of its compaction child, read by a client WITHOUT the codec, must not contain any
 * of them; with the codec off the same run must show them all (the test can fail). Then a key
 * rotation in the middle of a session: a new worker and `keel chat` with {B current, A} replay the
 * A-sealed history and seal new payloads with B.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { KeelClient } from '../../src/client/keel-client';
import { parseKeyRing } from '../../src/security/key-ring';
import {
  ENCODED_FAILURE_CONVERTER_PATH,
  ENCRYPTED_ENCODING,
  KEY_ID_METADATA,
  keelDataConverter,
} from '../../src/security/payload-codec';
import { compactionWorkflowId } from '../../src/protocol';
import { ToolRegistry } from '../../src/tools/registry';
import { extractIdentifiers } from '../../src/compaction/identifiers';
import type { Store } from '../../src/store/connect';
import { testDatabases } from '../support/databases';
import { fakeReply, startFakeAnthropic, type FakeAnthropic } from '../../src/testing';
import {
  endsWithToolResult,
  freshDurableAgent,
  isFlushRequest,
  isSummarizerRequest,
  lastUserText,
  realisticMessage,
} from '../support/durable-turn-helpers';
import { testDeps } from '../support/keel-deps';
import { keel } from '../support/keel-cli';
import { runInProcessWorker, startTemporalTestEnv, uniqueTaskQueue, type TemporalTestEnv } from '../support/temporal';

const KEY_A = `a:${randomBytes(32).toString('base64')}`;
const KEY_B = `b:${randomBytes(32).toString('base64')}`;
/** KEEL_HOME of the CLI: empty, no embedded stack in it. */
const home = mkdtempSync(join(tmpdir(), 'keel-codec-'));

let env: TemporalTestEnv;
let fake: FakeAnthropic;
beforeAll(async () => {
  // The bundle carries the encoded failure converter, as a worker bundling workflows/ with the codec on does.
  [env, fake] = await Promise.all([
    startTemporalTestEnv({ failureConverterPath: ENCODED_FAILURE_CONVERTER_PATH }),
    startFakeAnthropic(),
  ]);
}, 120_000);
afterAll(async () => {
  rmSync(home, { recursive: true, force: true });
  await fake?.close();
  await env?.close();
});

/** Planted strings, unique per run: each must reach the history only as ciphertext. */
function plantedStrings() {
  const tag = randomBytes(4).toString('hex');
  return {
    user: `PLANTED-USER-${tag}`,
    toolArg: `PLANTED-TOOLARG-${tag}`,
    reply: `PLANTED-REPLY-${tag}`,
    summary: `PLANTED-SUMMARY-${tag}`,
  };
}

/** An `echo` tool: repeats its text (its argument is in the model's requests and the transcript, never in Temporal). */
function echoTools(): ToolRegistry {
  return new ToolRegistry().register({
    name: 'echo',
    description: 'Repeats its text',
    input: z.object({ text: z.string() }),
    run: async ({ text }) => text,
  });
}

/**
 * The model: the user's message → an echo call with the message's planted tool argument; the tool
 * result → a reply; the summarizer → a summary keeping the identifiers; the memory flush → nothing.
 */
function playModel(turns: ReadonlyArray<ReturnType<typeof plantedStrings>>) {
  const failedOnce = new Set<string>();
  // The turn a request belongs to: the latest whose planted user text the request carries.
  const plantsIn = (text: string) => [...turns].reverse().find((p) => text.includes(p.user))!;
  fake.respondWith((request) => {
    if (isSummarizerRequest(request)) {
      const prompt = JSON.stringify(request.body.messages ?? []).replace(/\\n/g, '\n');
      return fakeReply.text(
        `Summary ${plantsIn(prompt).summary}. Identifiers: ${extractIdentifiers(prompt, 'strict').join(' ')}`,
      );
    }
    if (isFlushRequest(request)) return fakeReply.text('NO_REPLY');
    const plants = plantsIn(lastUserText(request));
    if (endsWithToolResult(request)) {
      // The first answer to the tool result fails, quoting the argument: a retried model call's failure is history too.
      if (!failedOnce.has(plants.toolArg)) {
        failedOnce.add(plants.toolArg);
        return fakeReply.serverError({ message: `upstream could not read the echo of ${plants.toolArg}` });
      }
      return fakeReply.text(`Here it is: ${plants.reply}`);
    }
    // An argument of a real length (the echo repeats it): a compaction of the turn has something to reclaim.
    return fakeReply.toolUse([
      { id: `toolu_${request.index}`, name: 'echo', input: { text: realisticMessage(plants.toolArg) } },
    ]);
  });
}

/** Every byte string of a history as UTF-8 and as base64, inside the history's JSON. */
function rawHistoryText(history: temporal.api.history.v1.IHistory): string {
  const plain = (value: unknown): unknown => {
    if (value instanceof Uint8Array)
      return `${Buffer.from(value).toString('utf8')} ${Buffer.from(value).toString('base64')}`;
    if (Array.isArray(value)) return value.map(plain);
    if (value && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
    return value;
  };
  return JSON.stringify(plain(history));
}

interface FoundPayload {
  readonly path: string;
  readonly encoding: string;
  readonly keyId?: string;
  /** The data as UTF-8, for unencrypted payloads. */
  readonly text?: string;
}

/** Every Payload of a history with where it sits (e.g. `…searchAttributes.indexedFields.KeelAgentId`). */
function payloadsOf(history: temporal.api.history.v1.IHistory): FoundPayload[] {
  const found: FoundPayload[] = [];
  const walk = (value: unknown, path: string): void => {
    if (!value || typeof value !== 'object' || value instanceof Uint8Array) return;
    const v = value as Record<string, unknown>;
    if (v.data instanceof Uint8Array && v.metadata && typeof v.metadata === 'object') {
      const meta = v.metadata as Record<string, Uint8Array>;
      const keyId = meta[KEY_ID_METADATA];
      const encoding = Buffer.from(meta.encoding ?? []).toString();
      found.push({
        path,
        encoding,
        ...(keyId ? { keyId: Buffer.from(keyId).toString() } : {}),
        ...(encoding === ENCRYPTED_ENCODING ? {} : { text: Buffer.from(v.data).toString() }),
      });
      return;
    }
    for (const [k, child] of Object.entries(v)) walk(child, `${path}.${k}`);
  };
  (history.events ?? []).forEach((event, i) => walk(event, `#${i}`));
  return found;
}

describe.each(testDatabases())('Temporal payload encryption on $name', (database) => {
  let store: Store;
  beforeAll(async () => {
    store = await database.open();
  });
  afterAll(async () => {
    fake.respondWith(undefined);
    await store?.close();
  });

  /** A worker and a client with `keys` (undefined: no codec); `fn` runs while the worker polls. */
  async function withStack<T>(
    taskQueue: string,
    keys: string | undefined,
    fn: (client: KeelClient) => Promise<T>,
  ): Promise<T> {
    const deps = testDeps(store, fake.url, { tools: echoTools(), config: keys ? { encryptionKeys: keys } : {} });
    const worker = await runInProcessWorker(env, taskQueue, deps);
    try {
      const dataConverter = keelDataConverter(keys ? parseKeyRing(keys) : undefined);
      return await fn(
        new KeelClient({
          connection: env.connection,
          namespace: env.namespace,
          taskQueue,
          ...(dataConverter ? { dataConverter } : {}),
        }),
      );
    } finally {
      await worker.stop();
    }
  }

  /** The raw histories (session and compaction child), read without any codec. */
  async function rawHistories(agent: string, key: string, workflowId: string) {
    const plainClient = new Client({ connection: env.connection, namespace: env.namespace });
    const session = await plainClient.workflow.getHandle(workflowId).fetchHistory();
    const compaction = await plainClient.workflow.getHandle(compactionWorkflowId(agent, key)).fetchHistory();
    return { session, compaction };
  }

  it.each([
    { codec: 'on', keys: KEY_A },
    { codec: 'off', keys: undefined },
  ])(
    'with the codec $codec, the raw histories of a turn and its compaction hold the planted text only when unencrypted',
    async ({ codec, keys }) => {
      const agent = freshDurableAgent();
      const key = `agent:${agent}:main`;
      const plants = plantedStrings();
      const message = `please repeat the code word ${plants.user}`;
      playModel([plants]);
      const { workflowId } = await withStack(uniqueTaskQueue(), keys, async (client) => {
        const result = await client.sendMessage(key, message);
        expect(result.reply).toBe(`Here it is: ${plants.reply}`);
        const compaction = await client.compact(key);
        expect(compaction).toMatchObject({ status: 'succeeded', degraded: false });
        return client.identify(key);
      });

      const { session, compaction } = await rawHistories(agent, key, workflowId);
      const text = { session: rawHistoryText(session), compaction: rawHistoryText(compaction) };
      const seen = (s: string) => ({ session: text.session.includes(s), compaction: text.compaction.includes(s) });
      if (codec === 'off') {
        // The test can fail: unencrypted, every planted string is in the histories.
        expect(seen(plants.user).session).toBe(true);
        expect(seen(plants.reply).session).toBe(true);
        expect(seen(plants.toolArg).session).toBe(true); // the model call's failure message (ActivityTaskStarted.lastFailure)
        expect(seen(plants.summary).compaction).toBe(true);
        return;
      }
      for (const planted of Object.values(plants))
        expect({ planted, ...seen(planted) }).toEqual({ planted, session: false, compaction: false });
      // Every payload is ciphertext sealed with key "a", except search attribute values (ids, by design)
      // and the metadata Temporal's core writes into local-activity and patch markers (a local activity's
      // result beside it is sealed; a patch marker holds only the patch's id).
      for (const history of [session, compaction]) {
        const payloads = payloadsOf(history);
        expect(payloads.length).toBeGreaterThan(5);
        const unencrypted = payloads.filter((p) => p.encoding !== ENCRYPTED_ENCODING);
        const markerData = unencrypted.filter((p) => /\.markerRecordedEventAttributes\.details\.data\./.test(p.path));
        for (const p of markerData)
          expect(Object.keys(JSON.parse(p.text!))).toEqual(
            expect.arrayContaining(['activity_id', 'activity_type', 'attempt']),
          );
        // A patch marker names the patch, nothing of the conversation.
        const patchData = unencrypted.filter((p) =>
          /\.markerRecordedEventAttributes\.details\.patch-data\./.test(p.path),
        );
        for (const p of patchData) expect(Object.keys(JSON.parse(p.text!)).sort()).toEqual(['deprecated', 'id']);
        expect(
          unencrypted.filter(
            (p) => !p.path.includes('.searchAttributes.') && !markerData.includes(p) && !patchData.includes(p),
          ),
        ).toEqual([]);
        expect(new Set(payloads.filter((p) => p.encoding === ENCRYPTED_ENCODING).map((p) => p.keyId))).toEqual(
          new Set(['a']),
        );
      }
      // The model call's failure is there, but as an encoded failure: message and stack trace are ciphertext.
      const started = session.events!.find((e) => e.activityTaskStartedEventAttributes?.lastFailure);
      expect(started?.activityTaskStartedEventAttributes?.lastFailure).toMatchObject({
        message: 'Encoded failure',
        stackTrace: '',
      });
    },
    180_000,
  );

  it('rotates the key in the middle of a session: the new worker replays the A-sealed history and seals with B', async () => {
    const agent = freshDurableAgent();
    const key = `agent:${agent}:main`;
    const taskQueue = uniqueTaskQueue();
    const first = plantedStrings();
    const second = plantedStrings();
    const messages = { first: `remember ${first.user}`, second: `and now ${second.user}` };
    playModel([first, second]);
    const { workflowId } = await withStack(taskQueue, KEY_A, async (client) => {
      expect((await client.sendMessage(key, messages.first)).reply).toBe(`Here it is: ${first.reply}`);
      return client.identify(key);
    });
    const plainClient = new Client({ connection: env.connection, namespace: env.namespace });
    const sealed = (h: temporal.api.history.v1.IHistory) =>
      payloadsOf(h).filter((p) => p.encoding === ENCRYPTED_ENCODING);
    const before = sealed(await plainClient.workflow.getHandle(workflowId).fetchHistory()).length;

    // The operator adds B, makes it current, keeps A: a fresh worker (no cached workflow). The next
    // turn comes from `keel chat` with the same keys (the CLI seals the message and opens the reply);
    // the CLI never touches the database, so the PostgreSQL variant saves the process and uses a client.
    await withStack(taskQueue, `${KEY_B},${KEY_A}`, async (client) => {
      if (database.name !== 'pglite') {
        expect((await client.sendMessage(key, messages.second)).reply).toBe(`Here it is: ${second.reply}`);
        return;
      }
      const chat = await keel(
        ['chat', key],
        {
          ...env.processEnv,
          KEEL_TASK_QUEUE: taskQueue,
          KEEL_ENCRYPTION_KEYS: `${KEY_B},${KEY_A}`,
          DATABASE_URL: undefined,
          KEEL_HOME: home,
        },
        `${messages.second}\n`,
      );
      expect(chat).toMatchObject({ code: 0, stdout: expect.stringContaining(`keel › Here it is: ${second.reply}`) });
    });
    const history = await plainClient.workflow.getHandle(workflowId).fetchHistory();
    const payloads = sealed(history);
    expect(payloads.slice(0, before).every((p) => p.keyId === 'a')).toBe(true);
    const after = payloads.slice(before);
    expect(after.length).toBeGreaterThan(3);
    expect(new Set(after.map((p) => p.keyId))).toEqual(new Set(['b']));
    const text = rawHistoryText(history);
    for (const planted of [...Object.values(first), ...Object.values(second)].filter((s) => !s.includes('SUMMARY')))
      expect(text).not.toContain(planted);

    // A ring that dropped A cannot read A-sealed payloads, and says which key to add back.
    // The first message rode in the awaitResult Update that admitted it.
    const firstMessage = history.events!.find((e) => e.workflowExecutionUpdateAcceptedEventAttributes)!
      .workflowExecutionUpdateAcceptedEventAttributes!.acceptedRequest!.input!.args!.payloads!;
    await expect(keelDataConverter(parseKeyRing(KEY_B))!.payloadCodecs![0]!.decode(firstMessage)).rejects.toThrow(
      'sealed with key "a", which KEEL_ENCRYPTION_KEYS no longer holds',
    );
  }, 180_000);
});
