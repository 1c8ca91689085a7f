/**
 * Secret redaction before persistence (docs/architecture.md, invariants: secret-shaped values are redacted
 * before they are written). Pure: walks a JSON value and replaces secret-shaped substrings of its
 * strings with `[REDACTED:<kind>]`, keeping the text around them (a URL keeps its user and host,
 * an assignment keeps its name).
 *
 * Bounded work on any input (transcripts hold megabytes of tool output): every pattern starts
 * with a literal prefix that may not follow a token character, so each run of token characters
 * is tried from one place only; bodies are single character classes or bounded; there are no
 * nested unbounded quantifiers; PEM blocks are found by a forward scan, never a lazy `[\s\S]*?`.
 *
 * Not redacted, on purpose: git SHAs, UUIDs and other bare hex/base64 (including image data):
 * they have no prefix that tells a secret apart, and redacting them would break the identifiers
 * compaction must keep verbatim (OpenClaw identifier policy).
 */

/** What kind of secret was found; the marker names it. */
export type SecretKind =
  | 'private_key'
  | 'url_password'
  | 'anthropic_key'
  | 'openai_key'
  | 'stripe_key'
  | 'github_token'
  | 'slack_token'
  | 'google_api_key'
  | 'aws_access_key_id'
  | 'aws_secret_access_key'
  | 'jwt'
  | 'bearer_token'
  | 'basic_auth'
  | 'secret_assignment';

/** How many secrets of one kind were replaced. */
export interface Redaction {
  readonly kind: SecretKind;
  readonly count: number;
}

/** The redacted value (the same object when nothing was found) and what was replaced. */
export interface RedactionResult<T> {
  readonly value: T;
  readonly redactions: readonly Redaction[];
}

/** The text that replaces a secret of `kind`. */
export function redactionMarker(kind: SecretKind): string {
  return `[REDACTED:${kind}]`;
}

/**
 * A pattern whose `secret` group is replaced; `before` and `after` groups are kept. Without a
 * `secret` group the whole match is the secret. `accept` can veto a match (a false positive).
 */
interface PatternRule {
  readonly kind: SecretKind;
  readonly pattern: RegExp;
  readonly accept?: (secret: string) => boolean;
}

/** No token character before: each run of token characters is tried from its start only. */
const START = '(?<![A-Za-z0-9_-])';
/** Values of `name=value` that are settings, not secrets (`?reset_password=true`). */
const NOT_A_SECRET_VALUE = /^(?:true|false|null|none|undefined|yes|no|on|off|[01])$/i;

