import type { KeelConfig } from '../config/keel-config';
import type { EmbeddingsEndpoint } from './embeddings-client';

/**
 * How an agent's history is recalled: hybrid (keywords fused with an embedding model's vectors), or
 * keywords only, with the reason and the setting that changes it.
 */
export type RecallSetting =
  | { readonly mode: 'hybrid'; readonly endpoint: EmbeddingsEndpoint }
  | { readonly mode: 'keywords'; readonly why: string };

/** The recall an agent's config gives. Encryption at rest keeps dense recall off: a vector leaks its text's meaning. */
export function recallSetting(config: KeelConfig): RecallSetting {
  if (!config.embeddingsBaseUrl || !config.embeddingsModel)
    return {
      mode: 'keywords',
      why: 'no embeddings endpoint: set KEEL_EMBEDDINGS_BASE_URL and KEEL_EMBEDDINGS_MODEL (any OpenAI-compatible /v1/embeddings) for hybrid recall',
    };
  if (config.encryptAtRest)
    return {
      mode: 'keywords',
      why: 'encryption at rest is on (KEEL_ENCRYPT_AT_REST): vectors would leak the sealed text, so dense recall is off',
    };
  return {
    mode: 'hybrid',
    endpoint: {
      baseUrl: config.embeddingsBaseUrl,
      model: config.embeddingsModel,
      ...(config.embeddingsApiKey ? { apiKey: config.embeddingsApiKey } : {}),
    },
  };
}
