/**
 * The built-in `memory_search` tool (OpenClaw's memory recall): every agent has it next to the
 * application's tools. It searches the notes the memory flush stored in the database and the
 * workspace's MEMORY.md and daily logs (`memory/YYYY-MM-DD.md`) with history_search's retriever
 * (keywords, fused with vectors where an embedder is configured), and returns the best matches with
 * their dates within the result's token budget.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { ActivityDeps } from '../../src/runtime/deps';
import type { ToolDefinition } from '../../src/tools/registry';
import type { FoundNote } from '../../src/store/memory-repo';
import { searchMemory } from '../../src/store/memory-search';
import { MEMORY_SEARCH } from '../../src/tools/recall-tools';
import { denseSearchFor } from '../../src/embeddings/recall-runtime';
import { DEFAULTS } from '../../src/config/defaults';
import { fitHits, leftOutNote } from '../../src/context/recall-result-budget';

const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 50;

const memorySearchInput = z.object({
  query: z.string().trim().min(1, 'give a word or phrase to search for'),
  limit: z.number().int().min(1).max(MAX_LIMIT).optional(),
});

export function memorySearchTool(deps: ActivityDeps): ToolDefinition<typeof memorySearchInput> {
  const dense = denseSearchFor(deps.recall, deps.config);
  return {
    name: MEMORY_SEARCH,
    description:
      'Search your saved memory (notes kept across compactions, MEMORY.md and the daily logs memory/YYYY-MM-DD.md); returns the best matching notes with their dates, best first. ' +
      `Input: query (words; rarer words and notes with more of them rank higher, word forms match: "went" finds "go"), limit (optional, 1-${MAX_LIMIT}, default ${DEFAULT_LIMIT}).`,
    input: memorySearchInput,
    async run(input, ctx) {
      const dir = deps.config.workspaceAccess === 'none' ? undefined : deps.config.workspaceDir;
      const { found, notesCapped } = await searchMemory(deps.db, {
        agentId: ctx.agentId,
        query: input.query,
        limit: input.limit ?? DEFAULT_LIMIT,
        files: dir ? await workspaceMemoryLines(dir) : [],
        ...(dense ? { dense } : {}),
      });
      if (found.length === 0) return `No memory matches "${input.query}".`;
      const budget = DEFAULTS.recallResultTokens;
      const { texts, leftOut } = fitHits(
        found.map((n) => ({ full: `- [${n.day}] ${n.text}` })),
        budget,
      );
      const capped = notesCapped
        ? `\n[only the newest ${DEFAULTS.memorySearchNotes} notes were searched (memorySearchNotes); older ones were not]`
        : '';
      return `${texts.join('\n')}${leftOutNote(leftOut, budget, MEMORY_SEARCH)}${capped}`;
    },
  };
}

/** Every line of MEMORY.md and memory/*.md; a daily log's lines carry its date. */
async function workspaceMemoryLines(dir: string): Promise<FoundNote[]> {
  const daily = (await readdir(join(dir, 'memory')).catch(() => [] as string[])).filter((f) =>
    /^\d{4}-\d{2}-\d{2}\.md$/.test(f),
  );
  const files = [
    ...daily.map((f) => ({ path: join(dir, 'memory', f), day: f.slice(0, 10) })),
    { path: join(dir, 'MEMORY.md'), day: 'MEMORY.md' },
  ];
  const found: FoundNote[] = [];
  for (const file of files) {
    const text = await readFile(file.path, 'utf8').catch(() => '');
    for (const raw of text.split('\n')) {
      const line = raw.replace(/^\s*[-*]\s+/, '').trim();
      if (line === '' || line.startsWith('<!--')) continue;
      found.push({ day: file.day, text: line });
    }
  }
  return found;
}
