/**
 * The README's commands, run as written on a fresh clone of this repository (its committed files,
 * with this checkout's node_modules linked in place of `npm install`): the shell commands of its
 * fenced blocks, the `npx keel …` commands it names while `npm run dev` runs, and the application
 * example. Keyed on the commands themselves, not the prose around them: a command the README gains
 * must be run here or listed in NOT_RUN_HERE with the reason.
 */
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startFakeAnthropic, fakeReply, type FakeAnthropic } from '../../src/testing/fake-anthropic';

jest.setTimeout(600_000);

const root = resolve(__dirname, '../..');

/** README commands a test cannot run, and why. */
const NOT_RUN_HERE: ReadonlyArray<{ readonly command: RegExp; readonly why: string }> = [
  { command: /^npm install$/, why: 'downloads every package; the clone links this checkout’s node_modules instead' },
  { command: /^npm test$/, why: 'runs every suite, this one included' },
  {
    command: /^npm run test:pg\b/,
    why: 'starts a throwaway PostgreSQL server (its binaries are not on every machine) and runs suites for minutes',
  },
  {
    command: /^TEST_DATABASE_URL=\S+ npm run jest\b/,
    why: 'needs your own PostgreSQL server (the URL is a placeholder) and runs every suite',
  },
  {
    command: /^CHROMIUM_PATH=\S+ npm run jest\b/,
    why: 'runs another suite (the replay report in a browser), which needs Chromium',
  },
  { command: /^npx keel chat$/, why: 'an interactive chat: test/cli/dev-terminal.test.ts drives one at a terminal' },
  { command: /^npx keel worker$/, why: 'runs until stopped: test/cli/entry-points-reach.test.ts starts and stops one' },
  {
    command: /^npx keel (approvals|approve|deny)\b/,
    why: 'needs a tool call waiting for approval: test/approvals/approval-cli.test.ts runs all three against one',
  },
  {
    command: /^npm pack$/,
    why: 'builds and packs the package (minutes): test/package/package.test.ts packs it',
  },
  {
    command: /^npm install \.\/keel-agents-\*\.tgz\b/,
    why: 'installs the packed tarball: test/package/package.test.ts runs this npm install into an empty folder, then the keel it installed',
  },
];

/** The commands this file runs (below), as the README writes them. */
const RUN_HERE: readonly RegExp[] = [
  /^npm run dev$/,
  /^npx keel --help$/,
  /^npx keel status agent:main:main$/,
  /^npx keel export agent:main:main$/,
  /^export KEEL_API_TOKEN=/,
  /^curl .*\/v1\/sessions\//,
];

