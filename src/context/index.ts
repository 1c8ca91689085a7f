/**
 * Keel's context pipeline: pure functions over messages (library API).
 */
export * from './types';
export { repairToolCallInputs, isValidToolName, MAX_TOOL_NAME_LENGTH, ATTACHMENT_REDACTION_MARKER } from './repair-tool-call-inputs';
export type { RepairToolCallInputsOptions, RepairToolCallInputsResult } from './repair-tool-call-inputs';
export { repairToolUseResultPairing, normalizeNativeToolResults } from './repair-tool-use-result-pairing';
export type { PairingRepairResult } from './repair-tool-use-result-pairing';
export { MISSING_TOOL_RESULT_TEXT } from './message-parts';
export { stripToolResultDetails } from './strip-tool-result-details';
export { validateAnthropicTurns, validateGeminiTurns, validateTurns } from './validate-turns';
export type { TurnRules, TurnValidationReport, TurnValidationResult } from './validate-turns';
export { limitHistoryTurns, resolveHistoryLimit } from './limit-history-turns';
export type { LimitHistoryTurnsResult, HistoryLimitConfig, ChannelHistoryConfig } from './limit-history-turns';
export {
  estimateTokens,
  estimateMessagesTokens,
  defaultCountTokens,
  TokenCache,
  IMAGE_TOKEN_ESTIMATE,
  MESSAGE_OVERHEAD_TOKENS,
} from './estimate-tokens';
export type { CountTokens, EstimateOptions, EstimateMessagesOptions } from './estimate-tokens';
export {
  resolveContextWindowTokens,
  resolveReserveTokens,
  shouldCompactAfterTurn,
  memoryFlushThresholdTokens,
  shouldRunMemoryFlush,
  pressureLevel,
  DEFAULT_RESERVE_TOKENS,
} from './context-window';
export type {
  ContextWindow,
  ContextWindowConfig,
  ContextWindowSource,
  CatalogModel,
  ModelWindowOverride,
  ResolveContextWindowInput,
  MemoryFlushInput,
  PressureLevel,
} from './context-window';
export { isSilentReply, isSilentReplyPrefix, SILENT_REPLY_TOKEN } from './silent-reply';
export { buildBootstrapContext, BOOTSTRAP_FILE_NAMES } from './bootstrap';
export type { BootstrapFile, BootstrapCaps, BootstrapContext, InjectedBootstrapFile } from './bootstrap';
export { buildSystemPrompt, DEFAULT_IDENTITY_LINE } from './system-prompt';
export type { PromptMode, SystemPromptParts, ToolDescription } from './system-prompt';
export { assertProviderValid, toAnthropicShape, ProviderMessagesInvalidError } from './assert-provider-valid';
export type { ProviderRule, ApiMessage, ApiBlock } from './assert-provider-valid';
export { runContextPipeline, turnRulesFor } from './pipeline';
export type { ContextPipelineOptions, ContextPipelineReport, ContextPipelineResult, PairingCounts } from './pipeline';
export { isContextOverflowError } from './is-context-overflow-error';
