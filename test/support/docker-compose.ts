import { execFileSync } from 'node:child_process';

/** Debian's docker-compose (DOCKER_COMPOSE_PATH, else on PATH), or undefined where none is installed. */
export function dockerComposePath(): string | undefined {
  if (process.env.DOCKER_COMPOSE_PATH) return process.env.DOCKER_COMPOSE_PATH;
  try {
    return execFileSync('which', ['docker-compose'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}
