/**
 * The built-in `memory_search` tool (OpenClaw's memory recall): every agent has it next to the
 * application's tools. It searches the notes the memory flush stored in the database and the
 * workspace's MEMORY.md and daily logs (`memory/YYYY-MM-DD.md`), and returns matches with their dates.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { ActivityDeps } from '../../src/runtime/deps';
import type { ToolDefinition } from '../../src/tools/registry';
import { searchMemoryNotes, type FoundNote } from '../../src/store/memory-repo';
import { MEMORY_SEARCH } from '../../src/tools/recall-tools';

const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 50;

const memorySearchInput = z.object({
  query: z.string().trim().min(1, 'give a word or phrase to search for'),
  limit: z.number().int().min(1).max(MAX_LIMIT).optional(),
});

export function memorySearchTool(deps: ActivityDeps): ToolDefinition<typeof memorySearchInput> {
  return {
    name: MEMORY_SEARCH,
    description:
      'Search your saved memory (notes kept across compactions, MEMORY.md and the daily logs memory/YYYY-MM-DD.md); returns matching notes with their dates. ' +
      `Input: query (words that must all appear), limit (optional, 1-${MAX_LIMIT}, default ${DEFAULT_LIMIT}).`,
    input: memorySearchInput,
    async run(input, ctx) {
      const terms = input.query.toLowerCase().split(/\s+/).filter(Boolean);
      const limit = input.limit ?? DEFAULT_LIMIT;
      const fromDb = await searchMemoryNotes(deps.db, ctx.agentId, terms, limit);
      const dir = deps.config.workspaceAccess === 'none' ? undefined : deps.config.workspaceDir;
      const fromFiles = dir ? await searchWorkspaceMemory(dir, terms) : [];
      const seen = new Set<string>();
      const found = [...fromDb, ...fromFiles]
        .filter((n) => {
          const key = `${n.day}\n${n.text}`;
          if (seen.has(key)) return false;
          seen.add(key);
          return true;
        })
        .sort((a, b) => b.day.localeCompare(a.day))
        .slice(0, limit);
      if (found.length === 0) return `No memory matches "${input.query}".`;
      return found.map((n) => `- [${n.day}] ${n.text}`).join('\n');
    },
  };
}

/** Lines of MEMORY.md and memory/*.md containing every term; a daily log's lines carry its date. */
async function searchWorkspaceMemory(dir: string, terms: readonly string[]): Promise<FoundNote[]> {
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
      const lower = line.toLowerCase();
      if (terms.every((t) => lower.includes(t))) found.push({ day: file.day, text: line });
    }
  }
  return found;
}
