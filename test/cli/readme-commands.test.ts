import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keel } from '../support/keel-cli';

const readmePath = join(__dirname, '../../README.md');

/** The subcommand of every `keel …` / `npx keel …` command the README shows in backticks (not log lines like `keel store:`). */
function readmeSubcommands(readme: string): Set<string> {
  const names = new Set<string>();
  for (const m of readme.matchAll(/`(?:npx )?keel ([a-z][a-z-]*)(?=[\s`])/g)) names.add(m[1]!);
  return names;
}

// The import case starts `keel` (ts-node) processes: under load one needs more than jest's default.
jest.setTimeout(120_000);

describe('the README on the keel command', () => {
  it('says how to run keel (npx keel, or npm link once) before it shows a keel command', async () => {
    const readme = await readFile(readmePath, 'utf8');
    const firstCommand = readme.search(/`(?:npx )?keel [a-z]/);
    expect(firstCommand).toBeGreaterThan(0);
    const before = readme.slice(0, firstCommand);
    expect(before).toContain('npx keel');
    expect(before).toContain('npm link');
    // The build alone does not put it on PATH, and the README must not promise it does.
    expect(readme).not.toMatch(/`keel` once built with `npm run build`/);
  });

  it('shows a transcript and a sessions.json that keel import reads as written: a session with its context', async () => {
    const readme = await readFile(readmePath, 'utf8');
    const section = /## Coming from OpenClaw\n([\s\S]*?)\n## /.exec(readme)![1]!;
    const transcript = /```jsonl\n([\s\S]*?)```/.exec(section)![1]!;
    const index = /```json\n([\s\S]*?)```/.exec(section)![1]!;
    const home = await mkdtemp(join(tmpdir(), 'keel-readme-import-'));
    const folder = join(home, 'sessions');
    const sessionId = (JSON.parse(transcript.split('\n')[0]!) as { id: string }).id;
    await mkdir(folder);
    await writeFile(join(folder, `${sessionId}.jsonl`), transcript);
    await writeFile(join(folder, 'sessions.json'), index);
    const env = { KEEL_HOME: home, KEEL_CONFIG: undefined, DATABASE_URL: undefined, TEMPORAL_ADDRESS: undefined };
    const imported = await keel(['import', folder, '--agent', 'main', '--json'], env);
    expect(imported.code).toBe(0);
    expect(JSON.parse(imported.stdout).totals).toMatchObject({
      files: 1,
      imported: 1,
      failed: 0,
      entries: 3,
      sessions: 1,
    });
    const listed = JSON.parse((await keel(['sessions', '--json'], env)).stdout) as {
      sessions: Array<{ sessionKey: string; sessionId: string; contextTokens: number; turns: number }>;
    };
    expect(listed.sessions).toEqual([
      expect.objectContaining({
        sessionKey: 'agent:main:main',
        sessionId,
        turns: 1,
        contextTokens: expect.any(Number),
      }),
    ]);
    expect(listed.sessions[0]!.contextTokens).toBeGreaterThan(0);
  });

  it('shows only subcommands that keel --help lists', async () => {
    const readme = await readFile(readmePath, 'utf8');
    const help = await keel(['--help'], {});
    expect(help.code).toBe(0);
    const listed = `${help.stdout}${help.stderr}`;
    const unknown = [...readmeSubcommands(readme)].filter((name) => !new RegExp(`^  ${name}\\b`, 'm').test(listed));
    expect(unknown).toEqual([]);
  });
});
