/**
 * Keel's public API: what an embedding application imports. Listed once here, so knip (`npm run
 * knip`) treats these exports as used; everything else under src/ must have a production caller.
 */
export {
  KeelClient,
  type KeelClientOptions,
  type SendMessageOptions,
  type ReplyStreamItem,
} from './client/keel-client';
export { KeelRequestError } from './sessions/validate-request';
// The operator's core (sessions, compactions, approvals, subagents) a team builds its own console on.
export {
  FailureTypes,
  type AgentPromptMode,
  type ApprovalOutcome,
  type PendingApproval,
  type AgentTaskResult,
  type CompactionWorkflowResult,
  type SessionStatus,
  type TurnResult,
  type TurnToolCall,
  type TokenUsage,
} from './protocol';
// Streaming over PostgreSQL is `keel-agents/streaming`; over the embedded PGlite, `keel-agents/embedded`.
export type { ReplyStreamSubscriber } from './streaming/reply-subscriber';
export type { ReplyStreamEvent } from './streaming/reply-assembler';
export {
  ToolRegistry,
  type ApprovalContext,
  type ToolContext,
  type ToolDefinition,
  type ToolOutput,
  type ToolRetryPolicy,
} from './tools/registry';
export { RetryableToolError } from './tools/tool-errors';
export type { ToolsModule } from './runtime/activity-deps';
export { CompactionHooks, type BeforeCompactionEvent, type AfterCompactionEvent } from './compaction/hooks';
export { registerContextEngine } from './engine/registry';
export {
  registerCompactionProvider,
  type CompactionProvider,
  type CompactionProviderRequest,
  type CompactionProviderResult,
} from './compaction/compaction-providers';
export type {
  AssembleParams,
  AssembleResult,
  CompactParams,
  CompactResult,
  ContextEngine,
  ContextEngineFactory,
  ContextEngineOptions,
  IngestParams,
  SessionRef,
} from './engine/types';
// An engine of one's own may wrap Keel's pass-through engine (examples/retrieval-engine).
export { LegacyContextEngine } from './engine/legacy';
export type { AgentMessage } from './context/types';
export {
  buildSessionKey,
  isValidSessionKey,
  parseSessionKey,
  sessionWorkflowId,
  type SessionKeyParts,
} from './sessions/session-key';
export { sessionKeySchema } from './sessions/session-key-schema';
export { InvalidSessionKeyError } from './sessions/errors';
export { configFromEnv, ConfigError, type KeelConfig } from './config/keel-config';
export { loadKeelSettings, type KeelSettings } from './config/agent-config';
// How workers, clients and commands reach Temporal: address, namespace, TLS (mTLS) and API key.
export { temporalConnectionFor } from './temporal/connection-for-config';
export {
  temporalConnectionOptions,
  describeTemporalConnection,
  TemporalTlsFileError,
  type TemporalConnectionOptions,
} from './temporal/connection-options';
export { UnreachableDependencyError } from './runtime/reach';
// An application's own KeelClient reads and writes the workers' encrypted payloads with
// `dataConverter: keelDataConverter(keyRingFor(configFromEnv()))` (docs/security.md).
export { keelDataConverter, EncryptionCodec } from './security/payload-codec';
export { keyRingFor } from './config/keel-config';
