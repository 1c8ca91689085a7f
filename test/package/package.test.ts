/**
 * The package as a user gets it: `npm pack` (which builds), the tarball installed into a temporary
 * project holding examples/agent-fan-out, then that project compiled with `tsc` against the published
 * types (a client, a Keel worker with one tool, a workflow with runAgentTask), run against a dev server
 * and the fake model, and its `keel` binary run.
 *
 * Installing offline: the tarball is unpacked into the project's node_modules and its binary linked, as
 * npm does; its dependencies resolve from this repository's node_modules (the project lives under
 * .build-test/, so Node and TypeScript find them walking up), which keeps the test off the registry.
 * One case installs it as the README says, with npm, into an empty folder: that one reads the
 * registry's metadata (tarballs from npm's cache when it has them).
 *
 * A client is only a client: a strict program (`strict`, `skipLibCheck: false`, `module: node16`)
 * compiles against the published declarations, and the root entry loads no database code.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startDevServer, type DevServer } from '../../src/temporal/dev-server';
import { fakeReply, startFakeAnthropic, type FakeAnthropic } from '../../src/testing';
import { endsWithToolResult, lastUserText } from '../support/durable-turn-helpers';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '../..');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

let dir: string;
let project: string;
let packed: { name: string; files: Array<{ path: string }> };
let tarball: string;
let packedFile: string;

/** Module paths of the database layer: Keel's store, PGlite, node-postgres and Kysely. */
const DATABASE_MODULE =
  /\/keel-agents\/dist\/src\/store\/|\/node_modules\/(@electric-sql\/|pg\/|pg-[a-z-]+\/|kysely\/)/;

/** The strictest settings a Node service compiles with; Temporal's declarations need `@types/ms` under node16. */
const STRICT_CONSUMER = {
  target: 'ES2022',
  module: 'node16',
  moduleResolution: 'node16',
  lib: ['ES2022'],
  types: ['node'],
  strict: true,
  skipLibCheck: false,
  noEmit: true,
};

/** A client with streaming, a worker, the embedded database's stream and the operations core, as an application writes them. */
const STRICT_CONSUMER_PROGRAM = `import { Connection } from '@temporalio/client';
import { KeelClient, loadKeelSettings, temporalConnectionFor } from 'keel-agents';
import { runKeelWorker } from 'keel-agents/worker';
import { PgReplyStreamSubscriber } from 'keel-agents/streaming';
import { replyStreamForStore, EmbeddedDatabaseMissingError } from 'keel-agents/embedded';
import { KeelOperations, openStore } from 'keel-agents/operations';

export async function send(): Promise<string> {
  const connection = await Connection.connect(temporalConnectionFor(loadKeelSettings().defaults));
  const stream = new PgReplyStreamSubscriber({ connectionString: 'postgres://localhost/keel' });
  const { reply } = await new KeelClient({ connection, stream }).sendMessage('agent:main:main', 'Hello');
  return reply;
}
export const serve = (): Promise<void> => runKeelWorker();
export const embedded = { replyStreamForStore, EmbeddedDatabaseMissingError };
export async function failedCompactions(client: KeelClient): Promise<number> {
  const store = await openStore({ kind: 'postgres', url: 'postgres://localhost/keel' });
  const operations = new KeelOperations({ client, db: store.db, settings: loadKeelSettings() });
  return (await operations.compactions.list({ agentId: 'main', failed: true })).compactions.length;
}
`;

