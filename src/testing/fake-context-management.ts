/**
 * The fake's Anthropic context management (beta `context_management`), as strict as the API:
 * the request shape and beta headers are checked (worded as the API's validation words them), a
 * `compact_20260112` edit whose trigger the prompt reaches answers with a compaction block whose
 * summary the fake derives from the request (alone, stop reason `compaction`, when
 * `pause_after_compaction`), and `clear_tool_uses_20250919` reports what it cleared in
 * `context_management.applied_edits`. Compaction blocks sent back must be unchanged (signed), and
 * everything before the last one is dropped, as the API drops it.
 */
import { createHash } from 'node:crypto';
import type { FakeRequestBody } from './fake-anthropic';

export const FAKE_COMPACTION_BETA = 'compact-2026-01-12';
export const FAKE_CONTEXT_EDITING_BETA = 'context-management-2025-06-27';
/** The API's smallest compaction trigger and the defaults it applies. */
const MIN_COMPACT_TRIGGER = 50_000;
const DEFAULT_COMPACT_TRIGGER = 150_000;
const DEFAULT_CLEAR_TRIGGER = 100_000;
const DEFAULT_CLEAR_KEEP = 3;

const EDIT_KEYS: Record<string, readonly string[]> = {
  clear_tool_uses_20250919: ['type', 'trigger', 'keep', 'clear_at_least', 'exclude_tools', 'clear_tool_inputs'],
  clear_thinking_20251015: ['type', 'keep'],
  compact_20260112: ['type', 'trigger', 'pause_after_compaction', 'instructions'],
};
const COMPACTION_BLOCK_KEYS = ['type', 'content', 'encrypted_content', 'signature', 'tool_changes', 'cache_control'];

type Json = Record<string, unknown>;
type Block = Json & { type?: string };

/** What the fake does with a valid request's context management. */
export interface FakeContextManagementPlan {
  /** A compaction block to return (the trigger was reached). */
  readonly compaction?: { content: string; encrypted_content: string; signature: string; inputTokens: number };
  /** Return the block alone with stop reason `compaction`. */
  readonly pause: boolean;
  /** `context_management.applied_edits` of the response. */
  readonly appliedEdits: Json[];
}

