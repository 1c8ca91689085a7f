import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { keel } from '../support/keel-cli';

const readmePath = join(__dirname, '../../README.md');

/** The subcommand of every `keel …` / `npx keel …` command the README shows in backticks (not log lines like `keel store:`). */
function readmeSubcommands(readme: string): Set<string> {
  const names = new Set<string>();
  for (const m of readme.matchAll(/`(?:npx )?keel ([a-z][a-z-]*)(?=[\s`])/g)) names.add(m[1]!);
  return names;
}

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

  it('shows only subcommands that keel --help lists', async () => {
    const readme = await readFile(readmePath, 'utf8');
    const help = await keel(['--help'], {});
    expect(help.code).toBe(0);
    const listed = `${help.stdout}${help.stderr}`;
    const unknown = [...readmeSubcommands(readme)].filter((name) => !new RegExp(`^  ${name}\\b`, 'm').test(listed));
    expect(unknown).toEqual([]);
  });
});
