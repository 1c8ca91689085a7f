/**
 * Turn-based history truncation (OpenClaw's `limitHistoryTurns` and per-channel history limits).
 */
import { repairToolUseResultPairing, type PairingRepairResult } from './repair-tool-use-result-pairing';
import type { AgentMessage } from './types';

export interface LimitHistoryTurnsResult {
  /** The kept messages, pairing-repaired; the input array itself when nothing changed. */
  messages: AgentMessage[];
  /** Messages cut from the front by the limit (before pairing repair). */
  droppedMessageCount: number;
  /** The pairing repair run after the cut (a cut can orphan tool results). */
  pairing: Omit<PairingRepairResult, 'messages'>;
}

/**
 * Keeps everything from the `limit`-th last user message onward, then re-runs pairing repair.
 * A limit that is undefined, ≤ 0 or not finite, or a transcript with no more than `limit` user
 * messages, leaves the messages as they are (pairing repair still runs).
 *
 * @example limitHistoryTurns(messages, 10) // the last 10 user turns and everything after them
 */
export function limitHistoryTurns(messages: AgentMessage[], limit: number | undefined): LimitHistoryTurnsResult {
  const start = cutIndex(messages, limit);
  const kept = start > 0 ? messages.slice(start) : messages;
  const { messages: repaired, ...pairing } = repairToolUseResultPairing(kept);
  return { messages: repaired, droppedMessageCount: start, pairing };
}

function cutIndex(messages: AgentMessage[], limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit) || limit <= 0) return 0;
  let userTurns = 0;
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    if (!isUserTurn(messages[i])) continue;
    userTurns += 1;
    if (userTurns === Math.floor(limit)) return i;
  }
  return 0;
}

/** A user message that is only Anthropic-native tool results is the tail of a tool batch, not a turn. */
export function isUserTurn(message: AgentMessage): boolean {
  if (message.role !== 'user') return false;
  if (!Array.isArray(message.content) || message.content.length === 0) return true;
  return message.content.some((b) => (b as { type: string }).type !== 'tool_result');
}

/** Per-provider history limits, as in OpenClaw's `channels.<provider>` config. */
export interface ChannelHistoryConfig {
  /** Limit for channel/group/room sessions. */
  historyLimit?: number | undefined;
  /** Limit for DM sessions. */
  dmHistoryLimit?: number | undefined;
  /** Per-user DM overrides, keyed by the peer id in the session key. */
  dms?: Record<string, { historyLimit?: number | undefined } | undefined> | undefined;
}

export interface HistoryLimitConfig {
  channels?: Record<string, ChannelHistoryConfig | undefined> | undefined;
}

/**
 * Resolves the history limit for a session key: DM sessions use
 * `channels.<provider>.dms.<userId>.historyLimit` → `channels.<provider>.dmHistoryLimit`; group,
 * channel and room sessions use `channels.<provider>.historyLimit`. Thread and topic suffixes
 * (`:thread:<id>`, `:topic:<id>`) are stripped first. Undefined when no limit applies (main, cron,
 * hook and subagent keys, unknown providers).
 *
 * @example resolveHistoryLimit('agent:main:telegram:dm:42', config) // dms["42"] → dmHistoryLimit
 */
export function resolveHistoryLimit(sessionKey: string, config: HistoryLimitConfig | undefined): number | undefined {
  const peer = parsePeer(sessionKey);
  if (!peer || !config?.channels) return undefined;
  const channel = lookup(config.channels, peer.provider);
  if (!channel) return undefined;
  if (peer.kind === 'dm') {
    const perUser = channel.dms ? lookup(channel.dms, peer.peerId)?.historyLimit : undefined;
    return positive(perUser) ?? positive(channel.dmHistoryLimit);
  }
  return positive(channel.historyLimit);
}

interface PeerRef {
  provider: string;
  kind: 'dm' | 'group';
  peerId: string;
}

const DM_KINDS = new Set(['dm', 'direct']);
const GROUP_KINDS = new Set(['group', 'channel', 'room']);
const THREAD_SUFFIX = /:(thread|topic):.*$/i;

/**
 * Reads only what the limit needs from `agent:<agentId>:<provider>[:<account>]:<kind>:<peerId>`
 * (the `agent:<id>:` prefix is optional). A private reader: `src/sessions/` owns full key parsing.
 */
function parsePeer(sessionKey: string): PeerRef | undefined {
  let parts = sessionKey.trim().replace(THREAD_SUFFIX, '').split(':');
  if (parts[0]?.toLowerCase() === 'agent') parts = parts.slice(2);
  if (parts.length < 3) return undefined;
  for (let k = 1; k < parts.length - 1; k += 1) {
    const kind = parts[k].toLowerCase();
    if (!DM_KINDS.has(kind) && !GROUP_KINDS.has(kind)) continue;
    const peerId = parts.slice(k + 1).join(':');
    if (!peerId) return undefined;
    return { provider: parts[0].toLowerCase(), kind: DM_KINDS.has(kind) ? 'dm' : 'group', peerId };
  }
  return undefined;
}

/** Exact key first, then a case-insensitive match (session keys are stored lower-cased). */
function lookup<T>(record: Record<string, T | undefined>, key: string): T | undefined {
  if (Object.prototype.hasOwnProperty.call(record, key)) return record[key];
  const lower = key.toLowerCase();
  const match = Object.keys(record).find((k) => k.toLowerCase() === lower);
  return match === undefined ? undefined : record[match];
}

function positive(value: number | undefined): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;
}
