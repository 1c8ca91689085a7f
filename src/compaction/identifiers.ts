/**
 * Protected identifiers: the strings a summary must keep exactly (OpenClaw's identifier policy).
 * The extractor prefers missing a rare identifier over flagging ordinary prose, because every
 * identifier it returns becomes a line the quality guard appends to the summary.
 */

/** Kinds of identifiers `strict` protects. */
export const IDENTIFIER_KINDS = [
  'url',
  'uuid',
  'ipv6',
  'hostPort',
  'ipv4',
  'path',
  'hash',
  'filename',
  'hostname',
  'port',
  'ticket',
  'version',
  'quoted',
] as const;
export type IdentifierKind = (typeof IDENTIFIER_KINDS)[number];

/**
 * `strict` (default) protects every kind; `off` none; `custom` the listed kinds plus extra
 * patterns (regex sources, serializable) and its own instruction text for the summarizer.
 */
export type IdentifierPolicy =
  | 'strict'
  | 'off'
  | {
      readonly mode: 'custom';
      readonly kinds?: readonly IdentifierKind[];
      readonly patterns?: readonly string[];
      readonly instructions?: string;
    };

const HEX4 = '[0-9a-f]{1,4}';
const IPV4 = '(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
/** TLDs that make a two-label name a hostname rather than a file (`example.com` but not `notes.txt`). */
const TLDS =
  'com|org|net|io|dev|ai|app|cloud|co|uk|de|fr|nl|eu|us|edu|gov|info|biz|xyz|me|tech|site|online|internal|local|localdomain|lan|corp|test|example|invalid|svc|cluster|amazonaws|azure|gcp';
/** File extensions that make `name.ext` a file name. */
const EXTENSIONS =
  'ts|tsx|mts|cts|js|jsx|mjs|cjs|json|jsonl|md|mdx|yaml|yml|toml|ini|cfg|conf|env|lock|py|ipynb|rb|go|rs|java|kt|kts|scala|c|h|cc|cpp|hpp|cs|swift|php|pl|lua|r|sh|bash|zsh|ps1|sql|txt|log|csv|tsv|parquet|html|htm|css|scss|less|xml|svg|png|jpg|jpeg|gif|webp|pdf|zip|gz|tgz|tar|bz2|xz|wasm|proto|graphql|gql|vue|svelte|pem|crt|key|pub|bak|patch|diff|dockerfile|tf|tfvars|gradle|plist|mod|sum';

