import { KeyRingError, open, seal, type KeyRing, type Sealed } from './key-ring';

/**
 * The at-rest envelope of a column value (KEEL_ENCRYPT_AT_REST): a jsonb column holds
 * `{"$sealed":1,"k":keyId,"iv":…,"ct":…,"tag":…}` (base64), a text column the same fields as
 * `$sealed:1:keyId:iv:ct:tag`. The key id travels with the value, so rotation needs no rewrite:
 * any key still in the ring opens it. Plain values pass through every function here unchanged,
 * which is what keeps rows written before encryption was turned on readable.
 */
export interface SealedJson {
  readonly $sealed: 1;
  readonly k: string;
  readonly iv: string;
  readonly ct: string;
  readonly tag: string;
}

const TEXT_PREFIX = '$sealed:1:';
// Domain separation: a sealed jsonb value cannot be passed off as a text one, nor a Temporal payload as either.
const JSON_AAD = Buffer.from('keel-at-rest:json');
const TEXT_AAD = Buffer.from('keel-at-rest:text');
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Seals a JSON value with the ring's current key (the column stores the envelope). */
export function sealJson(ring: KeyRing, value: unknown): SealedJson {
  const s = seal(ring, Buffer.from(JSON.stringify(value)), JSON_AAD);
  return { $sealed: 1, k: s.keyId, iv: s.iv.toString('base64'), ct: s.ciphertext.toString('base64'), tag: s.tag.toString('base64') };
}

/** Seals text with the ring's current key, as one text value. */
export function sealText(ring: KeyRing, text: string): string {
  const s = seal(ring, Buffer.from(text), TEXT_AAD);
  return `${TEXT_PREFIX}${s.keyId}:${s.iv.toString('base64')}:${s.ciphertext.toString('base64')}:${s.tag.toString('base64')}`;
}

/** True for a value in either sealed form. */
export function isSealed(value: unknown): boolean {
  return typeof value === 'string' ? value.startsWith(TEXT_PREFIX) : isSealedJson(value);
}

/**
 * The plaintext of a sealed value; any other value as is. Throws a KeyRingError naming the fix when
 * there is no ring, the key is gone, or the value was altered.
 */
export function openValue(ring: KeyRing | undefined, value: unknown): unknown {
  if (typeof value === 'string') {
    if (!value.startsWith(TEXT_PREFIX)) return value;
    const [k = '', iv = '', ct = '', tag = ''] = value.slice(TEXT_PREFIX.length).split(':');
    return openSealed(ring, { k, iv, ct, tag }, TEXT_AAD).toString();
  }
  if (!isSealedJson(value)) return value;
  return JSON.parse(openSealed(ring, value, JSON_AAD).toString()) as unknown;
}

function isSealedJson(value: unknown): value is SealedJson {
  return typeof value === 'object' && value !== null && (value as { $sealed?: unknown }).$sealed === 1 && typeof (value as { ct?: unknown }).ct === 'string';
}

function openSealed(ring: KeyRing | undefined, v: { k: string; iv: string; ct: string; tag: string }, aad: Buffer): Buffer {
  if (!ring) {
    throw new KeyRingError(`a stored value is encrypted at rest with key "${v.k}" but KEEL_ENCRYPTION_KEYS is not set; set it to the keys the database was written with`);
  }
  const sealed: Sealed = { keyId: v.k, iv: Buffer.from(v.iv, 'base64'), ciphertext: Buffer.from(v.ct, 'base64'), tag: Buffer.from(v.tag, 'base64') };
  if (sealed.iv.length !== IV_BYTES || sealed.tag.length !== TAG_BYTES) {
    throw new KeyRingError(`a stored value sealed with key "${v.k}" is malformed (nonce or tag of the wrong length): it was altered`);
  }
  return open(ring, sealed, aad);
}
