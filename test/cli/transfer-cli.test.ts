import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { keel, startKeel } from '../support/keel-cli';
import { startFakeAnthropic, fakeReply } from '../../src/testing/fake-anthropic';
import { freshSchemaUrl } from '../support/databases';
import { openStore, type StoreTarget } from '../../src/store/connect';
import { appendEntries } from '../../src/store/entries-repo';
import { ensureSession } from '../support/ensure-session';
import type { AgentMessage, TranscriptEntry } from '../../src/context/types';

/** A short conversation, stored as Keel writes it (no header row: export synthesizes one). */
function conversation(turns: number): Array<{ entry: TranscriptEntry; tokenEstimate: number }> {
  const out: Array<{ entry: TranscriptEntry; tokenEstimate: number }> = [];
  let parent: string | null = null;
  let at = Date.UTC(2026, 10, 20, 9, 0);
  const add = (id: string, message: AgentMessage) => {
    at += 30_000;
    out.push({
      entry: {
        type: 'message',
        id,
        parentId: parent,
        timestamp: new Date(at).toISOString(),
        message: { ...message, timestamp: at } as AgentMessage,
      },
      tokenEstimate: 12,
    });
    parent = id;
  };
  for (let t = 0; t < turns; t++) {
    add(`u${t}`, { role: 'user', content: `question ${t}` });
    add(`a${t}`, { role: 'assistant', content: [{ type: 'text', text: `answer ${t}` }], stopReason: 'stop' });
  }
  return out;
}

/** A store for `env`'s database: PGlite under KEEL_HOME, or DATABASE_URL. */
function storeTarget(env: Record<string, string | undefined>): StoreTarget {
  return env.DATABASE_URL
    ? { kind: 'postgres', url: env.DATABASE_URL }
    : { kind: 'pglite', dataDir: resolve(env.KEEL_HOME!, 'db') };
}

// Each case starts `keel` (ts-node) processes: under load one needs more than jest's default.
jest.setTimeout(300_000);

const variants: Array<{ name: string; databaseUrl: () => Promise<string | undefined> }> = [
  { name: 'PGlite', databaseUrl: async () => undefined },
];
if (process.env.TEST_DATABASE_URL)
  variants.push({ name: 'PostgreSQL', databaseUrl: () => freshSchemaUrl(process.env.TEST_DATABASE_URL!) });

