import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { configFromEnv, ConfigError } from '../../src/config/keel-config';
import { SETTINGS, settingsFromEnv, type Setting } from '../../src/config/settings-table';

const rows = Object.entries(SETTINGS) as [string, Setting][];
const reference = readFileSync(resolve(__dirname, '../../docs/reference.md'), 'utf8');

/** The backticked names in the part of docs/reference.md from `heading` to the next heading of any level. */
function namesUnder(heading: string): Set<string> {
  const start = reference.indexOf(heading);
  expect(start).toBeGreaterThanOrEqual(0);
  const rest = reference.slice(start + heading.length);
  const section = rest.slice(0, rest.search(/\n#{2,4} /));
  return new Set([...section.matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
}

describe('the settings table', () => {
  it('gives every setting a doc line, and no two settings one variable', () => {
    for (const [key, row] of rows) expect({ key, doc: row.doc.length > 10 }).toEqual({ key, doc: true });
    const envs = rows.flatMap(([, row]) => (row.env ? [row.env] : []));
    expect(new Set(envs).size).toBe(envs.length);
  });

  it('is what docs/reference.md lists: every variable in its environment table, every file key in its file section', () => {
    const documentedEnv = namesUnder('### Environment variables');
    const documentedFile = namesUnder('### The configuration file');
    const undocumentedEnv = rows.flatMap(([, row]) => (row.env && !documentedEnv.has(row.env) ? [row.env] : []));
    const undocumentedFile = rows.flatMap(([, row]) => {
      const root = row.file?.split('.')[0];
      return root && !documentedFile.has(root) && !documentedFile.has(row.file!) ? [row.file!] : [];
    });
    expect({ undocumentedEnv, undocumentedFile }).toEqual({ undocumentedEnv: [], undocumentedFile: [] });
  });

  it('reads each variable by its kind: switches, lists, JSON and sizes', () => {
    expect(
      settingsFromEnv({
        KEEL_PROMPT_CACHING: 'no',
        KEEL_ALLOWED_AGENTS: ' main, ,support ',
        KEEL_HISTORY_LIMITS: '{"channels":{}}',
        KEEL_CONTEXT_CACHE_BYTES: '2mb',
        KEEL_MODEL: 'claude-x',
        KEEL_IDENTITY: '',
      }),
    ).toEqual({
      promptCaching: false,
      allowedAgents: ['main', 'support'],
      historyLimits: { channels: {} },
      contextCacheBytes: 2 * 1024 ** 2,
      model: 'claude-x',
    });
  });

  it('names the variable in a refusal, the embeddings variables included', () => {
    const refusal = (() => {
      try {
        configFromEnv({ KEEL_EMBEDDINGS_BASE_URL: 'not a url', KEEL_EMBEDDINGS_MODEL: 'nomic-embed-text' });
      } catch (err) {
        return err;
      }
    })();
    expect(refusal).toBeInstanceOf(ConfigError);
    expect((refusal as Error).message).toContain('  KEEL_EMBEDDINGS_BASE_URL: KEEL_EMBEDDINGS_BASE_URL must be');
  });
});
