import type { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { KEEL_SEARCH_ATTRIBUTES } from './search-attributes';

/**
 * Registers Keel's search attributes on a cluster that lacks them (the dev server Keel starts has
 * them already). Production clusters need them before compaction workflows can set them.
 */
export async function ensureSearchAttributes(connection: Connection, namespace: string): Promise<string[]> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const known = new Set(Object.keys(existing.customAttributes ?? {}));
  const missing = KEEL_SEARCH_ATTRIBUTES.filter((name) => !known.has(name));
  if (missing.length === 0) return [];
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(
      missing.map((name) => [name, temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD]),
    ),
  });
  return missing;
}
