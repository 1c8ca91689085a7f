/**
 * A compaction the provider wrote (Anthropic server compaction): Keel stores it as a compaction
 * entry like any other, with the block's metadata in `details` so later requests can send the block
 * back verbatim in place of Keel's summary stand-in.
 */
import type { ProviderCompaction } from '../model/model-client';
import type { AgentMessage, CompactionEntry } from './types';

/** What `details` of a provider-written compaction entry holds. */
export interface ProviderCompactionDetails {
  readonly provider: 'anthropic';
  readonly encryptedContent: string | null;
  readonly signature?: string;
  readonly toolChanges?: unknown[];
}

/** The entry's `details` for a provider's block (the summary itself is the entry's summary). */
export function providerCompactionDetails(block: ProviderCompaction): ProviderCompactionDetails {
  return {
    provider: 'anthropic',
    encryptedContent: block.encryptedContent ?? null,
    ...(block.signature ? { signature: block.signature } : {}),
    ...(block.toolChanges ? { toolChanges: block.toolChanges } : {}),
  };
}

/** The block to send back for a compaction entry the provider wrote, or undefined for Keel's own. */
export function providerCompactionOf(entry: CompactionEntry | undefined): ProviderCompaction | undefined {
  const details = entry?.details as Partial<ProviderCompactionDetails> | undefined;
  if (!entry || details?.provider !== 'anthropic') return undefined;
  return {
    summary: entry.summary,
    encryptedContent: details.encryptedContent ?? null,
    ...(details.signature ? { signature: details.signature } : {}),
    ...(details.toolChanges ? { toolChanges: details.toolChanges } : {}),
  };
}

/**
 * The recall line of Keel's summary stand-in (which compaction, which entries, history_expand) when
 * the assembled messages still open with it; undefined when they do not (a history limit cut it).
 */
export function summaryStandInNote(messages: readonly AgentMessage[], compactionId: string): string | undefined {
  const first = messages[0];
  if (first?.role !== 'user' || !Array.isArray(first.content)) return undefined;
  const block = first.content[0];
  if (
    block?.type !== 'text' ||
    !block.text.startsWith('<summary>') ||
    !block.text.includes(`Compaction ${compactionId} `)
  )
    return undefined;
  return block.text.split('\n')[1];
}
