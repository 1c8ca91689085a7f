import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { keel } from '../support/keel-cli';
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
