/**
 * Hostile input, driven with generated values (fast-check; KEEL_FUZZ_SEED repeats a run): messages
 * with NUL and lone surrogates, over the size limits, and malformed session keys through
 * `sendMessage` against one worker; tool inputs that are not JSON objects or nest 100k levels;
 * JSONL imports of generated lines (a 100 MB one included); the session-key and configuration
 * parsers the CLI uses. Each input either works or fails with a documented error; a refused one
 * writes nothing, and the session takes the next normal message.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { z } from 'zod';
import { testDatabases } from '../support/databases';
import { integrationSuite } from '../support/integration';
import { fakeReply } from '../../src/testing';
import { announcedSeed } from '../support/test-seed';
import { freshDurableAgent } from '../support/durable-turn-helpers';
import { KeelRequestError } from '../../src/sessions/validate-request';
import { MAX_USER_TEXT_CHARS } from '../../src/protocol';
import {
  InvalidSessionKeyError,
  buildSessionKey,
  parseSessionKey,
  type SessionKeyParts,
} from '../../src/sessions/session-key';
import { ConfigError, configFromEnv } from '../../src/config/keel-config';
import { importTranscriptFile } from '../../src/transfer/import-jsonl';
import { ToolRegistry } from '../../src/tools/registry';
import type { Store } from '../../src/store/connect';

const suite = integrationSuite();
const seed = announcedSeed('KEEL_FUZZ_SEED', 'hostile-input fuzz');

/** Rows a refused request must not add (whole tables: a malformed key names no agent to filter by). */
async function rowCounts(store: Store): Promise<[number, number]> {
  const count = async (table: 'sessions' | 'transcript_entries') =>
    Number(
      (
        await store.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return [await count('sessions'), await count('transcript_entries')];
}

const hostileText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 120 }),
  fc.string({ maxLength: 40 }).map((s) => `${s}\u0000${s}\uD800`),
  fc.constantFrom(
    '',
    '  \n ',
    '\u0000',
    '\uDC00 alone',
    'x'.repeat(MAX_USER_TEXT_CHARS + 1),
    '\u0001'.repeat(MAX_USER_TEXT_CHARS - 1_000),
  ),
);
const VALID = 'a valid key';
const hostileKey = fc.oneof(
  fc.constant(VALID),
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc
    .array(
      fc.oneof(
        fc.constantFrom('agent', 'main', 'subagent', 'cron', 'hook', 'thread', 'topic', 'dm', 'group', ''),
        fc.string({ maxLength: 8 }),
      ),
      { maxLength: 7 },
    )
    .map((parts) => parts.join(':')),
  fc.constantFrom(
    `agent:a:${'x'.repeat(300)}`,
    'agent::main',
    'agent:a b:main',
    'cron:',
    'hook:not-a-uuid',
    'agent:a:subagent:nope',
    ':::',
    'agent:a:main:thread:x:topic:y',
  ),
);