/** Each command of the README's fenced shell blocks, one per `&&` part, comments and blank lines left out. */
function fencedShellCommands(readme: string): string[] {
  const commands: string[] = [];
  for (const block of readme.matchAll(/```(?:sh|bash|shell|console)\n([\s\S]*?)```/g)) {
    // A line ending in a backslash goes on in the next one: one command.
    for (const line of block[1]!.replace(/\\\n\s*/g, '').split('\n')) {
      const command = line
        .replace(/^\$ /, '')
        .replace(/\s+#\s.*$/, '')
        .trim();
      if (command && !command.startsWith('#')) commands.push(...command.split(' && ').map((c) => c.trim()));
    }
  }
  return commands;
}

/** The `npx keel …` commands the README names in its text, written out in full (no `…` or placeholder). */
function namedKeelCommands(readme: string): string[] {
  const commands = [...readme.matchAll(/`(npx keel [^`]+)`/g)].map((m) => m[1]!.trim());
  return [...new Set(commands.filter((c) => !/…|<|\bKEY\b|\bPATH\b/.test(c)))];
}

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

describe('the README on a fresh clone', () => {
  let clone: string;
  let fake: FakeAnthropic;
  let readme: string;

  /** The clone's own defaults (no database, Temporal or home of the machine running the tests), the fake model, then `env`. */
  const cloneEnv = (env: Record<string, string> = {}): NodeJS.ProcessEnv => {
    const childEnv: NodeJS.ProcessEnv = { ...process.env, ...fake.env };
    for (const name of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'KEEL_HOME', 'KEEL_CONFIG', 'TEST_DATABASE_URL'])
      delete childEnv[name];
    return { ...childEnv, ...env };
  };
  const shell = (command: string, env: Record<string, string> = {}, stdin = ''): Promise<Run> => {
    const child = spawn('bash', ['-c', command], { cwd: clone, env: cloneEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin.end(stdin);
    return new Promise((done) => child.on('close', (code) => done({ code, stdout, stderr })));
  };
  /** A README command, exactly as written (`npx keel …` resolves the clone's own bin, unbuilt). */
  const keel = (command: string) => shell(command);

  beforeAll(async () => {
    readme = await readFile(join(root, 'README.md'), 'utf8');
    fake = await startFakeAnthropic();
    fake.respondWith(() => fakeReply.text('Hello from the fake model.'));
    clone = await mkdtemp(join(tmpdir(), 'keel-readme-'));
    execFileSync('git', ['clone', '--quiet', '--no-hardlinks', root, clone]);
    await symlink(join(root, 'node_modules'), join(clone, 'node_modules'));
  });
  afterAll(async () => {
    await fake?.close();
    if (clone) await rm(clone, { recursive: true, force: true });
  });

  it('runs, or lists with the reason, every command of its fenced shell blocks and every keel command it names', () => {
    const commands = [...fencedShellCommands(readme), ...namedKeelCommands(readme)];
    expect(commands).toContain('npm run dev');
    const unaccounted = commands.filter(
      (c) => !RUN_HERE.some((r) => r.test(c)) && !NOT_RUN_HERE.some((n) => n.command.test(c)),
    );
    expect(unaccounted).toEqual([]);
  });

  it('npx keel --help runs in the clone as written, with no build and nothing on PATH', async () => {
    expect(fencedShellCommands(readme)).toContain('npx keel --help');
    expect(existsSync(join(clone, 'dist'))).toBe(false);
    const help = await keel('npx keel --help');
    expect(help.stderr).not.toContain('not found');
    expect(help.stdout).toContain('Usage: keel');
    expect(help.code).toBe(0);
  });

  it('npm run dev answers a piped line, then stops cleanly and leaves no stack files', async () => {
    const run = await shell('npm run dev', {}, 'hello\n');
    expect(run.stderr).toContain('chat: session agent:main:main');
    expect(run.stdout).toContain('keel › Hello from the fake model.');
    expect(run.stderr).toContain('stopped cleanly');
    expect(run.code).toBe(0);
    expect(existsSync(join(clone, '.keel', 'stack.json'))).toBe(false);
  });

  it('while npm run dev runs: the keel commands it names, the HTTP API curl lines and the application example', async () => {
    // A port of its own for the dev stack's HTTP API: other suites may run `keel dev` at the same time.
    const apiPort = await freePort();
    const dev = spawn('bash', ['-c', 'npm run dev'], { cwd: clone, env: cloneEnv({ KEEL_API_PORT: String(apiPort) }) });
    let out = '';
    dev.stdout.on('data', (d: Buffer) => (out += d.toString()));
    dev.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const until = async (pattern: RegExp) => {
      for (let i = 0; i < 1_200 && !pattern.test(out); i++) await new Promise((r) => setTimeout(r, 100));
      expect(out).toMatch(pattern);
    };
    const exited = new Promise<number | null>((done) => dev.on('close', done));
    try {
      await until(/you › /);
      dev.stdin.write('hello\n');
      await until(/keel › Hello from the fake model\./);

      const status = await keel('npx keel status agent:main:main');
      expect(status.code).toBe(0);
      expect(status.stderr).toMatch(/% of \d+k tokens/);
      const exported = await keel('npx keel export agent:main:main');
      expect(exported.code).toBe(0);
      expect(exported.stdout).toContain('"sessionKey":"agent:main:main"');
      expect(exported.stdout).toContain('Hello from the fake model.');

      // The HTTP API block, as written, on this stack's API port: a message, then the same streamed.
      const curlBlock = /```sh\n(export KEEL_API_TOKEN[\s\S]*?)```/.exec(readme)![1]!;
      const curled = await shell(curlBlock.replaceAll(':8787', `:${apiPort}`));
      expect(curled.code).toBe(0);
      expect(curled.stdout).toMatch(/"reply":"Hello from the fake model\."/);
      expect(curled.stdout).toMatch(/event: reply\ndata: \{"reply":"Hello from the fake model\."/);

      // The application example, as written, against this dev stack (its address and database). The
      // package's entries are src/index.ts and src/<entry>/index.ts: the clone imports them from there.
      const stack = JSON.parse(readFileSync(join(clone, '.keel', 'stack.json'), 'utf8')) as {
        temporalAddress: string;
        databaseUrl: string;
      };
      const example = /## Using Keel from an application\n[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)![1]!;
      const imports = example
        .split('\n')
        .filter((l) => l.startsWith('import '))
        .map((l) => l.replace("from 'keel-agents'", "from './src'"))
        .map((l) => l.replace(/from 'keel-agents\/(streaming|embedded|operations)'/, "from './src/$1'"));
      const body = example
        .split('\n')
        .filter((l) => !l.startsWith('import '))
        .join('\n')
        .replace("'localhost:7233'", `'${stack.temporalAddress}'`);
      const script = [
        ...imports,
        'const draft = { edit: (text: string) => void text };',
        'async function main(): Promise<void> {',
        body,
        'console.log(`reply: ${reply}; context ${status.contextTokens} tokens`);',
        "console.log('example done');",
        '}',
        'main().then(() => process.exit(0), (err) => { console.error(err); process.exit(1); });',
      ].join('\n');
      await writeFile(join(clone, 'readme-example.ts'), script);
      const ran = await shell('npx ts-node --swc readme-example.ts', { DATABASE_URL: stack.databaseUrl });
      expect(ran.stderr).toContain('replies will not stream');
      expect(ran.stdout).toMatch(/reply: Hello from the fake model\.; context \d+ tokens/);
      expect(ran.stdout).toContain('example done');
      expect(ran.code).toBe(0);
    } finally {
      dev.stdin.end();
    }
    expect(await exited).toBe(0);
    expect(existsSync(join(clone, '.keel', 'stack.json'))).toBe(false);
  });
});

/** A TCP port nothing listens on right now. */
function freePort(): Promise<number> {
  const server = createServer();
  return new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}
