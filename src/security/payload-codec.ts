import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { open, seal, KeyRingError, type KeyRing } from './key-ring';

/** The `encoding` metadata of a payload this codec sealed. */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
/** The metadata key naming the ring key that sealed the payload (rotation reads it). */
export const KEY_ID_METADATA = 'encryption-key-id';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/**
 * Encrypts every Temporal payload (the whole Payload proto: its metadata says what the data is) with
 * the ring's current key: data = nonce ‖ ciphertext ‖ GCM tag, metadata = encoding + key id. Decoding
 * opens a payload with the key its metadata names, so payloads sealed before a rotation stay readable
 * while the old key is in the ring. A payload that is not encrypted passes through: turning the codec
 * on for a cluster with existing histories keeps them readable.
 */
export class EncryptionCodec implements PayloadCodec {
  constructor(private readonly ring: KeyRing) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const sealed = seal(this.ring, temporal.api.common.v1.Payload.encode(payload).finish());
      return {
        metadata: { encoding: utf8.encode(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: utf8.encode(sealed.keyId) },
        data: Buffer.concat([sealed.iv, sealed.ciphertext, sealed.tag]),
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const encoding = payload.metadata?.encoding;
      if (!encoding || fromUtf8.decode(encoding) !== ENCRYPTED_ENCODING) return payload;
      const keyId = payload.metadata?.[KEY_ID_METADATA];
      if (!keyId)
        throw new KeyRingError(
          `an encrypted Temporal payload has no "${KEY_ID_METADATA}" metadata; it was not written by Keel's codec`,
        );
      const data = payload.data ?? new Uint8Array();
      if (data.length < IV_BYTES + TAG_BYTES)
        throw new KeyRingError(
          `an encrypted Temporal payload (key "${fromUtf8.decode(keyId)}") is ${data.length} bytes, too short to hold a nonce and a tag`,
        );
      const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
      const plain = open(this.ring, {
        keyId: fromUtf8.decode(keyId),
        iv: bytes.subarray(0, IV_BYTES),
        ciphertext: bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES),
        tag: bytes.subarray(bytes.length - TAG_BYTES),
      });
      return temporal.api.common.v1.Payload.decode(plain);
    });
  }
}

/**
 * The data converter of every Temporal worker and client of Keel: with a key ring, payloads go through
 * the encryption codec and failures carry their message and stack trace as an encoded payload (they can
 * quote user text); without one, undefined (Temporal's default converter).
 */
export function keelDataConverter(ring: KeyRing | undefined): DataConverter | undefined {
  if (!ring) return undefined;
  return { payloadCodecs: [new EncryptionCodec(ring)], failureConverterPath: ENCODED_FAILURE_CONVERTER_PATH };
}

/** A module exporting `failureConverter` (Temporal loads it by path, also into the workflow bundle). */
export const ENCODED_FAILURE_CONVERTER_PATH = require.resolve('./encoded-failure-converter');
