import type { Kysely } from 'kysely';
import type { Database } from '../src/store/schema';
import type { ModelClient } from '../src/model/model-client';
import type { KeelConfig } from '../src/config/keel-config';
import type { ToolRegistry } from '../src/tools/registry';
import type { AgentMessage } from '../src/context/types';
import type { CompactionHooks } from '../src/compaction/hooks';

/** What activities need from the worker: the database, the model, the config and the tools. */
export interface ActivityDeps {
  readonly db: Kysely<Database>;
  readonly model: ModelClient;
  /** The summarizer's model when a separate compaction model is configured. */
  readonly compactionModel?: ModelClient;
  readonly config: KeelConfig;
  readonly tools: ToolRegistry;
  /** Token estimate of one message (gpt-tokenizer × 1.2). */
  readonly estimate: (message: AgentMessage) => number;
  /** before_compaction / after_compaction hooks of the embedding application. */
  readonly compactionHooks?: CompactionHooks;
}
