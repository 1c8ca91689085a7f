import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Search attributes Keel sets so the Temporal UI can filter runs by session, trigger and status. */
export const KeelAgentId = defineSearchAttributeKey('KeelAgentId', SearchAttributeType.KEYWORD);
export const KeelSessionKey = defineSearchAttributeKey('KeelSessionKey', SearchAttributeType.KEYWORD);
export const KeelTrigger = defineSearchAttributeKey('KeelTrigger', SearchAttributeType.KEYWORD);
export const KeelStatus = defineSearchAttributeKey('KeelStatus', SearchAttributeType.KEYWORD);
/** On a subagent's session workflow: the session that spawned it. */
export const KeelParentSessionKey = defineSearchAttributeKey('KeelParentSessionKey', SearchAttributeType.KEYWORD);

/** For `temporal server start-dev --search-attribute NAME=Keyword`. */
export const KEEL_SEARCH_ATTRIBUTES = [KeelAgentId, KeelSessionKey, KeelTrigger, KeelStatus, KeelParentSessionKey].map(
  (k) => k.name,
);
