/**
 * Session keys: which conversation bucket a message belongs to (OpenClaw's session-key shapes).
 *
 * Grammar (segments are separated by `:`; keys are case-sensitive and never normalized, so
 * `buildSessionKey(parseSessionKey(k)) === k`):
 *
 *   main      agent:<agentId>:<mainKey>[suffix]                       (mainKey default `main`)
 *   chat      agent:<agentId>:<channel>:<group|channel|room>:<id>[suffix]
 *   dm        agent:<agentId>:<channel>:<dm|direct>:<userId>[suffix] (the spec's `<provider>`)
 *   subagent  agent:<agentId>:subagent:<uuid>
 *   cron      cron:<jobId>
 *   hook      hook:<uuid>
 *   suffix    :thread:<id> | :topic:<id>                              (at most one)
 *
 * Character rules (decided for Keel; the spec gives none):
 * - names (agentId, mainKey, channel): 1–64 of `A-Z a-z 0-9 _ -`, starting with a letter or digit,
 *   so they are safe in file names, log fields and the workflow id below;
 * - ids (peer, thread, topic, cron job): 1–200 characters, anything except `:` (the separator),
 *   whitespace and control/format characters, so platform ids such as `-1003593489589`,
 *   `+4915112345678@s.whatsapp.net` or `C024BE91L` pass as they are;
 * - `uuid` parts (hook, subagent): an RFC 4122 shaped uuid of any version, either case;
 * - the whole key: at most 256 characters.
 * `subagent` is reserved: `agent:<agentId>:subagent…` is always read as a subagent key.
 * cron and hook keys belong to no agent: their `agentId` is undefined (the spec gives them none;
 * the owning agent is the `agent_id` column next to the key, see `sessionWorkflowId`).
 */
import { InvalidSessionKeyError, type SessionKeyPart } from './errors';
import { SESSION_WORKFLOW_TYPE, SUBAGENT_WORKFLOW_TYPE } from '../protocol';

export { InvalidSessionKeyError } from './errors';

/** The longest key accepted (whole string). */
export const MAX_SESSION_KEY_LENGTH = 256;
/** The longest agentId, mainKey or channel name. */
export const MAX_SESSION_KEY_NAME_LENGTH = 64;
/** The longest peer, thread, topic or job id. */
export const MAX_SESSION_KEY_ID_LENGTH = 200;
/** The mainKey used when none is given (OpenClaw `session.mainKey` default). */
export const DEFAULT_MAIN_KEY = 'main';

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
const ID_PATTERN = /^[^\s:\p{C}]+$/u;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SUFFIX_KINDS = ['thread', 'topic'] as const;
const ROOM_KINDS = ['group', 'channel', 'room'] as const;
const DM_VARIANTS = ['dm', 'direct'] as const;

const SHAPE = {
  any: 'agent:<agentId>:<mainKey>, agent:<agentId>:<channel>:<group|channel|room|dm|direct>:<id>, agent:<agentId>:subagent:<uuid>, cron:<jobId> or hook:<uuid>',
  main: 'agent:<agentId>:<mainKey>',
  chat: 'agent:<agentId>:<channel>:<group|channel|room|dm|direct>:<id>',
  subagent: 'agent:<agentId>:subagent:<uuid>',
  cron: 'cron:<jobId>',
  hook: 'hook:<uuid>',
  suffix: 'an optional :thread:<id> or :topic:<id> at the end',
} as const;
const NAME_RULE = `1–${MAX_SESSION_KEY_NAME_LENGTH} characters from A-Z a-z 0-9 _ - starting with a letter or digit`;
const ID_RULE = `1–${MAX_SESSION_KEY_ID_LENGTH} characters without ':', whitespace or control characters`;
const UUID_RULE = 'a uuid such as 0b8f3c1e-7d4a-4c2b-9f6e-1a2b3c4d5e6f';

/** How a group, channel or room key names its kind. */
export type RoomKind = (typeof ROOM_KINDS)[number];
/** DMs are written `dm` or `direct`; both mean a direct chat and the spelling is kept. */
export type DmVariant = (typeof DM_VARIANTS)[number];

/** A thread or topic inside a chat (at most one of the two). */
export interface ThreadParts {
  readonly threadId?: string;
  readonly topicId?: string;
}