describe.each(variants)('keel import and export on $name', (variant) => {
  let home: string;
  let env: Record<string, string | undefined>;

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'keel-transfer-'));
    env = {
      KEEL_HOME: home,
      KEEL_CONFIG: undefined,
      DATABASE_URL: await variant.databaseUrl(),
      TEMPORAL_ADDRESS: undefined,
    };
  });

  it('refuses a file it cannot use, naming it and what it reads, and imports nothing', async () => {
    const notes = join(home, 'notes.txt');
    await writeFile(notes, 'remember the milk\n');
    const run = await keel(['import', notes, '--agent', 'main'], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(notes);
    expect(run.stderr).toContain('*.jsonl');
    expect(run.stderr).toContain('sessions.json');
    expect(run.stderr).not.toContain('imported 0');
  });

  it('says an HTML page saved as .jsonl is not JSON Lines, and fails', async () => {
    const page = join(home, 'page.jsonl');
    await writeFile(page, '<!DOCTYPE html>\n<html><body>a transcript viewer</body></html>\n');
    const run = await keel(['import', page, '--agent', 'main'], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${page}: not JSON Lines: line 1 is not JSON`);
    expect(run.stderr).not.toContain('empty file');
  });

  it('export → import into an empty store → sessions is a round trip: the key travels in the header', async () => {
    const store = await openStore(storeTarget(env));
    try {
      await ensureSession(store.db, {
        agentId: 'main',
        sessionKey: 'agent:main:work',
        newSessionId: 's-work',
        now: new Date(),
      });
      await appendEntries(store.db, 'main', 's-work', conversation(3));
    } finally {
      await store.close();
    }
    const out = join(home, 'work.jsonl');
    const exported = await keel(['export', 'agent:main:work', '--agent', 'main', '--out', out], env);
    expect(exported.code).toBe(0);
    const header = JSON.parse((await readFile(out, 'utf8')).split('\n')[0]!);
    expect(header).toMatchObject({ type: 'session', id: 's-work', sessionKey: 'agent:main:work' });

    const elsewhere = {
      ...env,
      KEEL_HOME: await mkdtemp(join(tmpdir(), 'keel-transfer-to-')),
      DATABASE_URL: await variant.databaseUrl(),
    };
    const imported = await keel(['import', out, '--agent', 'main'], elsewhere);
    expect(imported.code).toBe(0);
    expect(imported.stderr).toContain('session  agent:main:work → s-work: created from the transcript header');
    const listed = await keel(['sessions', '--agent', 'main', '--json'], elsewhere);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).sessions).toEqual([
      expect.objectContaining({ sessionKey: 'agent:main:work', sessionId: 's-work', agentId: 'main' }),
    ]);

    // Exporting the imported session gives the same bytes again.
    const again = join(home, 'work-again.jsonl');
    expect((await keel(['export', 'agent:main:work', '--agent', 'main', '--out', again], elsewhere)).code).toBe(0);
    expect(await readFile(again, 'utf8')).toBe(await readFile(out, 'utf8'));

    // The key names the agent: no --agent needed, a conflicting one is refused; sizes in a readable unit.
    const byKey = await keel(['export', 'agent:main:work', '--out', join(home, 'by-key.jsonl')], elsewhere);
    expect(byKey.code).toBe(0);
    expect(byKey.stderr).toMatch(/^exported 7 entries \(\d+\.\d KB\) of session id s-work to /);
    const conflict = await keel(['export', 'agent:main:work', '--agent', 'ops'], elsewhere);
    expect(conflict.code).toBe(2);
    expect(conflict.stderr).toContain(
      '--agent ops conflicts with the key agent:main:work, which names agent main; drop --agent',
    );
    expect(conflict.stdout).toBe('');

    // Under another agent the key is refused by name, and nothing is made of it.
    const other = await keel(['import', out, '--agent', 'ops'], elsewhere);
    expect(other.stderr).toContain(
      'session  agent:main:work → s-work: not created: session key belongs to agent "main"',
    );
  });
});

/**
 * An OpenClaw transcript as OpenClaw writes it: a header (with the key, as `keel export` writes it, or
 * without) and one exchange, all `daysAgo` days old.
 */
function openClawTranscript(opts: {
  id: string;
  sessionKey?: string;
  daysAgo: number;
  question: string;
  answer: string;
  /** An earlier answer the author went back from: a branch left behind, written before the kept answer. */
  abandoned?: string;
}) {
  const at = Date.now() - opts.daysAgo * 86_400_000;
  const iso = (ms: number) => new Date(ms).toISOString();
  return [
    {
      type: 'session',
      version: 3,
      id: opts.id,
      timestamp: iso(at),
      cwd: '/srv/bot',
      ...(opts.sessionKey ? { sessionKey: opts.sessionKey } : {}),
    },
    {
      type: 'message',
      id: `${opts.id}-u`,
      parentId: null,
      timestamp: iso(at + 1000),
      message: { role: 'user', content: opts.question, timestamp: at + 1000 },
    },
    ...(opts.abandoned
      ? [
          {
            type: 'message',
            id: `${opts.id}-abandoned`,
            parentId: `${opts.id}-u`,
            timestamp: iso(at + 1500),
            message: {
              role: 'assistant',
              content: [{ type: 'text', text: opts.abandoned }],
              stopReason: 'stop',
              timestamp: at + 1500,
            },
          },
        ]
      : []),
    {
      type: 'message',
      id: `${opts.id}-a`,
      parentId: `${opts.id}-u`,
      timestamp: iso(at + 2000),
      message: {
        role: 'assistant',
        content: [{ type: 'text', text: opts.answer }],
        stopReason: 'stop',
        timestamp: at + 2000,
      },
    },
  ]
    .map((line) => JSON.stringify(line))
    .join('\n');
}

describe('an imported session carries on, beside keel dev', () => {
  it('keel import, then status, the HTTP API, the console and a chat turn on the imported key; a four-day-old transcript resets unless --keep-context', async () => {
    const fake = await startFakeAnthropic();
    const home = await mkdtemp(join(tmpdir(), 'keel-import-carry-'));
    const env = {
      KEEL_HOME: home,
      KEEL_CONFIG: undefined,
      DATABASE_URL: undefined,
      TEMPORAL_ADDRESS: undefined,
      KEEL_RESET_MODE: 'daily',
      KEEL_API_PORT: '0',
      KEEL_API_TOKEN: undefined,
      ...fake.env,
    };
    const write = async (name: string, body: string) => {
      const file = join(home, name);
      await writeFile(file, `${body}\n`);
      return file;
    };
    const kept = await write(
      'kept.jsonl',
      openClawTranscript({
        id: 'oc-kept',
        sessionKey: 'agent:main:kept',
        daysAgo: 4,
        question: 'Where is the boat moored?',
        answer: 'At pier 7.',
        abandoned: 'At the ferry dock, pier 3.',
      }),
    );
    const dropped = await write(
      'dropped.jsonl',
      openClawTranscript({
        id: 'oc-dropped',
        sessionKey: 'agent:main:dropped',
        daysAgo: 4,
        question: 'What colour is the hull?',
        answer: 'Dark green.',
        abandoned: 'Light blue.',
      }),
    );
    const keyless = await write(
      'keyless.jsonl',
      openClawTranscript({ id: 'oc-keyless', daysAgo: 1, question: 'Who am I?', answer: 'Nobody knows.' }),
    );
    const dev = startKeel(['dev'], env);
    try {
      await dev.waitFor('stderr', /api: http:\/\/127\.0\.0\.1:\d+/);
      const api = /api: (http:\/\/127\.0\.0\.1:\d+)/.exec(dev.output().stderr)![1]!;
      await dev.waitFor('stdout', 'you ›');

      // A transcript that makes no session is named with why; alone, it is nothing usable: exit 1.
      const alone = await keel(['import', keyless, '--agent', 'main'], env);
      expect(alone.stderr).toContain(
        `no session ${keyless}: no session: no sessions.json names this file and its header carries no sessionKey`,
      );
      expect(alone.stderr).toContain('nothing usable was imported');
      expect(alone.code).toBe(1);

      // Four days old under the daily reset: the report says its next message would start over, and how to keep it.
      const plain = await keel(['import', dropped, '--agent', 'main'], env);
      expect(plain.code).toBe(0);
      expect(plain.stderr).toMatch(
        /session {2}agent:main:dropped → oc-dropped: created from the transcript header · context \d+ tokens · resets on its next message \(daily reset\)/,
      );
      expect(plain.stderr).toContain(
        '1 imported session would start over on the next message, without its context: the daily reset (04:00',
      );
      expect(plain.stderr).toContain('run the same keel import again with --keep-context');
      expect(plain.stderr).toContain(
        `branches ${dropped}: 1 entry on branches left behind: kept and searchable, never sent to the model (it carries on from oc-dropped-a)`,
      );
      const keptRun = await keel(['import', kept, '--agent', 'main', '--keep-context', '--json'], env);
      expect(keptRun.code).toBe(0);
      expect(keptRun.stderr).toContain('kept 1 session fresh as of now (--keep-context)');
      const report = JSON.parse(keptRun.stdout);
      expect(report.totals).toMatchObject({ sessions: 1, resetting: 0 });
      expect(report.files[0].session).toMatchObject({
        sessionKey: 'agent:main:kept',
        status: 'created',
        freshness: 'kept',
        resetReason: 'daily',
      });
      // The answer its author went back from is stored, and left out of the conversation.
      expect(report.files[0].branches).toEqual({ leafId: 'oc-kept-a', offBranch: 1 });
      const contextTokens = report.files[0].session.contextTokens as number;
      expect(contextTokens).toBeGreaterThan(0);

      // Before any turn: keel sessions, keel status and the HTTP API show it with its context figure.
      const listed = JSON.parse((await keel(['sessions', '--agent', 'main', '--json'], env)).stdout).sessions;
      expect(listed).toEqual(
        expect.arrayContaining([expect.objectContaining({ sessionKey: 'agent:main:kept', contextTokens })]),
      );
      const status = await keel(['status', 'agent:main:kept'], env);
      expect(status.stderr).toMatch(/% of \d+k tokens/);
      expect(status.stderr).toContain('no turn has run in Keel yet (an imported session)');
      expect(status.code).toBe(0);
      const key = encodeURIComponent('agent:main:kept');
      const overHttp = await fetch(`${api}/v1/sessions/${key}`);
      expect(overHttp.status).toBe(200);
      expect(await overHttp.json()).toMatchObject({ sessionKey: 'agent:main:kept', contextTokens, turns: 1 });
      // The banner names the console, which answers at that URL; its session view reads the transcript route.
      expect(dev.output().stderr).toContain(`console: ${api}/ (`);
      expect(dev.output().stderr).toContain('chat: session agent:main:main');
      expect((await fetch(`${api}/`)).status).toBe(200);
      const transcript = await fetch(`${api}/v1/sessions/${key}/transcript`);
      expect(transcript.status).toBe(200);
      expect(await transcript.text()).toContain('At pier 7.');

      // A chat turn on each key: the kept one carries on with its history, the other starts over.
      fake.enqueue(fakeReply.text('Still at pier 7.'), fakeReply.text('Tell me about which boat?'));
      const before = fake.requests.length;
      const chatKept = await keel(['chat', 'agent:main:kept'], env, 'and now?\n');
      expect(chatKept.stdout).toContain('Still at pier 7.');
      const chatDropped = await keel(['chat', 'agent:main:dropped'], env, 'and the hull?\n');
      expect(chatDropped.stdout).toContain('Tell me about which boat?');
      const [keptRequest, droppedRequest] = fake.requests.slice(before);
      const texts = (r: typeof keptRequest) => JSON.stringify(r!.body.messages);
      expect(keptRequest!.body.messages).toHaveLength(3);
      expect(texts(keptRequest)).toContain('Where is the boat moored?');
      expect(texts(keptRequest)).toContain('At pier 7.');
      expect(texts(keptRequest)).not.toContain('ferry dock');
      expect(droppedRequest!.body.messages).toHaveLength(1);
      expect(texts(droppedRequest)).not.toContain('Dark green.');
      fake.assertScriptConsumed();
    } finally {
      await dev.end();
      await fake.close();
    }
  }, 300_000);
});
