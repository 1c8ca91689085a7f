/**
 * Workspace bootstrap files injected into the system prompt (OpenClaw's bootstrap context injection).
 */
import { DEFAULTS } from '../config/defaults';

/** The workspace files read at the start of a run, in OpenClaw's injection order. */
export const BOOTSTRAP_FILE_NAMES = [
  'AGENTS.md',
  'SOUL.md',
  'TOOLS.md',
  'IDENTITY.md',
  'USER.md',
  'HEARTBEAT.md',
  'BOOTSTRAP.md',
  'MEMORY.md',
] as const;

export interface BootstrapFile {
  name: string;
  content: string;
}

export interface BootstrapCaps {
  /** Characters kept per file (default 5,000). */
  maxCharsPerFile?: number;
  /** Characters kept over all files (default 20,000). */
  maxCharsTotal?: number;
}

export interface InjectedBootstrapFile {
  name: string;
  /** The kept content, with the truncation note appended when cut. */
  content: string;
  originalChars: number;
  keptChars: number;
  truncated: boolean;
}

export interface BootstrapContext {
  /** Files in injection order (known names first, then others in the order given). */
  files: InjectedBootstrapFile[];
  /** Files left out entirely because the total cap was used up. */
  omitted: string[];
  /** The text to put into the system prompt ('' when there is nothing). */
  text: string;
}

/**
 * Orders the workspace files (AGENTS.md, SOUL.md, … MEMORY.md, then any others), skips empty ones,
 * and caps each at `maxCharsPerFile` and all of them at `maxCharsTotal`. A cut file ends with a note
 * naming its full size, so the model knows to read the file for the rest.
 */
export function buildBootstrapContext(files: readonly BootstrapFile[], caps: BootstrapCaps = {}): BootstrapContext {
  const perFile = caps.maxCharsPerFile ?? DEFAULTS.bootstrapMaxCharsPerFile;
  const total = caps.maxCharsTotal ?? DEFAULTS.bootstrapMaxCharsTotal;
  const rank = (name: string) => {
    const k = (BOOTSTRAP_FILE_NAMES as readonly string[]).indexOf(name);
    return k === -1 ? BOOTSTRAP_FILE_NAMES.length : k;
  };
  const ordered = files
    .map((file, given) => ({ file, given }))
    .filter(({ file }) => file.content.trim().length > 0)
    .sort((a, b) => rank(a.file.name) - rank(b.file.name) || a.given - b.given)
    .map(({ file }) => file);

  let remaining = total;
  const injected: InjectedBootstrapFile[] = [];
  const omitted: string[] = [];
  for (const file of ordered) {
    const allowance = Math.min(perFile, remaining);
    if (allowance <= 0) {
      omitted.push(file.name);
      continue;
    }
    const truncated = file.content.length > allowance;
    const kept = truncated ? file.content.slice(0, allowance) : file.content;
    remaining -= kept.length;
    injected.push({
      name: file.name,
      content: truncated ? `${kept}\n\n${truncationNote(file.name, file.content.length, kept.length)}` : kept,
      originalChars: file.content.length,
      keptChars: kept.length,
      truncated,
    });
  }
  const sections = injected.map((f) => `## ${f.name}\n\n${f.content}`);
  if (omitted.length > 0) sections.push(`[Not loaded, context file budget used up: ${omitted.join(', ')}]`);
  return { files: injected, omitted, text: sections.join('\n\n') };
}

function truncationNote(name: string, originalChars: number, keptChars: number): string {
  return `[${name} truncated: showing the first ${keptChars} of ${originalChars} characters; read the file for the rest]`;
}