/** One matcher per kind; `g` and `i` flags. Boundaries are lookarounds so a sentence's final period stays out. */
const MATCHERS: Record<IdentifierKind, RegExp> = {
  url: /\b(?:https?|wss?|ftp|sftp|ssh|git|file|s3|gs|postgres(?:ql)?|mysql|redis|mongodb(?:\+srv)?|amqp|grpc):\/\/[^\s<>"'`\]]+/gi,
  uuid: /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi,
  ipv6: new RegExp(
    `(?<![\\w:.])(?:(?:${HEX4}:){7}${HEX4}|(?:${HEX4}:){1,7}:(?:${HEX4}(?::${HEX4}){0,6})?|::(?:${HEX4}(?::${HEX4}){0,6})?)(?![\\w:])`,
    'gi',
  ),
  hostPort: new RegExp(
    `(?<![\\w.-])(?:\\[[0-9a-f:]+\\]|${IPV4}|localhost|(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z]{2,63}):\\d{2,5}\\b`,
    'gi',
  ),
  ipv4: new RegExp(`(?<![\\w.])${IPV4}(?![\\w]|\\.\\d)`, 'g'),
  path: /(?<![\w.:/~@-])(?:~|\.{1,2})?\/[\w.@+-]+(?:\/[\w.@+-]+)*\/?|(?<![\w.:/~@-])[A-Za-z]:\\[\w.@+ -]*(?:\\[\w.@+-]+)*|(?<![\w.:/~@-])[\w.@+-]+(?:\/[\w.@+-]+)+\/?/g,
  hash: /\b[0-9a-f]{7,}\b/gi,
  filename: new RegExp(
    `(?<![\\w./-])(?:[\\w-][\\w.-]*\\.(?:${EXTENSIONS})|\\.(?:env|gitignore|npmrc|nvmrc|bashrc|zshrc|dockerignore|editorconfig|prettierrc|eslintrc)(?:\\.[\\w]+)?)(?![\\w-]|\\.[a-z])`,
    'gi',
  ),
  hostname: new RegExp(
    `(?<![\\w.@/-])(?:localhost(?![\\w.-])|(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z][a-z0-9-]{0,62}[a-z0-9](?![\\w-]|\\.[a-z0-9]))`,
    'gi',
  ),
  port: /\bports?\s*(?:[:=]|(?:number|no\.?|is|to|of|at)\s)?\s*(\d{2,5})\b/gi,
  // PAY-1234, CVE-2024-3094, owner/repo#12, #4512 (an issue number after a space or bracket).
  ticket:
    /(?<![\w-])(?:CVE-\d{4}-\d{4,7}|[A-Z][A-Z0-9]{1,9}-\d{1,7}|[\w.-]+\/[\w.-]+#\d{1,7}|(?<=^|[\s([])#\d{2,7})(?![\w-])/gm,
  // v1.2, v2.0.0-rc.1, 1.24.0: a "v" and two parts, or three parts (two bare parts are a decimal).
  version:
    /(?<![\w.-])(?:v\d{1,4}(?:\.\d{1,4}){1,3}|\d{1,4}\.\d{1,4}\.\d{1,6})(?:-[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?(?![\w-]|\.\d)/g,
  // A name someone put in double quotes: "Project Falcon", “Blue Harbor”. Only in conversation (see extractIdentifiers).
  // The quotes are part of it, so a summary that keeps the name keeps it recognizable for the next compaction.
  quoted: /(?<!:\s*)(?<=^|[\s([])["“][A-Za-z0-9][^"“”\n]{1,58}[^"“”\s]["”](?!\s*:)/gm,
};

/**
 * Cheap tests a text must pass before a kind's matcher runs: the matchers' lookbehinds are costly
 * on long tool output, and most texts lack the one character each kind needs.
 */
const PREFILTERS: Record<IdentifierKind, RegExp> = {
  url: /:\/\//,
  uuid: /[0-9a-f]{8}-/i,
  ipv6: /[0-9a-f]::?[0-9a-f]|::/i,
  hostPort: /:\d\d/,
  ipv4: /\d\.\d/,
  path: /[/\\]/,
  hash: /[0-9a-f]{7}/i,
  filename: /\.[a-z]/i,
  hostname: /\.[a-z]|localhost/i,
  port: /port/i,
  ticket: /[A-Z]-\d|#\d/,
  version: /\d\.\d/,
  quoted: /["“]/,
};

/** Standards and encodings shaped like tickets (UTF-8, SHA-256, ISO-8601, …). */
const NOT_TICKETS =
  /^(?:UTF|UCS|SHA|AES|RSA|ISO|IEC|MD|HTTP|TLS|SSL|IPV|COVID|BASE|X|ES|ECMA|PEP|ANSI|EN|DIN|GPT|H|P)-\d+$/;

/** Checks that keep a shape-alike out (a word of hex letters, a version number, prose like `and/or`). */
function accept(kind: IdentifierKind, value: string): boolean {
  switch (kind) {
    case 'hash':
      return /\d/.test(value) && /[a-f]/i.test(value);
    case 'ticket':
      return !NOT_TICKETS.test(value);
    case 'version':
      // 12.03.2026 is a date.
      return !/^\d{1,2}\.\d{1,2}\.(?:19|20)\d\d$/.test(value);
    case 'quoted':
      // A name, not a quoted sentence: at most six words.
      return value.split(/\s+/).length <= 6;
    case 'ipv6':
      return /\d/.test(value) && value.includes(':') && value !== '::';
    case 'path': {
      const absolute = /^(?:~|\.{1,2})?\/|^[A-Za-z]:\\/.test(value);
      if (!/[A-Za-z]/.test(value)) return false;
      if (absolute) return value.length > 1;
      // A bare relative path needs two slashes or a file extension: `and/or`, `yes/no` are prose.
      return (value.match(/\//g) ?? []).length >= 2 || new RegExp(`\\.(?:${EXTENSIONS})$`, 'i').test(value);
    }
    case 'hostname': {
      if (value.toLowerCase() === 'localhost') return true;
      const labels = value.split('.');
      const tld = labels[labels.length - 1].toLowerCase();
      if (new RegExp(`^(?:${EXTENSIONS})$`, 'i').test(tld) && labels.length === 2) return false;
      return labels.length >= 3 ? /^[a-z]{2,}$/.test(tld) : new RegExp(`^(?:${TLDS})$`).test(tld);
    }
    default:
      return true;
  }
}

/** Strips sentence punctuation and unbalanced closing brackets that regexes over-capture. */
function trimTrailing(value: string): string {
  let v = value.replace(/[.,;:!?'"]+$/, '');
  while (/[)\]}]$/.test(v)) {
    const close = v[v.length - 1];
    const open = close === ')' ? '(' : close === ']' ? '[' : '{';
    if (v.split(open).length >= v.split(close).length) break;
    v = v.slice(0, -1).replace(/[.,;:!?'"]+$/, '');
  }
  return v;
}

interface Span {
  start: number;
  end: number;
  value: string;
}

function kindsOf(policy: IdentifierPolicy, conversational: boolean): readonly IdentifierKind[] {
  const kinds = policy === 'off' ? [] : policy === 'strict' ? IDENTIFIER_KINDS : (policy.kinds ?? []);
  return conversational ? kinds : kinds.filter((k) => k !== 'quoted');
}

/** Where a text comes from: quoted names count in what people wrote, not in tool output (JSON is all quotes). */
export interface ExtractOptions {
  readonly conversational?: boolean;
}

/**
 * Returns the protected identifiers in `text`, unique, in order of first appearance.
 * A match inside a longer one (the host of a URL, a hash inside a path) is not listed again.
 *
 * @example extractIdentifiers('see /etc/hosts and 10.0.0.1:5432.', 'strict') // ['/etc/hosts', '10.0.0.1:5432']
 */
export function extractIdentifiers(
  text: string,
  policy: IdentifierPolicy = 'strict',
  options: ExtractOptions = {},
): string[] {
  if (!text) return [];
  const spans: Span[] = [];
  for (const kind of kindsOf(policy, options.conversational ?? false)) {
    if (!PREFILTERS[kind].test(text)) continue;
    for (const m of text.matchAll(MATCHERS[kind])) {
      // `port` protects the number, found by its group; the others the whole match.
      const raw = kind === 'port' ? m[1] : m[0];
      const offset = kind === 'port' ? m[0].lastIndexOf(raw) : 0;
      const value = kind === 'port' ? raw : kind === 'quoted' ? raw : trimTrailing(raw);
      if (!value || !accept(kind, value)) continue;
      const start = (m.index ?? 0) + offset;
      spans.push({ start, end: start + value.length, value });
    }
  }
  if (typeof policy === 'object') {
    for (const source of policy.patterns ?? []) {
      for (const m of text.matchAll(new RegExp(source, 'g'))) {
        if (m[0]) spans.push({ start: m.index ?? 0, end: (m.index ?? 0) + m[0].length, value: m[0] });
      }
    }
  }
  // Longest first at each position; then drop spans contained in an accepted one.
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const result: string[] = [];
  const seen = new Set<string>();
  let coveredUntil = -1;
  for (const span of spans) {
    if (span.end <= coveredUntil) continue;
    coveredUntil = Math.max(coveredUntil, span.end);
    if (!seen.has(span.value)) {
      seen.add(span.value);
      result.push(span.value);
    }
  }
  return result;
}
