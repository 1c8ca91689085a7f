import { KeyRingError, open, seal, type KeyRing, type Sealed } from './key-ring';

/**
 * The at-rest envelope of a column value (KEEL_ENCRYPT_AT_REST): a jsonb column holds
 * `{"$sealed":2,"k":keyId,"iv":…,"ct":…,"tag":…,"row":…}` (base64), a text column the same fields as
 * `$sealed:2:keyId:iv:ct:tag:row` (the row base64). The key id travels with the value, so rotation
 * needs no rewrite: any key still in the ring opens it. `row` names the row the value was sealed
 * for (table, column, key columns) and is authenticated with it (AES-GCM additional data), so a
 * value moved to another row by a database writer fails to open there, naming both rows.
 * Version 1 values (sealed before, without `row`) still open, unbound. Plain values pass through
 * every function here unchanged, which is what keeps rows written before encryption readable.
 */
export interface SealedJson {
  readonly $sealed: 1 | 2;
  readonly k: string;
  readonly iv: string;
  readonly ct: string;
  readonly tag: string;
  /** Version 2: the row it was sealed for, as `rowTuple` writes it. */
  readonly row?: RowTuple;
}

/** The row a sealed value belongs to: its table and column, and the values of the columns that identify the row. */
export interface RowBinding {
  readonly table: string;
  readonly column: string;
  readonly key: Readonly<Record<string, string | number>>;
}

/** Where a read found a sealed value: the result column and the row's columns. */
export interface ReadAt {
  readonly column: string;
  readonly row: Readonly<Record<string, unknown>>;
}

/** `[table, column, [[keyColumn, value], …]]`, key columns sorted: the same text whoever serializes it (jsonb keeps arrays as written). */
type RowTuple = readonly [string, string, ReadonlyArray<readonly [string, string]>];

const V1_TEXT_PREFIX = '$sealed:1:';
const V2_TEXT_PREFIX = '$sealed:2:';
// Domain separation: a sealed jsonb value cannot be passed off as a text one, nor a Temporal payload as either.
const V1_JSON_AAD = Buffer.from('keel-at-rest:json');
const V1_TEXT_AAD = Buffer.from('keel-at-rest:text');
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Seals a JSON value for `row` with the ring's current key (the column stores the envelope). */
export function sealJson(ring: KeyRing, value: unknown, row: RowBinding): SealedJson {
  const tuple = rowTuple(row);
  const s = seal(ring, Buffer.from(JSON.stringify(value)), v2Aad('json', tuple));
  return {
    $sealed: 2,
    k: s.keyId,
    iv: s.iv.toString('base64'),
    ct: s.ciphertext.toString('base64'),
    tag: s.tag.toString('base64'),
    row: tuple,
  };
}

/** Seals text for `row` with the ring's current key, as one text value. */
export function sealText(ring: KeyRing, text: string, row: RowBinding): string {
  const tuple = rowTuple(row);
  const s = seal(ring, Buffer.from(text), v2Aad('text', tuple));
  const rowPart = Buffer.from(JSON.stringify(tuple)).toString('base64');
  return `${V2_TEXT_PREFIX}${s.keyId}:${s.iv.toString('base64')}:${s.ciphertext.toString('base64')}:${s.tag.toString('base64')}:${rowPart}`;
}

/** True for a value in either sealed form, of either version. */
export function isSealed(value: unknown): boolean {
  return typeof value === 'string'
    ? value.startsWith(V1_TEXT_PREFIX) || value.startsWith(V2_TEXT_PREFIX)
    : isSealedJson(value);
}

/**
 * The plaintext of a sealed value; any other value as is. With `at`, a version 2 value must sit in
 * the column it was sealed for, and every key column the row carries must hold the value it was
 * sealed with. Throws a KeyRingError naming the fix when there is no ring or the key is gone, and
 * naming the row when the value was altered or moved from another row.
 */
export function openValue(ring: KeyRing | undefined, value: unknown, at?: ReadAt): unknown {
  if (typeof value === 'string') {
    if (value.startsWith(V1_TEXT_PREFIX))
      return openSealed(ring, textFields(value.slice(V1_TEXT_PREFIX.length)), V1_TEXT_AAD).toString();
    if (!value.startsWith(V2_TEXT_PREFIX)) return value;
    const fields = textFields(value.slice(V2_TEXT_PREFIX.length));
    const tuple = parseRowTuple(Buffer.from(fields.row, 'base64').toString());
    return openBound(ring, fields, 'text', tuple, at).toString();
  }
  if (!isSealedJson(value)) return value;
  if (value.$sealed === 1) return JSON.parse(openSealed(ring, value, V1_JSON_AAD).toString()) as unknown;
  return JSON.parse(openBound(ring, value, 'json', parseRowTuple(JSON.stringify(value.row)), at).toString()) as unknown;
}

