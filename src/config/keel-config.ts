import { z } from 'zod';
import { maxOutputTokensFor } from '../context/context-window';
import { parseKeyRing, type KeyRing } from '../security/key-ring';
import { shownSettingValue, valueAtPath } from './shown-setting-value';
import { envNameOf, settingsFromEnv, settingsShape } from './settings-table';

/** Keel's runtime configuration: the settings table's schemas (settings-table.ts), checked together. */
export const keelConfigSchema = z
  .object(settingsShape())
  .superRefine(coherentModelSettings)
  .superRefine(coherentSecuritySettings)
  .superRefine(boundedRuns);

/** Encryption settings that cannot work together fail at start, naming the variable to set. */
function coherentSecuritySettings(
  c: {
    encryptionKeys?: string | undefined;
    encryptionKeyId?: string | undefined;
    encryptAtRest: boolean;
    codecServerPort?: number | undefined;
    codecServerToken?: string | undefined;
  },
  ctx: z.RefinementCtx,
): void {
  if (c.encryptionKeys) {
    try {
      parseKeyRing(c.encryptionKeys, c.encryptionKeyId);
    } catch (err) {
      ctx.addIssue({
        code: 'custom',
        path: ['encryptionKeys'],
        message: (err as Error).message.replace(/^KEEL_ENCRYPTION_KEYS:\s*/, ''),
      });
    }
  } else if (c.encryptionKeyId) {
    ctx.addIssue({
      code: 'custom',
      path: ['encryptionKeyId'],
      message: 'names a key but KEEL_ENCRYPTION_KEYS is not set',
    });
  }
  if (c.encryptAtRest && !c.encryptionKeys) {
    ctx.addIssue({
      code: 'custom',
      path: ['encryptAtRest'],
      message: 'encryption at rest needs keys: set KEEL_ENCRYPTION_KEYS ("id:base64key", `openssl rand -base64 32`)',
    });
  }
  if (c.codecServerPort !== undefined && !c.codecServerToken) {
    ctx.addIssue({
      code: 'custom',
      path: ['codecServerPort'],
      message: 'the codec server needs a bearer token: set KEEL_CODEC_SERVER_TOKEN (`openssl rand -hex 24`)',
    });
  }
  if (c.codecServerPort !== undefined && !c.encryptionKeys) {
    ctx.addIssue({
      code: 'custom',
      path: ['codecServerPort'],
      message: 'a codec server without KEEL_ENCRYPTION_KEYS has nothing to decode; set the keys or unset the port',
    });
  }
}

/** The configured key ring, or undefined when encryption is off. */
export function keyRingFor(config: Pick<KeelConfig, 'encryptionKeys' | 'encryptionKeyId'>): KeyRing | undefined {
  return config.encryptionKeys ? parseKeyRing(config.encryptionKeys, config.encryptionKeyId) : undefined;
}

/** No run is unbounded: the step limit may be off only where a token limit is set. */
function boundedRuns(c: { maxModelCallsPerTurn: number | null; maxTurnTokens: number | null }, ctx: z.RefinementCtx) {
  if (c.maxModelCallsPerTurn !== null || c.maxTurnTokens !== null) return;
  ctx.addIssue({
    code: 'custom',
    path: ['maxModelCallsPerTurn'],
    message:
      'a run needs a limit: set a token limit (KEEL_MAX_TURN_TOKENS, runBudget.maxTokens) to turn the step limit off',
  });
}

/** Settings that are each valid but contradict one another would fail every turn, not at start. */
function coherentModelSettings(
  c: {
    contextWindowTokens: number;
    reserveTokens: number;
    reserveTokensFloor: number;
    maxOutputTokens?: number | undefined;
    modelProvider: string;
    openAiBaseUrl?: string | undefined;
    compactionModel?: string | undefined;
    compactionModelUrl?: string | undefined;
    compactionModelProvider: string;
    embeddingsBaseUrl?: string | undefined;
    embeddingsModel?: string | undefined;
  },
  ctx: z.RefinementCtx,
): void {
  if (Boolean(c.embeddingsBaseUrl) !== Boolean(c.embeddingsModel)) {
    ctx.addIssue({
      code: 'custom',
      path: [c.embeddingsBaseUrl ? 'embeddingsModel' : 'embeddingsBaseUrl'],
      message: c.embeddingsBaseUrl
        ? 'an embeddings endpoint needs its model: set KEEL_EMBEDDINGS_MODEL (config file embeddings.model), e.g. text-embedding-3-small'
        : 'an embedding model needs its endpoint: set KEEL_EMBEDDINGS_BASE_URL (config file embeddings.baseUrl), e.g. http://127.0.0.1:11434/v1',
    });
  }
  // The reserve needs no check: it never takes more than half the window (effectiveReserveTokens).
  if (c.maxOutputTokens !== undefined && c.maxOutputTokens >= c.contextWindowTokens) {
    ctx.addIssue({
      code: 'custom',
      path: ['maxOutputTokens'],
      message: `${c.maxOutputTokens} output tokens do not fit the ${c.contextWindowTokens}-token context window; set fewer (each call asks for at most the reserve, ${maxOutputTokensFor(c.contextWindowTokens, c)} here), or unset it for the default`,
    });
  }
  if (c.modelProvider === 'openai-compatible' && !c.openAiBaseUrl) {
    ctx.addIssue({
      code: 'custom',
      path: ['openAiBaseUrl'],
      message: 'an openai-compatible model needs its endpoint: set model.baseUrl in the config file',
    });
  }
  if (c.compactionModel && !c.compactionModelUrl && c.compactionModelProvider === 'openai-compatible') {
    ctx.addIssue({
      code: 'custom',
      path: ['compactionModel'],
      message: 'names a summarizer model but KEEL_COMPACTION_MODEL_URL (its OpenAI-compatible endpoint) is not set',
    });
  }
}

export type KeelConfig = z.infer<typeof keelConfigSchema>;

/** Maps environment variables to the config, failing with the variable's name on bad values. */
export function configFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<KeelConfig> = {},
  file?: ConfigFileValues,
): KeelConfig {
  // Environment variables override the config file's top-level values; code overrides both.
  const setInEnv = settingsFromEnv(env);
  const raw = { ...file?.values, ...setInEnv, ...overrides };
  const parsed = keelConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const name = (key: string) =>
      file && key in file.values && !(key in setInEnv) ? `${file.path}: ${file.names[key] ?? key}` : envNameOf(key);
    const lines = parsed.error.issues.map((i) => {
      const setting = name(String(i.path[0]));
      if (i.path.length === 0) return `  ${setting}: ${i.message}`;
      return `  ${setting}: ${i.message} (got ${shownSettingValue(setting, valueAtPath(raw, i.path))})`;
    });
    throw new ConfigError(`invalid Keel configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

/** Top-level values of a config file, under the environment; `names` gives each key's JSON path in the file. */
export interface ConfigFileValues {
  readonly path: string;
  readonly values: Partial<Record<keyof KeelConfig, unknown>>;
  readonly names: Partial<Record<string, string>>;
}

/** A configuration value is missing or malformed; the message names the variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}
