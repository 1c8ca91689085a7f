import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM keys by id, shared by the Temporal payload codec and encryption at rest.
 *
 * Rotation: new data is sealed with the current key; data sealed with any key still in the ring
 * stays readable, so an operator adds a key, makes it current, and drops the old one only when
 * nothing sealed with it is left.
 */
export interface KeyRing {
  /** The key id new data is sealed with. */
  readonly currentKeyId: string;
  /** Every key id the ring can open. */
  readonly keyIds: readonly string[];
  key(keyId: string): Buffer;
}

/** Sealed bytes: the key id, a 12-byte nonce, the ciphertext and the 16-byte GCM tag. */
export interface Sealed {
  readonly keyId: string;
  readonly iv: Buffer;
  readonly ciphertext: Buffer;
  readonly tag: Buffer;
}

const KEY_BYTES = 32;
const IV_BYTES = 12;
const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Parses `id:base64key[,id:base64key…]` (KEEL_ENCRYPTION_KEYS). The current key is `currentKeyId`
 * (KEEL_ENCRYPTION_KEY_ID) when given, else the first listed. Errors name the variable and the fix.
 */
export function parseKeyRing(spec: string, currentKeyId?: string): KeyRing {
  const keys = new Map<string, Buffer>();
  for (const part of spec
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const colon = part.indexOf(':');
    const id = colon > 0 ? part.slice(0, colon) : '';
    if (!KEY_ID.test(id)) {
      throw new KeyRingError(
        `KEEL_ENCRYPTION_KEYS: each entry is "id:base64key" with an id of letters, digits, ".", "_" or "-"; got an entry without one (generate a key with \`openssl rand -base64 32\`)`,
      );
    }
    const key = Buffer.from(part.slice(colon + 1), 'base64');
    if (key.length !== KEY_BYTES) {
      throw new KeyRingError(
        `KEEL_ENCRYPTION_KEYS: key "${id}" is ${key.length} bytes; AES-256 needs 32 bytes, base64-encoded (\`openssl rand -base64 32\`)`,
      );
    }
    if (keys.has(id))
      throw new KeyRingError(`KEEL_ENCRYPTION_KEYS: key id "${id}" is listed twice; give each key its own id`);
    keys.set(id, key);
  }
  if (keys.size === 0)
    throw new KeyRingError('KEEL_ENCRYPTION_KEYS holds no key; set it to "id:base64key" (`openssl rand -base64 32`)');
  const current = currentKeyId ?? [...keys.keys()][0]!;
  if (!keys.has(current)) {
    throw new KeyRingError(
      `KEEL_ENCRYPTION_KEY_ID is "${current}" but KEEL_ENCRYPTION_KEYS has only ${[...keys.keys()].map((k) => `"${k}"`).join(', ')}; add the key or pick one of those`,
    );
  }
  return {
    currentKeyId: current,
    keyIds: [...keys.keys()],
    key(keyId) {
      const key = keys.get(keyId);
      if (!key)
        throw new KeyRingError(
          `data is sealed with key "${keyId}", which KEEL_ENCRYPTION_KEYS no longer holds; add it back to read this data`,
        );
      return key;
    },
  };
}

/** Seals with the ring's current key. `aad` binds the ciphertext to its context (it is not stored). */
export function seal(ring: KeyRing, plaintext: Uint8Array, aad?: Uint8Array): Sealed {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', ring.key(ring.currentKeyId), iv);
  if (aad) cipher.setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { keyId: ring.currentKeyId, iv, ciphertext, tag: cipher.getAuthTag() };
}

/** Opens sealed bytes with the key they name; throws when the key is gone or the data was altered. */
export function open(ring: KeyRing, sealed: Sealed, aad?: Uint8Array): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', ring.key(sealed.keyId), sealed.iv);
  if (aad) decipher.setAAD(aad);
  decipher.setAuthTag(sealed.tag);
  try {
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]);
  } catch {
    throw new KeyRingError(
      `data sealed with key "${sealed.keyId}" failed authentication: it was altered, or the key with that id is not the one that sealed it`,
    );
  }
}

/** A key configuration or sealed-data problem; the message names the variable and the fix. */
export class KeyRingError extends Error {
  override readonly name = 'KeyRingError';
}