const PATTERN_RULES: readonly PatternRule[] = [
  {
    kind: 'url_password',
    pattern:
      /(?<before>(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,20}:\/\/[^\s:@/?#[\]]{0,256}:)(?<secret>[^\s@/?#[\]]{1,256})(?<after>@)/g,
  },
  { kind: 'anthropic_key', pattern: new RegExp(`${START}sk-ant-[A-Za-z0-9_-]{32,}`, 'g') },
  {
    kind: 'openai_key',
    pattern: new RegExp(
      `${START}sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|[A-Za-z0-9]{32,}(?![A-Za-z0-9_-]))`,
      'g',
    ),
  },
  { kind: 'stripe_key', pattern: new RegExp(`${START}(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}`, 'g') },
  {
    kind: 'github_token',
    pattern: new RegExp(`${START}(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})`, 'g'),
  },
  { kind: 'slack_token', pattern: new RegExp(`${START}xox[abprs]-[A-Za-z0-9-]{20,}`, 'g') },
  { kind: 'google_api_key', pattern: new RegExp(`${START}AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])`, 'g') },
  { kind: 'aws_access_key_id', pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])/g },
  {
    kind: 'aws_secret_access_key',
    pattern:
      /(?<before>(?<![A-Za-z0-9_])(?:aws_?)?secret_?access_?key["']?[ \t]{0,8}[:=][ \t]{0,8}["']?)(?<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/gi,
  },
  { kind: 'jwt', pattern: new RegExp(`${START}eyJ[A-Za-z0-9_-]{5,}\\.eyJ[A-Za-z0-9_-]{5,}\\.[A-Za-z0-9_-]{10,}`, 'g') },
  {
    // Opaque tokens carry a digit; requiring one keeps prose such as "Bearer instrumentalization".
    kind: 'bearer_token',
    pattern: new RegExp(
      `(?<before>${START}bearer[ \\t]{1,8})(?<secret>(?=[A-Za-z._~+/-]*[0-9])[A-Za-z0-9._~+/-]{16,}=*)`,
      'gi',
    ),
  },
  {
    kind: 'basic_auth',
    pattern:
      /(?<before>authorization["']?[ \t]{0,8}[:=][ \t]{0,8}["']?basic[ \t]{1,8})(?<secret>[A-Za-z0-9+/]{8,}={0,2})/gi,
  },
  {
    // `name=value` in query strings and env lines, where the name ends in a secret word.
    // Code style `token = x` (spaces), `${VAR}`/`<placeholder>`/`{{ x }}` values and markers
    // (`[REDACTED:…]`, so redaction is idempotent) are left alone.
    kind: 'secret_assignment',
    pattern:
      /(?<before>(?<![A-Za-z0-9_.-])(?:[A-Za-z0-9_.-]{0,48}[_.-])?(?:password|passwd|secret|token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|client[_-]?secret)=)(?<secret>"[^"\r\n[$<{][^"\r\n]{0,511}"|'[^'\r\n[$<{][^'\r\n]{0,511}'|[^\s&#"'<>;,[$<{][^\s&#"'<>;,]{0,511})/gi,
    accept: (secret) => !NOT_A_SECRET_VALUE.test(secret.replace(/^(["'])(.*)\1$/, '$2')),
  },
];

/** Every kind in the order rules run, which is also the order of the report. */
const KIND_ORDER: readonly SecretKind[] = ['private_key', ...PATTERN_RULES.map((rule) => rule.kind)];

const PEM_BEGIN = /-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----/g;
const PEM_END = /-----END (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----/g;
/** The base64 lines of a key whose END line was cut off (a truncated paste is still a secret). */
const PEM_TRUNCATED_BODY = /(?:\r?\n[A-Za-z0-9+/=]{16,200})*/y;
/**
 * Text none of the rules can match: it holds none of their literal prefixes (case folded, so a
 * superset). One scan instead of one per rule keeps redaction off the hot path for the ordinary
 * text of a turn or an import; `redact.test.ts` checks it admits every rule's examples.
 *
 * The prefixes are `://`, `sk-`, `[sr]k_live_`/`_test_`, `gh[pousr]_`, `github_pat_`, `xox[abprs]-`,
 * `aiza`, `akia`, `asia`, `secret_access_key` (underscores optional), `eyj`, `bearer`,
 * `authorization`, `private key`, and `=` after `password`, `passwd`, `secret`, `token`,
 * or `api`, `access`, `secret`, `private` then `key` (joined by nothing, `_` or `-`). Written as a
 * tree by first letters, the scan tries one branch at most places instead of every prefix: half the
 * time over an import's lines. `secret-prefilter.test.ts` holds the tree to that list.
 */
const MAY_HOLD_SECRET =
  /:\/\/|s(?:k(?:-|_(?:live|test)_)|ecret(?:_?access_?key|=|[_-]?key=))|rk_(?:live|test)_|g(?:h[pousr]_|ithub_pat_)|xox[abprs]-|a(?:iza|kia|sia|ccess[_-]?key=|pi[_-]?key=|uthorization)|eyj|bearer|pass(?:wd|word)=|token=|private(?: key|[_-]?key=)/i;
/** No secret above is shorter than this. */
const MIN_SECRET_TEXT_LENGTH = 8;

/**
 * False when no string of the JSON value this text encodes can hold a secret: the text has none of
 * the rules' literal prefixes and no escape that could spell one (`\u…`, `\/`). Every other JSON
 * escape stands for a character no prefix contains, so a prefix in a decoded string is a prefix in
 * the text. Lets an import skip redaction's walk for the ordinary line, which is most of them.
 */
export function jsonTextMayHoldSecret(json: string): boolean {
  return json.includes('\\u') || json.includes('\\/') || MAY_HOLD_SECRET.test(json);
}

/**
 * Replaces secret-shaped substrings in every string of a JSON value (object keys are kept).
 * Returns the same value, and the same objects and arrays along untouched paths, when nothing was
 * found, and a count per kind of what was replaced.
 *
 * @example
 * redactSecrets({ cmd: 'curl -H "Authorization: Bearer abc123def456ghi789jkl"' })
 * // { value: { cmd: 'curl -H "Authorization: Bearer [REDACTED:bearer_token]"' },
 * //   redactions: [{ kind: 'bearer_token', count: 1 }] }
 */
export function redactSecrets<T>(value: T): RedactionResult<T> {
  const counts = new Map<SecretKind, number>();
  const redacted = walk(value, counts) as T;
  const redactions = KIND_ORDER.filter((kind) => counts.has(kind)).map((kind) => ({
    kind,
    count: counts.get(kind) ?? 0,
  }));
  return { value: redacted, redactions };
}

function walk(value: unknown, counts: Map<SecretKind, number>): unknown {
  if (typeof value === 'string') return redactText(value, counts);
  if (Array.isArray(value)) {
    let changed = false;
    const items = value.map((item) => {
      const next = walk(item, counts);
      changed ||= next !== item;
      return next;
    });
    return changed ? items : value;
  }
  if (isPlainObject(value)) {
    let changed = false;
    const entries = Object.entries(value).map(([key, item]) => {
      const next = walk(item, counts);
      changed ||= next !== item;
      return [key, next] as const;
    });
    return changed ? Object.fromEntries(entries) : value;
  }
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function redactText(text: string, counts: Map<SecretKind, number>): string {
  if (text.length < MIN_SECRET_TEXT_LENGTH || !MAY_HOLD_SECRET.test(text)) return text;
  let result = redactPrivateKeys(text, counts);
  for (const rule of PATTERN_RULES) result = applyRule(result, rule, counts);
  return result;
}

function applyRule(text: string, rule: PatternRule, counts: Map<SecretKind, number>): string {
  let found = 0;
  const marker = redactionMarker(rule.kind);
  const replaced = text.replace(rule.pattern, (...args: unknown[]) => {
    const match = args[0] as string;
    const groups = args[args.length - 1] as Record<string, string | undefined> | string;
    const named = typeof groups === 'object' ? groups : undefined;
    const secret = named?.secret ?? match;
    if (rule.accept && !rule.accept(secret)) return match;
    found += 1;
    const quote = secret[0] === '"' || secret[0] === "'" ? secret[0] : '';
    return `${named?.before ?? ''}${quote}${marker}${quote}${named?.after ?? ''}`;
  });
  if (found === 0) return text;
  addCount(counts, rule.kind, found);
  return replaced;
}

/** Replaces each PEM private key block, BEGIN through END, in one forward scan. */
function redactPrivateKeys(text: string, counts: Map<SecretKind, number>): string {
  if (!text.includes('PRIVATE KEY')) return text;
  const marker = redactionMarker('private_key');
  let output = '';
  let cursor = 0;
  let found = 0;
  // Once no END follows a BEGIN, none follows any later BEGIN either: stop searching for it.
  let endMayFollow = true;
  PEM_BEGIN.lastIndex = 0;
  for (let begin = PEM_BEGIN.exec(text); begin; begin = PEM_BEGIN.exec(text)) {
    const headerEnd = begin.index + begin[0].length;
    let blockEnd: number;
    PEM_END.lastIndex = headerEnd;
    const end = endMayFollow ? PEM_END.exec(text) : null;
    if (end) {
      blockEnd = end.index + end[0].length;
    } else {
      endMayFollow = false;
      PEM_TRUNCATED_BODY.lastIndex = headerEnd;
      blockEnd = headerEnd + (PEM_TRUNCATED_BODY.exec(text)?.[0].length ?? 0);
    }
    output += text.slice(cursor, begin.index) + marker;
    cursor = blockEnd;
    found += 1;
    PEM_BEGIN.lastIndex = blockEnd;
  }
  if (found === 0) return text;
  addCount(counts, 'private_key', found);
  return output + text.slice(cursor);
}

function addCount(counts: Map<SecretKind, number>, kind: SecretKind, found: number): void {
  counts.set(kind, (counts.get(kind) ?? 0) + found);
}