beforeAll(async () => {
  mkdirSync(join(ROOT, '.build-test'), { recursive: true });
  dir = mkdtempSync(join(ROOT, '.build-test', 'package-'));
  // prepack builds: dist/ is compiled afresh, declarations and workflow bundles included.
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
  packed = (JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<typeof packed & { filename: string }>)[0]!;
  packedFile = (packed as unknown as { filename: string }).filename;
  tarball = join(dir, packedFile);

  project = join(dir, 'app');
  cpSync(join(ROOT, 'examples/agent-fan-out'), project, { recursive: true });
  const installed = join(project, 'node_modules', packed.name);
  mkdirSync(installed, { recursive: true });
  await run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
  const bin = (JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { bin: Record<string, string> })
    .bin;
  mkdirSync(join(project, 'node_modules/.bin'));
  for (const [name, file] of Object.entries(bin)) {
    chmodSync(join(installed, file), 0o755);
    symlinkSync(join('..', packed.name, file), join(project, 'node_modules/.bin', name));
  }
}, 600_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the published package', () => {
  it('holds the compiled code, its declarations and workflow bundles, and no test or bench files', () => {
    const paths = packed.files.map((f) => f.path);
    expect(packed.name).toBe('keel-agents');
    expect(paths).toEqual(
      expect.arrayContaining([
        'dist/src/index.js',
        'dist/src/index.d.ts',
        'dist/workers/index.d.ts',
        'dist/src/streaming/index.d.ts',
        'dist/src/embedded/index.d.ts',
        'bin/keel.js',
        'dist/workers/keel.js',
        'dist/workflows/run-agent-task.d.ts',
        'dist/src/testing/index.d.ts',
        'dist/workflow-bundle.plain.js',
        'dist/workflow-bundles.json',
      ]),
    );
    expect(paths.filter((p) => /(^|\/)(test|bench)\/|\.test\.|\.map$/.test(p))).toEqual([]);
    expect(paths.filter((p) => p.endsWith('.ts') && !p.endsWith('.d.ts'))).toEqual([]);
  });

  it('compiles a client, a worker with one tool and a runAgentTask workflow against its published types', async () => {
    await run(process.execPath, [TSC, '-p', join(project, 'tsconfig.json')], { cwd: project });
    // The types are real, not `any`: a misspelt task field is refused.
    writeFileSync(
      join(project, 'src/misspelt.ts'),
      "import { runAgentTask } from 'keel-agents/workflow';\nexport const t = () => runAgentTask({ txt: 'hi' });\n",
    );
    const refused = await run(process.execPath, [TSC, '-p', join(project, 'tsconfig.json'), '--noEmit'], {
      cwd: project,
    }).then(
      () => '',
      (err: { stdout: string }) => err.stdout,
    );
    rmSync(join(project, 'src/misspelt.ts'));
    expect(refused).toMatch(/misspelt\.ts.*'txt' does not exist in type 'AgentTask'/);
  });

  it('compiles a strict consumer (skipLibCheck: false, module node16) of the client, worker, streaming and embedded entries', async () => {
    const strict = join(project, 'strict');
    mkdirSync(strict);
    writeFileSync(
      join(strict, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: STRICT_CONSUMER, files: ['consumer.ts'] }),
    );
    writeFileSync(join(strict, 'consumer.ts'), STRICT_CONSUMER_PROGRAM);
    const compiled = await run(process.execPath, [TSC, '-p', join(strict, 'tsconfig.json')], { cwd: strict }).then(
      () => '',
      (err: { stdout: string }) => err.stdout,
    );
    expect(compiled).toBe('');
  });

  it('loads no store, PGlite, pg or Kysely module from its root entry', async () => {
    const { stdout } = await run(
      process.execPath,
      ['-e', "require('keel-agents'); console.log(JSON.stringify(Object.keys(require.cache)))"],
      { cwd: project },
    );
    const loaded = JSON.parse(stdout) as string[];
    expect(loaded.some((path) => path.includes('/keel-agents/dist/src/client/keel-client.js'))).toBe(true);
    expect(loaded.filter((path) => DATABASE_MODULE.test(path))).toEqual([]);
    // The streaming entry is where pg comes in.
    const { stdout: streaming } = await run(
      process.execPath,
      ['-e', "require('keel-agents/streaming'); console.log(JSON.stringify(Object.keys(require.cache)))"],
      { cwd: project },
    );
    expect((JSON.parse(streaming) as string[]).some((path) => /\/node_modules\/pg\//.test(path))).toBe(true);
  });

  it('installs with `npm install ./keel-agents-*.tgz` into an empty folder, without EBADENGINE, and runs `npx keel --help`', async () => {
    // Outside the repository, so nothing resolves from this checkout's node_modules: what a user gets.
    const empty = mkdtempSync(join(tmpdir(), 'keel-tarball-'));
    try {
      writeFileSync(join(empty, 'package.json'), JSON.stringify({ name: 'empty-app', private: true }));
      cpSync(tarball, join(empty, packedFile));
      // The registry serves the dependencies' metadata; their tarballs come from npm's cache when it has them.
      const installed = await run(
        'npm',
        ['install', '--prefer-offline', '--no-audit', '--no-fund', `./${packedFile}`],
        {
          cwd: empty,
          env: { ...process.env, npm_config_update_notifier: 'false' },
          maxBuffer: 64 * 1024 * 1024,
        },
      );
      expect(`${installed.stdout}${installed.stderr}`).not.toContain('EBADENGINE');
      const { stdout } = await run('npx', ['--no-install', 'keel', '--help'], {
        cwd: empty,
        env: { ...process.env, npm_config_update_notifier: 'false' },
      });
      expect(stdout).toContain('Usage: keel');
      const { stdout: main } = await run(
        process.execPath,
        ['-e', "console.log(typeof require('keel-agents').KeelClient)"],
        {
          cwd: empty,
        },
      );
      expect(main.trim()).toBe('function');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  }, 600_000);

  it('runs `npx keel --help` from its compiled binary', async () => {
    const { stdout } = await run('npx', ['--no-install', 'keel', '--help'], {
      cwd: project,
      env: { ...process.env, npm_config_update_notifier: 'false' },
    });
    expect(stdout).toContain('Usage: keel');
  });

  describe('against a dev server', () => {
    let server: DevServer;
    let fake: FakeAnthropic;
    const children: ChildProcess[] = [];
    beforeAll(async () => {
      [server, fake] = await Promise.all([startDevServer({ log: () => {} }), startFakeAnthropic()]);
    });
    afterAll(async () => {
      for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
      await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : undefined)));
      await fake?.close();
      await server?.stop();
    });

    /** Starts `node <file> <args>` (file relative to the project's dist/) in the project; resolves once its output contains `ready`. */
    const startProcess = (file: string, env: NodeJS.ProcessEnv, ready: string, args: string[] = []): Promise<void> => {
      const child = spawn(process.execPath, [resolve(project, 'dist', file), ...args], {
        cwd: project,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let out = '';
      return new Promise((resolveReady, reject) => {
        const onData = (d: Buffer) => {
          out += d.toString();
          if (out.includes(ready)) resolveReady();
        };
        child.stdout!.on('data', onData);
        child.stderr!.on('data', onData);
        child.once('exit', (code) => reject(new Error(`${file} exited (${code}) before it was ready:\n${out}`)));
      });
    };

    it('runs the client, the Keel worker with its tool and the fan-out workflow, beside keel dev’s worker', async () => {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        ...fake.env,
        TEMPORAL_ADDRESS: server.address,
        KEEL_HOME: join(dir, 'home'),
        KEEL_RESET_MODE: 'none',
      };
      // The example's own task queue by default: nothing set.
      delete env.KEEL_TASK_QUEUE;
      fake.respondWith((request) => {
        const text = lastUserText(request);
        if (endsWithToolResult(request)) return fakeReply.text('Keels keep a boat upright and on course.');
        // Each call's id is its own, as a real model's are: a repeated id is dropped from the context.
        if (text.startsWith('Look up "keel"'))
          return fakeReply.toolUse([
            { id: `toolu_lookup_keel_${request.index}`, name: 'lookup', input: { term: 'keel' } },
          ]);
        const angle = /from the (\w+) angle/.exec(text)?.[1];
        return angle ? fakeReply.text(`The ${angle} view.`) : undefined;
      });
      await Promise.all([
        startProcess('keel-worker.js', env, 'polling agent-fan-out'),
        startProcess('worker.js', env, 'research worker: polling'),
        // As `keel dev` runs one: Keel's default queue, no `lookup` tool, a database of its own.
        startProcess(
          '../node_modules/keel-agents/bin/keel.js',
          { ...env, KEEL_HOME: join(dir, 'dev-home') },
          'polling keel ',
          ['worker'],
        ),
      ]);

      const { stdout } = await run(process.execPath, [join(project, 'dist/start.js'), 'Why do boats have keels?'], {
        cwd: project,
        env,
      });
      const out = JSON.parse(stdout) as {
        reply: string;
        research: { answer: string; perspectives: Array<{ sessionKey: string }>; outputTokens: number };
      };
      expect(out.reply).toBe('Keels keep a boat upright and on course.');
      expect(out.research.answer).toBe(
        'history: The history view.\n\nengineering: The engineering view.\n\neconomics: The economics view.',
      );
      expect(out.research.perspectives.map((p) => p.sessionKey)).toEqual([
        expect.stringMatching(/^agent:research:task-/),
        expect.stringMatching(/^agent:research:task-/),
        expect.stringMatching(/^agent:research:task-/),
      ]);
      expect(out.research.outputTokens).toBeGreaterThan(0);

      // The packaged worker ran the application's tool, and each task was offered only that tool.
      const toolResult = fake.requests.find(endsWithToolResult)!;
      expect(JSON.stringify(toolResult.body.messages)).toContain(
        'keel: the structural spine along the bottom of a hull',
      );
      const tasks = fake.requests.filter((r) => /from the \w+ angle/.test(lastUserText(r)));
      expect(tasks).toHaveLength(3);
      for (const task of tasks) expect((task.body.tools ?? []).map((t) => t.name)).toEqual(['lookup']);

      // Sent to keel dev's queue instead, the tasks reach a worker without `lookup`: the client prints why.
      const misrouted = await run(process.execPath, [join(project, 'dist/start.js'), 'Why do boats have keels?'], {
        cwd: project,
        env: { ...env, KEEL_TASK_QUEUE: 'keel' },
      }).then(
        () => ({ code: 0, stderr: '' }),
        (err: { code: number; stderr: string }) => err,
      );
      expect(misrouted.code).toBe(1);
      expect(misrouted.stderr).toContain('Workflow execution failed: ');
      expect(misrouted.stderr).toContain(
        'tools: this agent has no tool "lookup" on the worker that took the task (task queue "keel")',
      );
    }, 300_000); // three workers and two client runs: more than jest's default under load
  });
});
