import { createHmac, hkdfSync } from 'node:crypto';
import type { KeyRing } from './key-ring';

/**
 * A blind index for searching sealed text: the HMAC-SHA256 of each lowercased word, under a key
 * derived from a ring key (HKDF, info "keel-search"). The database can match whole words without
 * seeing them; it cannot match parts of words, so search over sealed text is whole-word.
 */

const HASH_BYTES = 16;
const WORD = /[\p{L}\p{N}_]+/gu;

/** The distinct lowercased words of a text, in first-seen order. */
export function searchWords(text: string): string[] {
  return [...new Set(text.toLowerCase().match(WORD) ?? [])];
}

/** The blind-index entries of `text` under the ring's current key (stored with the sealed text). */
export function blindIndex(ring: KeyRing, text: string): string[] {
  const key = searchKey(ring, ring.currentKeyId);
  return searchWords(text).map((word) => hashWord(key, word));
}

/** The blind-index entries of already-made search terms (history search's stems) under the ring's current key. */
export function blindTerms(ring: KeyRing, terms: readonly string[]): string[] {
  const key = searchKey(ring, ring.currentKeyId);
  return terms.map((term) => hashWord(key, term));
}

/**
 * What one query word looks like in the index under every key of the ring: a row indexed under
 * any of them matches (rows keep the key they were sealed with until rewritten).
 */
export function blindWord(ring: KeyRing, word: string): string[] {
  return ring.keyIds.map((keyId) => hashWord(searchKey(ring, keyId), word.toLowerCase()));
}

const derived = new WeakMap<Buffer, Buffer>();

function searchKey(ring: KeyRing, keyId: string): Buffer {
  const key = ring.key(keyId);
  let k = derived.get(key);
  if (!k) {
    k = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'keel-search', 32));
    derived.set(key, k);
  }
  return k;
}

function hashWord(key: Buffer, word: string): string {
  return createHmac('sha256', key).update(word).digest().subarray(0, HASH_BYTES).toString('base64');
}
