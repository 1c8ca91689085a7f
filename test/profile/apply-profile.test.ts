import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyProfile } from '../../src/cli/profile';
import { loadKeelSettings } from '../../src/config/agent-config';
import { profileSession } from '../../src/profile/session-profile';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'keel-apply-'));
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

/** A conversational profile of agent ops (no transcript needed: the advice is what --apply writes). */
function profileFor(file: string) {
  const settings = loadKeelSettings({ env: { KEEL_CONFIG: file }, cwd: dir });
  const profile = profileSession({
    agentId: 'ops',
    sessionKey: 'agent:ops:main',
    sessionId: 's1',
    entries: [],
    config: settings.defaults,
    window: 200_000,
  });
  return { settings, profile };
}

describe('applyProfile on a terminal', () => {
  const said: string[] = [];
  const base = {
    yes: false,
    interactive: true,
    say: (t: string) => void said.push(t),
    now: new Date(Date.UTC(2026, 10, 25, 9, 30)),
  };

  it('asks, and an answer other than y writes nothing', async () => {
    const file = join(dir, 'keel.config.json');
    await writeFile(file, '{}\n');
    const { settings, profile } = profileFor(file);
    const questions: string[] = [];
    const report = await applyProfile(profile, settings, { ...base, ask: async (q) => (questions.push(q), 'n') });
    expect(questions).toEqual(['Apply these changes? [y/N] ']);
    expect(report).toMatchObject({
      applied: false,
      changes: expect.arrayContaining([expect.objectContaining({ path: 'agents.ops.reserveTokens', new: 30_000 })]),
    });
    expect(await readFile(file, 'utf8')).toBe('{}\n');
    expect(await readdir(dir)).toEqual(['keel.config.json']);
  });

  it('"y" applies, with the backup and rollback note named by the time', async () => {
    const file = join(dir, 'keel.config.json');
    await writeFile(file, '{}\n');
    const { settings, profile } = profileFor(file);
    const report = await applyProfile(profile, settings, { ...base, ask: async () => 'y' });
    expect(report).toMatchObject({
      applied: true,
      backup: `${file}.2026-11-25T09-30-00-000Z.bak`,
      rollbackNote: `${file}.2026-11-25T09-30-00-000Z.rollback.md`,
    });
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
      agents: { ops: { contextEngine: 'budgeted', reserveTokens: 30_000, contextEngineOptions: { pruningTtl: '5m' } } },
    });
  });

  it('without a config file says how to create one', async () => {
    const file = join(dir, 'keel.config.json');
    await writeFile(file, '{}\n');
    const { settings, profile } = profileFor(file);
    await expect(
      applyProfile(
        profile,
        { defaults: settings.defaults, agents: settings.agents },
        { ...base, ask: async () => 'y' },
      ),
    ).rejects.toThrow('no config file to write: create keel.config.json');
  });
});