/** What `buildSessionKey` takes; `mainKey` defaults to `main`, `dmVariant` to `dm`. */
export type SessionKeyParts =
  | ({ readonly kind: 'main'; readonly agentId: string; readonly mainKey?: string } & ThreadParts)
  | ({
      readonly kind: RoomKind;
      readonly agentId: string;
      readonly channel: string;
      readonly peerId: string;
    } & ThreadParts)
  | ({
      readonly kind: 'dm';
      readonly agentId: string;
      readonly channel: string;
      readonly peerId: string;
      readonly dmVariant?: DmVariant;
    } & ThreadParts)
  | { readonly kind: 'subagent'; readonly agentId: string; readonly subagentId: string }
  | { readonly kind: 'cron'; readonly agentId?: undefined; readonly jobId: string }
  | { readonly kind: 'hook'; readonly agentId?: undefined; readonly hookId: string };

/** The key as given, and the key without its thread/topic suffix (equal when there is none). */
export interface KeyText {
  readonly key: string;
  readonly baseKey: string;
}

/** A parsed session key: a union by `kind`, every default made explicit. */
export type ParsedSessionKey = KeyText &
  (
    | ({ readonly kind: 'main'; readonly agentId: string; readonly mainKey: string } & ThreadParts)
    | ({
        readonly kind: RoomKind;
        readonly agentId: string;
        readonly channel: string;
        readonly peerId: string;
      } & ThreadParts)
    | ({
        readonly kind: 'dm';
        readonly agentId: string;
        readonly channel: string;
        readonly peerId: string;
        readonly dmVariant: DmVariant;
      } & ThreadParts)
    | { readonly kind: 'subagent'; readonly agentId: string; readonly subagentId: string }
    | { readonly kind: 'cron'; readonly agentId: undefined; readonly jobId: string }
    | { readonly kind: 'hook'; readonly agentId: undefined; readonly hookId: string }
  );

/** The chat type stored in `sessions.chat_type`. */
export type ChatType = 'direct' | 'group' | 'channel' | 'main' | 'cron' | 'hook' | 'subagent';

/**
 * Parses a session key; throws `InvalidSessionKeyError` naming the wrong part.
 *
 * @example
 * parseSessionKey('agent:ops:telegram:group:-100123:topic:42')
 * // { kind: 'group', agentId: 'ops', channel: 'telegram', peerId: '-100123', topicId: '42',
 * //   key: 'agent:ops:telegram:group:-100123:topic:42', baseKey: 'agent:ops:telegram:group:-100123' }
 */
export function parseSessionKey(key: string): ParsedSessionKey {
  checkWholeKey(key);
  const segments = key.split(':');
  const [prefix] = segments;

  if (prefix === 'cron' || prefix === 'hook') {
    const shape = prefix === 'cron' ? SHAPE.cron : SHAPE.hook;
    if (segments.length !== 2) fail(key, 'key', `has ${segments.length} parts separated by ':'`, shape);
    if (prefix === 'cron') {
      const jobId = checkId(key, 'jobId', segments[1], shape);
      return { kind: 'cron', agentId: undefined, jobId, key, baseKey: key };
    }
    const hookId = checkUuid(key, segments[1], shape);
    return { kind: 'hook', agentId: undefined, hookId, key, baseKey: key };
  }
  if (prefix !== 'agent') fail(key, 'prefix', `starts with ${JSON.stringify(prefix)}`, SHAPE.any);

  const agentId = checkName(key, 'agentId', segments[1], SHAPE.main);
  if (segments.length < 3) fail(key, 'mainKey', 'mainKey is missing', SHAPE.main);

  if (segments[2] === 'subagent') {
    if (segments.length > 4) fail(key, 'thread', 'a subagent key takes nothing after its uuid', SHAPE.subagent);
    const subagentId = checkUuid(key, segments[3], SHAPE.subagent);
    return { kind: 'subagent', agentId, subagentId, key, baseKey: key };
  }

  const { rest, thread } = splitSuffix(key, segments);
  const baseKey = rest.join(':');
  if (rest.length === 3) {
    const mainKey = checkName(key, 'mainKey', rest[2], SHAPE.main);
    return { kind: 'main', agentId, mainKey, ...thread, key, baseKey };
  }
  if (rest.length > 5)
    fail(key, 'key', `has ${segments.length} parts separated by ':'`, `${SHAPE.chat} with ${SHAPE.suffix}`);

  const channel = checkName(key, 'channel', rest[2], SHAPE.chat);
  const kind = rest[3];
  const isDm = (DM_VARIANTS as readonly string[]).includes(kind);
  if (!isDm && !(ROOM_KINDS as readonly string[]).includes(kind)) {
    fail(key, 'kind', `kind ${JSON.stringify(kind)} is not one of group, channel, room, dm, direct`, SHAPE.chat);
  }
  if (rest.length === 4) fail(key, 'peerId', 'peerId is missing', SHAPE.chat);
  const peerId = checkId(key, 'peerId', rest[4], SHAPE.chat);
  if (isDm) return { kind: 'dm', agentId, channel, peerId, dmVariant: kind as DmVariant, ...thread, key, baseKey };
  return { kind: kind as RoomKind, agentId, channel, peerId, ...thread, key, baseKey };
}