function textFields(rest: string): { k: string; iv: string; ct: string; tag: string; row: string } {
  const [k = '', iv = '', ct = '', tag = '', row = ''] = rest.split(':');
  return { k, iv, ct, tag, row };
}

function isSealedJson(value: unknown): value is SealedJson {
  if (typeof value !== 'object' || value === null || typeof (value as { ct?: unknown }).ct !== 'string') return false;
  const version = (value as { $sealed?: unknown }).$sealed;
  return version === 1 || version === 2;
}

function rowTuple(row: RowBinding): RowTuple {
  const key = Object.entries(row.key)
    .map(([column, v]): readonly [string, string] => [column, String(v)])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return [row.table, row.column, key];
}

function parseRowTuple(text: string): RowTuple {
  const parsed: unknown = JSON.parse(text || 'null');
  if (!isRowTuple(parsed)) throw new KeyRingError('a stored value sealed at rest names no valid row: it was altered');
  return parsed;
}

function isRowTuple(value: unknown): value is RowTuple {
  return (
    Array.isArray(value) &&
    typeof value[0] === 'string' &&
    typeof value[1] === 'string' &&
    Array.isArray(value[2]) &&
    (value[2] as unknown[]).every(
      (p) => Array.isArray(p) && p.length === 2 && typeof p[0] === 'string' && typeof p[1] === 'string',
    )
  );
}

function v2Aad(kind: 'json' | 'text', tuple: RowTuple): Buffer {
  return Buffer.from(`keel-at-rest:v2:${kind}\n${JSON.stringify(tuple)}`);
}

/** `transcript_entries.payload of the row (agent_id m, id e1, session_id s)`. */
function describeRow(tuple: RowTuple): string {
  return `${tuple[0]}.${tuple[1]} of the row (${tuple[2].map(([c, v]) => `${c} ${v}`).join(', ')})`;
}

function openBound(
  ring: KeyRing | undefined,
  fields: { k: string; iv: string; ct: string; tag: string },
  kind: 'json' | 'text',
  tuple: RowTuple,
  at: ReadAt | undefined,
): Buffer {
  let plain: Buffer;
  try {
    plain = openSealed(ring, fields, v2Aad(kind, tuple));
  } catch (err) {
    if (!(err instanceof KeyRingError)) throw err;
    throw new KeyRingError(`${describeRow(tuple)}: ${err.message}`);
  }
  if (at) {
    const moved =
      at.column !== tuple[1] ||
      tuple[2].some(([column, v]) => column in at.row && at.row[column] != null && String(at.row[column]) !== v);
    if (moved) {
      const found = tuple[2]
        .map(([column]) => `${column} ${column in at.row ? String(at.row[column]) : '?'}`)
        .join(', ');
      throw new KeyRingError(
        `a value sealed for ${describeRow(tuple)} was read from column ${at.column} of the row (${found}): it was moved between rows in the database; restore it from a backup`,
      );
    }
  }
  return plain;
}

function openSealed(
  ring: KeyRing | undefined,
  v: { k: string; iv: string; ct: string; tag: string },
  aad: Buffer,
): Buffer {
  if (!ring) {
    throw new KeyRingError(
      `a stored value is encrypted at rest with key "${v.k}" but KEEL_ENCRYPTION_KEYS is not set; set it to the keys the database was written with`,
    );
  }
  const sealed: Sealed = {
    keyId: v.k,
    iv: Buffer.from(v.iv, 'base64'),
    ciphertext: Buffer.from(v.ct, 'base64'),
    tag: Buffer.from(v.tag, 'base64'),
  };
  if (sealed.iv.length !== IV_BYTES || sealed.tag.length !== TAG_BYTES) {
    throw new KeyRingError(
      `a stored value sealed with key "${v.k}" is malformed (nonce or tag of the wrong length): it was altered`,
    );
  }
  return open(ring, sealed, aad);
}
