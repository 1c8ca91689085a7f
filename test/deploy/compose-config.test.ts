/**
 * docker-compose.yml as Compose itself reads it (Debian's docker-compose: `docker-compose config`),
 * not as a YAML file we hope is right: the services the production shape names, the worker built
 * from this repository's Dockerfile, the Temporal dynamic config mounted from a file that exists.
 * Skipped, and said so at the start of the run, where no docker-compose is installed (.ci/run installs it).
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { dockerComposePath } from '../support/tool-path';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const compose = dockerComposePath();

interface ComposeConfig {
  services: Record<
    string,
    {
      build?: { context: string; dockerfile?: string };
      image?: string;
      environment?: Record<string, string>;
      volumes?: unknown[];
      expose?: string[];
      healthcheck?: { test: string[] };
    }
  >;
}

(compose ? describe : describe.skip)('docker-compose.yml, as docker-compose reads it', () => {
  let config: ComposeConfig;
  beforeAll(async () => {
    // ANTHROPIC_* are passed through from the caller's environment: empty here, as on a fresh machine.
    const env = { ...process.env, ANTHROPIC_API_KEY: '', ANTHROPIC_BASE_URL: '' };
    const { stdout } = await run(compose!, ['config'], { cwd: ROOT, env, timeout: 60_000 });
    config = parse(stdout) as ComposeConfig;
  }, 90_000);

  it('names the production shape: Temporal on PostgreSQL, its UI, PostgreSQL for Keel, Keel workers', () => {
    expect(Object.keys(config.services).sort()).toEqual([
      'keel-db',
      'keel-worker',
      'postgresql',
      'temporal',
      'temporal-ui',
    ]);
    expect(config.services.temporal!.environment).toMatchObject({ DB: 'postgres12', POSTGRES_SEEDS: 'postgresql' });
  });

  it('builds the worker from this repository, whose Dockerfile runs the compiled worker', () => {
    const build = config.services['keel-worker']!.build!;
    expect(build.context).toBe(ROOT);
    const dockerfile = join(build.context, build.dockerfile ?? 'Dockerfile');
    expect(existsSync(dockerfile)).toBe(true);
    expect(readFileSync(dockerfile, 'utf8')).toMatch(/^CMD \["node", "dist\/workers\/main\.js"\]$/m);
    expect(config.services['keel-worker']!.environment).toMatchObject({
      DATABASE_URL: expect.stringMatching(/^postgres:\/\/.*@keel-db:5432\//),
      TEMPORAL_ADDRESS: 'temporal:7233',
    });
  });

  it("checks the worker's health on its /readyz, with a command the image can run", async () => {
    const worker = config.services['keel-worker']!;
    const port = worker.environment!.KEEL_METRICS_PORT!;
    expect(worker.expose).toEqual([port]);
    const [kind, ...command] = worker.healthcheck!.test;
    expect(kind).toBe('CMD');
    expect(command.slice(0, 2)).toEqual(['node', '-e']);
    expect(command[2]).toContain(`http://127.0.0.1:${port}/readyz`);
    // The probe itself, run as the healthcheck runs it (on a free port here): 0 against a ready
    // endpoint, 1 against one that is not.
    for (const [status, code] of [
      [200, 0],
      [503, 1],
    ] as const) {
      const server = createServer((req, res) => res.writeHead(req.url === '/readyz' ? status : 404).end());
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const script = command[2]!.replace(`:${port}/`, `:${(server.address() as AddressInfo).port}/`);
      try {
        const probe = await run(command[0]!, [command[1]!, script], { timeout: 20_000 }).then(
          () => 0,
          (e: { code?: number }) => e.code ?? -1,
        );
        expect(probe).toBe(code);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    }
  }, 60_000);

  it("mounts Temporal's dynamic config from a file in the repository", () => {
    const mounts = JSON.stringify(config.services.temporal!.volumes);
    expect(mounts).toContain(join(ROOT, 'deploy', 'temporal-dynamic-config.yaml'));
    expect(existsSync(join(ROOT, 'deploy', 'temporal-dynamic-config.yaml'))).toBe(true);
  });
});