/** The beta headers the request named. */
function betasOf(headers: Record<string, string | string[] | undefined>): Set<string> {
  const raw = headers['anthropic-beta'];
  const text = Array.isArray(raw) ? raw.join(',') : (raw ?? '');
  return new Set(
    text
      .split(',')
      .map((b) => b.trim())
      .filter(Boolean),
  );
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const blocksOf = (content: unknown): Block[] => (Array.isArray(content) ? (content as Block[]) : []);

/** The signature the fake puts on a compaction block (and checks when the block comes back). */
export function fakeCompactionSignature(content: string): string {
  return `fake-sig-${createHash('sha256').update(content).digest('hex').slice(0, 24)}`;
}

/** The messages the model sees: everything before the last compaction block is dropped. */
export function effectiveMessages(body: FakeRequestBody): NonNullable<FakeRequestBody['messages']> {
  const messages = body.messages ?? [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const blocks = blocksOf(messages[i]!.content);
    const j = blocks.map((b) => b.type).lastIndexOf('compaction');
    if (j >= 0) return [{ ...messages[i]!, content: blocks.slice(j) }, ...messages.slice(i + 1)];
  }
  return messages;
}

function tokenValue(where: string, v: unknown, type: string | readonly string[], min = 1): string | undefined {
  const types = typeof type === 'string' ? [type] : type;
  if (!isObject(v)) return `${where}: Input should be a valid dictionary or object to extract fields from`;
  if (!types.includes(String(v.type)))
    return `${where}.type: Input should be ${types.map((t) => `'${t}'`).join(' or ')}`;
  if (typeof v.value !== 'number' || !Number.isInteger(v.value))
    return `${where}.value: Input should be a valid integer`;
  if (v.value < min) return `${where}.value: Input should be greater than or equal to ${min}`;
  return undefined;
}

function editProblem(edit: unknown, i: number, tags: string[], body: FakeRequestBody): string | undefined {
  const where = `context_management.edits.${i}`;
  if (!isObject(edit)) return `${where}: Input should be a valid dictionary or object to extract fields from`;
  const type = String(edit.type);
  if (!tags.includes(type))
    return `${where}: Input tag '${type}' found using 'type' does not match any of the expected tags: ${tags.map((t) => `'${t}'`).join(', ')}`;
  const extra = Object.keys(edit).find((k) => !EDIT_KEYS[type]!.includes(k));
  if (extra) return `${where}.${type}.${extra}: Extra inputs are not permitted`;
  if (type === 'compact_20260112') {
    if (edit.trigger != null)
      return tokenValue(`${where}.${type}.trigger`, edit.trigger, 'input_tokens', MIN_COMPACT_TRIGGER);
    if (edit.pause_after_compaction !== undefined && typeof edit.pause_after_compaction !== 'boolean')
      return `${where}.${type}.pause_after_compaction: Input should be a valid boolean`;
    if (edit.instructions != null && typeof edit.instructions !== 'string')
      return `${where}.${type}.instructions: Input should be a valid string`;
  }
  if (type === 'clear_tool_uses_20250919') {
    if (edit.trigger !== undefined) {
      const p = tokenValue(`${where}.${type}.trigger`, edit.trigger, ['input_tokens', 'tool_uses']);
      if (p) return p;
    }
    if (edit.keep !== undefined) {
      const p = tokenValue(`${where}.${type}.keep`, edit.keep, 'tool_uses', 0);
      if (p) return p;
    }
    if (edit.clear_at_least != null) {
      const p = tokenValue(`${where}.${type}.clear_at_least`, edit.clear_at_least, 'input_tokens');
      if (p) return p;
    }
    if (
      edit.exclude_tools != null &&
      (!Array.isArray(edit.exclude_tools) || edit.exclude_tools.some((t) => typeof t !== 'string'))
    )
      return `${where}.${type}.exclude_tools: Input should be a valid list of strings`;
  }
  if (type === 'clear_thinking_20251015') {
    if (edit.keep !== undefined && edit.keep !== 'all') {
      const p = tokenValue(`${where}.${type}.keep`, edit.keep, 'thinking_turns');
      if (p) return p;
    }
    const thinking = (body as Json).thinking;
    if (!isObject(thinking) || thinking.type === 'disabled')
      return `${where}: clear_thinking_20251015 strategy requires thinking to be enabled`;
    if (i !== 0) return `${where}: clear_thinking_20251015 strategy must be listed first in context_management.edits`;
  }
  return undefined;
}

/** Compaction blocks sent back: only in assistant messages, non-empty, and exactly as the fake signed them. */
function compactionBlockProblem(body: FakeRequestBody, betas: Set<string>): string | undefined {
  const messages = body.messages ?? [];
  for (let i = 0; i < messages.length; i++) {
    const blocks = blocksOf(messages[i]!.content);
    for (let j = 0; j < blocks.length; j++) {
      const block = blocks[j]!;
      if (block.type !== 'compaction') continue;
      const where = `messages.${i}.content.${j}`;
      if (!betas.has(FAKE_COMPACTION_BETA))
        return `${where}: Input tag 'compaction' found using 'type' does not match any of the expected tags`;
      if (messages[i]!.role !== 'assistant')
        return `${where}: compaction blocks are only allowed in assistant messages`;
      const extra = Object.keys(block).find((k) => !COMPACTION_BLOCK_KEYS.includes(k));
      if (extra) return `${where}.compaction.${extra}: Extra inputs are not permitted`;
      if (block.content === '') return `${where}.compaction.content: String should have at least 1 character`;
      if (typeof block.content === 'string' && block.signature !== fakeCompactionSignature(block.content))
        return `${where}: Invalid \`signature\` in \`compaction\` block`;
    }
  }
  return undefined;
}

/** The API's 400 message for a malformed `context_management` (or a compaction block sent back wrong), or undefined. */
export function contextManagementProblem(
  body: FakeRequestBody,
  headers: Record<string, string | string[] | undefined>,
): string | undefined {
  const betas = betasOf(headers);
  const blockProblem = compactionBlockProblem(body, betas);
  if (blockProblem) return blockProblem;
  const cm = (body as Json).context_management;
  if (cm === undefined || cm === null) return undefined;
  const tags = [
    ...(betas.has(FAKE_CONTEXT_EDITING_BETA) ? ['clear_tool_uses_20250919', 'clear_thinking_20251015'] : []),
    ...(betas.has(FAKE_COMPACTION_BETA) ? ['compact_20260112'] : []),
  ];
  // Without either beta the field does not exist.
  if (tags.length === 0) return 'context_management: Extra inputs are not permitted';
  if (!isObject(cm)) return 'context_management: Input should be a valid dictionary or object to extract fields from';
  const extra = Object.keys(cm).find((k) => k !== 'edits');
  if (extra) return `context_management.${extra}: Extra inputs are not permitted`;
  if (cm.edits === undefined) return undefined;
  if (!Array.isArray(cm.edits)) return 'context_management.edits: Input should be a valid list';
  const seen = new Set<string>();
  for (let i = 0; i < cm.edits.length; i++) {
    const problem = editProblem(cm.edits[i], i, tags, body);
    if (problem) return problem;
    const type = String((cm.edits[i] as Json).type);
    if (seen.has(type)) return `context_management.edits: duplicate strategy type '${type}'`;
    seen.add(type);
  }
  return undefined;
}

/** Tokens the fake counts for a prompt (as `fakePromptTokens`, after the last compaction block). */
function tokensOf(body: FakeRequestBody, messages = effectiveMessages(body)): number {
  return Math.ceil(JSON.stringify([body.system ?? null, messages, body.tools ?? []]).length / 4);
}

/** A summary the fake derives from the request: how much it covered and what the user asked, word for word. */
function fakeSummary(messages: NonNullable<FakeRequestBody['messages']>): string {
  const asked: string[] = [];
  let previous: string | undefined;
  for (const m of messages) {
    const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : blocksOf(m.content);
    for (const b of blocks) {
      if (b.type === 'compaction' && typeof b.content === 'string') previous = b.content;
      if (m.role === 'user' && b.type === 'text' && typeof b.text === 'string')
        asked.push(b.text.slice(0, 120).replace(/\s+/g, ' ').trim());
    }
  }
  return [
    `Fake compaction of ${messages.length} messages.`,
    ...(previous ? [`Earlier: ${previous.split('\n')[0]}`] : []),
    'The user asked:',
    ...asked.map((t) => `- ${t}`),
  ].join('\n');
}

/** What a valid request's edits do; call only after `contextManagementProblem` found nothing. */
export function planContextManagement(body: FakeRequestBody): FakeContextManagementPlan | undefined {
  const cm = (body as Json).context_management;
  if (!isObject(cm) || !Array.isArray(cm.edits)) return undefined;
  const messages = effectiveMessages(body);
  const appliedEdits: Json[] = [];
  let compaction: FakeContextManagementPlan['compaction'];
  let pause = false;
  for (const edit of cm.edits as Json[]) {
    const tokens = tokensOf(body, messages);
    if (edit.type === 'clear_tool_uses_20250919') {
      const trigger = edit.trigger as { type: string; value: number } | undefined;
      const reached =
        trigger?.type === 'tool_uses'
          ? toolResults(messages).length >= trigger.value
          : tokens >= (trigger?.value ?? DEFAULT_CLEAR_TRIGGER);
      if (!reached) continue;
      const keep = (edit.keep as { value: number } | undefined)?.value ?? DEFAULT_CLEAR_KEEP;
      const excluded = new Set((edit.exclude_tools as string[] | undefined) ?? []);
      const results = toolResults(messages).filter((r) => !excluded.has(r.name));
      const cleared = results.slice(0, Math.max(0, results.length - keep));
      if (cleared.length === 0) continue;
      const clearedTokens = cleared.reduce(
        (n, r) => n + Math.ceil(JSON.stringify(r.block.content ?? '').length / 4),
        0,
      );
      const atLeast = (edit.clear_at_least as { value: number } | undefined)?.value ?? 0;
      if (clearedTokens < atLeast) continue;
      appliedEdits.push({
        type: 'clear_tool_uses_20250919',
        cleared_tool_uses: cleared.length,
        cleared_input_tokens: clearedTokens,
      });
    }
    if (edit.type === 'compact_20260112') {
      const trigger = (edit.trigger as { value: number } | null | undefined)?.value ?? DEFAULT_COMPACT_TRIGGER;
      if (tokens < trigger) continue;
      const content = fakeSummary(messages);
      compaction = {
        content,
        encrypted_content: Buffer.from(`fake-opaque:${tokens}`).toString('base64'),
        signature: fakeCompactionSignature(content),
        inputTokens: tokens,
      };
      pause = edit.pause_after_compaction === true;
    }
  }
  return { ...(compaction ? { compaction } : {}), pause, appliedEdits };
}

function toolResults(messages: NonNullable<FakeRequestBody['messages']>): Array<{ name: string; block: Block }> {
  const names = new Map<string, string>();
  const out: Array<{ name: string; block: Block }> = [];
  for (const m of messages) {
    for (const b of blocksOf(m.content)) {
      if (b.type === 'tool_use') names.set(String(b.id), String(b.name));
      if (b.type === 'tool_result') out.push({ name: names.get(String(b.tool_use_id)) ?? '', block: b });
    }
  }
  return out;
}