/**
 * Builds a key from its parts, validating each with the same rules as `parseSessionKey`;
 * the exact inverse of parsing: `buildSessionKey(parseSessionKey(k)) === k`.
 *
 * @example
 * buildSessionKey({ kind: 'dm', agentId: 'ops', channel: 'discord', peerId: '81234' })
 * // 'agent:ops:discord:dm:81234'
 */
export function buildSessionKey(parts: SessionKeyParts): string {
  const key = formatParts(parts);
  switch (parts.kind) {
    case 'cron':
      checkId(key, 'jobId', parts.jobId, SHAPE.cron);
      break;
    case 'hook':
      checkUuid(key, parts.hookId, SHAPE.hook);
      break;
    case 'subagent':
      checkName(key, 'agentId', parts.agentId, SHAPE.subagent);
      checkUuid(key, parts.subagentId, SHAPE.subagent);
      break;
    case 'main': {
      checkName(key, 'agentId', parts.agentId, SHAPE.main);
      const mainKey = checkName(key, 'mainKey', parts.mainKey ?? DEFAULT_MAIN_KEY, SHAPE.main);
      if (mainKey === 'subagent') fail(key, 'mainKey', 'mainKey "subagent" is reserved for subagent keys', SHAPE.main);
      checkThread(key, parts);
      break;
    }
    default:
      checkName(key, 'agentId', parts.agentId, SHAPE.chat);
      checkName(key, 'channel', parts.channel, SHAPE.chat);
      checkId(key, 'peerId', parts.peerId, SHAPE.chat);
      checkThread(key, parts);
  }
  checkWholeKey(key);
  return key;
}

/** True when `parseSessionKey(key)` would succeed. */
export function isValidSessionKey(key: unknown): key is string {
  if (typeof key !== 'string') return false;
  try {
    parseSessionKey(key);
    return true;
  } catch (error) {
    if (error instanceof InvalidSessionKeyError) return false;
    throw error;
  }
}

/** The chat type of a parsed key: DMs are `direct`, groups `group`, channels and rooms `channel`. */
export function chatTypeOf(parsed: ParsedSessionKey): ChatType {
  switch (parsed.kind) {
    case 'dm':
      return 'direct';
    case 'room':
    case 'channel':
      return 'channel';
    default:
      return parsed.kind;
  }
}

/** Prefix of every session workflow id, so they are easy to find in the Temporal UI. */
export const SESSION_WORKFLOW_ID_PREFIX = 'keel-session';

/**
 * The workflow type a client starts for a session key: a subagent's key runs the subagent's
 * lifecycle (it announces to its parent), any other key a session's. Throws `InvalidSessionKeyError`
 * for an invalid key.
 *
 * @example
 * sessionWorkflowType('agent:ops:main') // 'sessionWorkflow'
 */
export function sessionWorkflowType(sessionKey: string): typeof SESSION_WORKFLOW_TYPE | typeof SUBAGENT_WORKFLOW_TYPE {
  return parseSessionKey(sessionKey).kind === 'subagent' ? SUBAGENT_WORKFLOW_TYPE : SESSION_WORKFLOW_TYPE;
}

/**
 * The Temporal workflow id of the session workflow for `(agentId, sessionKey)`:
 * `keel-session/<agentId>/<sessionKey>`. Unique per pair because an agentId never contains `/`
 * (its rule is `A-Z a-z 0-9 _ -`), so the first `/` after the prefix splits the two unambiguously.
 * Throws `InvalidSessionKeyError` when either is invalid or when an `agent:` key names another agent.
 *
 * @example
 * sessionWorkflowId('ops', 'agent:ops:main') // 'keel-session/ops/agent:ops:main'
 */
