import { execFileSync } from 'node:child_process';

/**
 * An outside program a suite needs (Debian's chromium, docker-compose): the path in `envVar`, else
 * `binary` on PATH, else undefined, and the suite is skipped (test/support/report-skips.ts says so).
 */
export function toolPath(envVar: string, binary: string): string | undefined {
  if (process.env[envVar]) return process.env[envVar];
  try {
    return execFileSync('which', [binary], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Debian's docker-compose, which test/deploy/compose-config.test.ts reads docker-compose.yml through. */
export const dockerComposePath = (): string | undefined => toolPath('DOCKER_COMPOSE_PATH', 'docker-compose');

/** Debian's chromium, which test/replay/report-browser.test.ts drives. */
export const chromiumPath = (): string | undefined => toolPath('CHROMIUM_PATH', 'chromium');

/** tmux, through which test/cli/dev-terminal.test.ts gives `keel dev` a real terminal. */
export const tmuxPath = (): string | undefined => toolPath('TMUX_PATH', 'tmux');