describe.each(testDatabases())('hostile input on $name', (database) => {
  const db = suite.storePerTest(database);

  it('sendMessage with generated texts and keys: a reply or a documented refusal that writes nothing; the session takes the next message', () =>
    suite.withWorker(db.store, {}, async ({ client, store, fake }) => {
      fake.respondWith(() => fakeReply.text('ok'));
      // Sessions this run reached. Generated keys repeat across the database variants (one seed, one dev
      // server): a session left running on this variant's task queue would take the next variant's
      // messages and, its worker gone, never answer them.
      const reached = new Set<string>();
      try {
        await fc.assert(
          fc.asyncProperty(hostileText, hostileKey, async (text, generatedKey) => {
            const key = generatedKey === VALID ? `agent:${freshDurableAgent()}:main` : generatedKey;
            const before = await rowCounts(store);
            const outcome = await client.sendMessage(key, text).then(
              (result) => ({ ok: true as const, result }),
              (error: unknown) => ({ ok: false as const, error }),
            );
            if (outcome.ok) reached.add(client.identify(key).workflowId);
            if (!outcome.ok) {
              // Refused before anything was sent: a request or key error naming what to fix, nothing written.
              expect(outcome.error instanceof KeelRequestError || outcome.error instanceof InvalidSessionKeyError).toBe(
                true,
              );
              expect((outcome.error as Error).message.length).toBeGreaterThan(0);
              expect(await rowCounts(store)).toEqual(before);
              return;
            }
            expect(outcome.result.reply).toBe('ok');
            // Not stuck: the same session answers a normal message next.
            expect((await client.sendMessage(key, 'and now a normal message')).reply).toBe('ok');
          }),
          { seed, numRuns: 24 },
        );
      } finally {
        await Promise.all(
          [...reached].map((id) =>
            client.temporal.workflow
              .getHandle(id)
              .terminate('hostile-input run over')
              .catch(() => undefined),
          ),
        );
      }
      fake.respondWith(undefined);
    }));

  it('tool inputs that are not JSON objects, or nest 100k levels, never reach the tool; the turn answers and the session goes on', async () => {
    const ran: unknown[] = [];
    const tools = new ToolRegistry().register({
      name: 'lookup',
      description: 'Looks a thing up',
      input: z.object({ q: z.string() }),
      run: async (input) => {
        ran.push(input);
        return 'found';
      },
    });
    await suite.withWorker(db.store, { tools }, async ({ client, store, fake }) => {
      const key = `agent:${freshDurableAgent()}:main`;
      const deep = `{"q":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
      // (A bare number is not here: the SDK reads it as cut-off JSON, and the call is retried as ModelTruncatedResponse.)
      const inputs = ['"a bare string"', '[1,2,3]', 'null', deep];
      const before = fake.requests.length;
      fake.enqueue(
        fakeReply.toolUse(
          inputs.map((inputJson, i) => ({ id: `toolu_bad_${i}`, name: 'lookup', input: {}, inputJson })),
        ),
        fakeReply.text('Those inputs were not usable.'),
        fakeReply.text('still here'),
      );
      expect((await client.sendMessage(key, 'look these up')).reply).toBe('Those inputs were not usable.');
      expect(ran).toEqual([]);
      // One model call per step, none retried: the reply with the calls was stored at once.
      expect(fake.requests.length - before).toBe(2);
      expect(JSON.stringify(fake.requests[before + 1]!.body.messages)).not.toContain('[[[[');
      // Every call was answered with an input error, and nothing stored holds the deep input.
      const stored = await store.db
        .selectFrom('transcript_entries')
        .select('payload')
        .where('agent_id', '=', client.identify(key).agentId)
        .orderBy('seq')
        .execute();
      const results = stored
        .map((r) => r.payload as unknown as { message?: { role: string; toolCallId: string; isError: boolean } })
        .filter((p) => p.message?.role === 'toolResult');
      expect(results.map((p) => [p.message!.toolCallId, p.message!.isError])).toEqual(
        inputs.map((_, i) => [`toolu_bad_${i}`, true]),
      );
      expect(JSON.stringify(stored)).not.toContain('[[[[');
      expect((await client.sendMessage(key, 'hello again')).reply).toBe('still here');
    });
  });
});

describe.each(testDatabases())('the JSONL importer with generated lines on $name', (database) => {
  let store: Store;
  let dir: string;
  beforeAll(async () => {
    store = await database.open();
    dir = await mkdtemp(join(tmpdir(), 'keel-fuzz-import-'));
  });
  afterAll(async () => {
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const header = (id: string) =>
    JSON.stringify({ type: 'session', id, timestamp: '2026-01-01T00:00:00.000Z', version: 3 });
  const message = (id: string, text: string) =>
    JSON.stringify({
      type: 'message',
      id,
      parentId: null,
      timestamp: '2026-01-01T00:00:01.000Z',
      message: { role: 'user', content: text },
    });
  const generatedLine = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 80 }).map((text) => ({ kind: 'message', text })),
    fc.json({ maxDepth: 4 }).map((text) => ({ kind: 'raw', text })),
    fc.string({ maxLength: 60 }).map((text) => ({ kind: 'raw', text })),
    fc
      .constantFrom(300, 100_000)
      .map((n) => ({ kind: 'raw', text: `{"type":"message","id":"deep","x":${'['.repeat(n)}${']'.repeat(n)}}` })),
  );

  it('imports what it can, drops the rest with line numbers, and writes nothing for a failed file', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.array(generatedLine, { maxLength: 12 }), async (withHeader, lines) => {
        run += 1;
        const agentId = `fuzz${run}`;
        const body = lines.map((l, i) => (l.kind === 'message' ? message(`m${i}`, l.text) : l.text));
        const file = join(dir, `${agentId}.jsonl`);
        await writeFile(file, [...(withHeader ? [header(`s-${agentId}`)] : []), ...body].join('\n'));
        const report = await importTranscriptFile({ db: store.db, agentId, file, rewriteRepaired: false });
        const rows = Number(
          (
            await store.db
              .selectFrom('transcript_entries')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .where('agent_id', '=', agentId)
              .executeTakeFirstOrThrow()
          ).n,
        );
        expect(['imported', 'repaired', 'failed']).toContain(report.status);
        expect(rows).toBe(report.status === 'failed' ? 0 : report.imported);
        for (const dropped of report.dropped) {
          expect(dropped.line).toBeGreaterThan(0);
          expect(dropped.reason.length).toBeGreaterThan(0);
        }
      }),
      { seed, numRuns: 30 },
    );
  });

  it('drops a 100 MB line naming its line number, and imports the lines around it', async () => {
    const file = join(dir, 'huge.jsonl');
    const out = createWriteStream(file);
    out.write(
      `${header('s-huge')}\n${message('before', 'small')}\n{"type":"message","id":"huge","message":{"role":"user","content":"`,
    );
    const chunk = 'y'.repeat(1024 * 1024);
    for (let i = 0; i < 100; i++)
      if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
    out.write(`"}}\n${message('after', 'small too')}\n`);
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    const report = await importTranscriptFile({ db: store.db, agentId: 'huge', file, rewriteRepaired: false });
    expect(report).toMatchObject({
      status: 'repaired',
      imported: 3,
      dropped: [
        { line: 3, reason: expect.stringMatching(/^line is 10485\d{4} bytes, over the \d+-byte import limit$/) },
      ],
    });
    await rm(file);
  });
});

describe('the parsers the CLI uses, with generated input', () => {
  it('parseSessionKey returns parts that build the same key, or throws InvalidSessionKeyError', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 300 }),
          fc
            .array(
              fc.constantFrom(
                'agent',
                'a',
                'main',
                'subagent',
                'cron',
                'hook',
                'dm',
                'thread',
                'x y',
                '',
                '0b8f3c1e-7d4a-4c2b-9f6e-1a2b3c4d5e6f',
              ),
              { maxLength: 8 },
            )
            .map((p) => p.join(':')),
        ),
        (key) => {
          let parsed: ReturnType<typeof parseSessionKey>;
          try {
            parsed = parseSessionKey(key);
          } catch (err) {
            expect(err).toBeInstanceOf(InvalidSessionKeyError);
            return;
          }
          expect(buildSessionKey(parsed as unknown as SessionKeyParts)).toBe(key);
        },
      ),
      { seed, numRuns: 500 },
    );
  });

  it('configFromEnv returns a config or throws ConfigError naming the variable', () => {
    const variables = [
      'KEEL_ALLOWED_AGENTS',
      'KEEL_CONTEXT_WINDOW',
      'KEEL_MAX_ACTIVE_TRANSCRIPT_BYTES',
      'KEEL_SUBAGENT_MAX_DEPTH',
      'KEEL_WORKSPACE_ACCESS',
      'KEEL_CODEC_SERVER_PORT',
      'KEEL_ENCRYPTION_KEYS',
      'KEEL_HISTORY_LIMITS',
      'KEEL_RESET_HOUR',
      'KEEL_TIMEZONE',
      'KEEL_PROMPT_CACHING',
      'KEEL_ENCRYPT_AT_REST',
      'KEEL_WORKSPACE_WATCH',
      'KEEL_DATABASE_PREPARED_STATEMENTS',
    ];
    fc.assert(
      fc.property(fc.constantFrom(...variables), fc.string({ unit: 'binary', maxLength: 40 }), (variable, value) => {
        try {
          configFromEnv({ [variable]: value });
        } catch (err) {
          expect(err).toBeInstanceOf(ConfigError);
          expect((err as Error).message).toContain(variable);
        }
      }),
      { seed, numRuns: 300 },
    );
  });
});