export function sessionWorkflowId(agentId: string, sessionKey: string): string {
  const parsed = parseSessionKey(sessionKey);
  checkName(sessionKey, 'agentId', agentId, `${SESSION_WORKFLOW_ID_PREFIX}/<agentId>/<sessionKey>`);
  if (parsed.agentId !== undefined && parsed.agentId !== agentId) {
    fail(
      sessionKey,
      'agentId',
      `belongs to agent ${JSON.stringify(parsed.agentId)}, not ${JSON.stringify(agentId)}`,
      `a key of agent ${agentId}`,
    );
  }
  return `${SESSION_WORKFLOW_ID_PREFIX}/${agentId}/${sessionKey}`;
}

function formatParts(parts: SessionKeyParts): string {
  switch (parts.kind) {
    case 'cron':
      return `cron:${parts.jobId}`;
    case 'hook':
      return `hook:${parts.hookId}`;
    case 'subagent':
      return `agent:${parts.agentId}:subagent:${parts.subagentId}`;
    case 'main':
      return `agent:${parts.agentId}:${parts.mainKey ?? DEFAULT_MAIN_KEY}${formatSuffix(parts)}`;
    case 'dm':
      return `agent:${parts.agentId}:${parts.channel}:${parts.dmVariant ?? 'dm'}:${parts.peerId}${formatSuffix(parts)}`;
    default:
      return `agent:${parts.agentId}:${parts.channel}:${parts.kind}:${parts.peerId}${formatSuffix(parts)}`;
  }
}

function formatSuffix(parts: ThreadParts): string {
  if (parts.threadId !== undefined) return `:thread:${parts.threadId}`;
  if (parts.topicId !== undefined) return `:topic:${parts.topicId}`;
  return '';
}

/** Splits a trailing `:thread:<id>` / `:topic:<id>` off the segments of an `agent:` key. */
function splitSuffix(key: string, segments: string[]): { rest: string[]; thread: ThreadParts } {
  const marker = segments[segments.length - 2];
  if (segments.length < 5 || !(SUFFIX_KINDS as readonly string[]).includes(marker)) {
    return { rest: segments, thread: {} };
  }
  const id = checkId(key, 'thread', segments[segments.length - 1], SHAPE.suffix);
  return { rest: segments.slice(0, -2), thread: marker === 'thread' ? { threadId: id } : { topicId: id } };
}

function checkThread(key: string, parts: ThreadParts): void {
  if (parts.threadId !== undefined && parts.topicId !== undefined) {
    fail(key, 'thread', 'both threadId and topicId are set', 'at most one of them');
  }
  const id = parts.threadId ?? parts.topicId;
  if (id !== undefined) checkId(key, 'thread', id, SHAPE.suffix);
}

function checkWholeKey(key: unknown): asserts key is string {
  const text = String(key);
  if (typeof key !== 'string') fail(text, 'key', `is a ${typeof key}, not a string`, SHAPE.any);
  if (key.length === 0) fail(key, 'key', 'is empty', SHAPE.any);
  if (key.length > MAX_SESSION_KEY_LENGTH) {
    fail(key, 'key', `is ${key.length} characters long`, `at most ${MAX_SESSION_KEY_LENGTH} characters`);
  }
  if (/[\s\p{C}]/u.test(key)) fail(key, 'key', 'contains whitespace or control characters', SHAPE.any);
}

function checkName(key: string, part: SessionKeyPart, value: string | undefined, shape: string): string {
  if (value === undefined || value === '') fail(key, part, `${part} is empty`, shape);
  if (value.length > MAX_SESSION_KEY_NAME_LENGTH || !NAME_PATTERN.test(value)) {
    fail(key, part, `${part} ${JSON.stringify(value)} is not a valid name`, `${shape} with ${part} of ${NAME_RULE}`);
  }
  return value;
}

function checkId(key: string, part: SessionKeyPart, value: string | undefined, shape: string): string {
  if (value === undefined || value === '') fail(key, part, `${part} is empty`, shape);
  if (value.length > MAX_SESSION_KEY_ID_LENGTH || !ID_PATTERN.test(value)) {
    fail(key, part, `${part} ${JSON.stringify(value)} is not a valid id`, `${shape} with ${part} of ${ID_RULE}`);
  }
  return value;
}

function checkUuid(key: string, value: string | undefined, shape: string): string {
  if (value === undefined || value === '') fail(key, 'uuid', 'uuid is empty', shape);
  if (!UUID_PATTERN.test(value))
    fail(key, 'uuid', `${JSON.stringify(value)} is not a uuid`, `${shape} with ${UUID_RULE}`);
  return value;
}

function fail(key: string, part: SessionKeyPart, problem: string, expected: string): never {
  throw new InvalidSessionKeyError(key, part, problem, expected);
}
