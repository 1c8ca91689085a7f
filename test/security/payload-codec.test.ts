import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { parseKeyRing } from '../../src/security/key-ring';
import { ENCRYPTED_ENCODING, EncryptionCodec, KEY_ID_METADATA } from '../../src/security/payload-codec';

const keyA = randomBytes(32).toString('base64');
const keyB = randomBytes(32).toString('base64');
const ringA = parseKeyRing(`a:${keyA}`);
const ringBA = parseKeyRing(`b:${keyB},a:${keyA}`);
const ringB = parseKeyRing(`b:${keyB}`);

const text = (p: Payload | undefined) => Buffer.from(p?.data ?? []).toString('utf8');
const meta = (p: Payload | undefined, key: string) => Buffer.from(p?.metadata?.[key] ?? []).toString('utf8');

describe('EncryptionCodec', () => {
  const plain = defaultPayloadConverter.toPayload({ text: 'the secret plan: PLANTED-1' });

  it('encrypts with the current key and decodes back to the same payload, metadata included', async () => {
    const [sealed] = await new EncryptionCodec(ringA).encode([plain]);
    expect(meta(sealed, 'encoding')).toBe(ENCRYPTED_ENCODING);
    expect(meta(sealed, KEY_ID_METADATA)).toBe('a');
    expect(text(sealed)).not.toContain('PLANTED-1');
    expect(Object.keys(sealed!.metadata!)).toEqual(['encoding', KEY_ID_METADATA]);
    const [opened] = await new EncryptionCodec(ringA).decode([sealed!]);
    expect(meta(opened, 'encoding')).toBe('json/plain');
    expect(defaultPayloadConverter.fromPayload(opened!)).toEqual({ text: 'the secret plan: PLANTED-1' });
  });

  it('after a rotation seals with the new key and still opens payloads sealed with the old one', async () => {
    const [old] = await new EncryptionCodec(ringA).encode([plain]);
    const rotated = new EncryptionCodec(ringBA);
    const [fresh] = await rotated.encode([plain]);
    expect(meta(fresh, KEY_ID_METADATA)).toBe('b');
    const opened = await rotated.decode([old!, fresh!]);
    expect(opened.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual([
      { text: 'the secret plan: PLANTED-1' },
      { text: 'the secret plan: PLANTED-1' },
    ]);
  });

  it('names the missing key and the variable when a payload was sealed with a key the ring dropped', async () => {
    const [old] = await new EncryptionCodec(ringA).encode([plain]);
    await expect(new EncryptionCodec(ringB).decode([old!])).rejects.toThrow(
      'data is sealed with key "a", which KEEL_ENCRYPTION_KEYS no longer holds; add it back to read this data',
    );
  });

  it('refuses a tampered payload or a swapped key id', async () => {
    const [sealed] = await new EncryptionCodec(ringBA).encode([plain]);
    const flipped = Buffer.from(sealed!.data!);
    flipped[20]! ^= 1;
    await expect(new EncryptionCodec(ringBA).decode([{ ...sealed, data: flipped }])).rejects.toThrow(
      'failed authentication',
    );
    const relabelled = { ...sealed, metadata: { ...sealed!.metadata, [KEY_ID_METADATA]: Buffer.from('a') } };
    await expect(new EncryptionCodec(ringBA).decode([relabelled])).rejects.toThrow(
      'sealed with key "a" failed authentication',
    );
    await expect(new EncryptionCodec(ringBA).decode([{ ...sealed, data: flipped.subarray(0, 10) }])).rejects.toThrow(
      'too short',
    );
    const unlabelled = { ...sealed, metadata: { encoding: sealed!.metadata!.encoding! } };
    await expect(new EncryptionCodec(ringBA).decode([unlabelled])).rejects.toThrow(`no "${KEY_ID_METADATA}" metadata`);
  });

  it('passes unencrypted payloads through (histories written before the codec was turned on)', async () => {
    const binary = defaultPayloadConverter.toPayload(new Uint8Array([1, 2, 3]));
    const empty = defaultPayloadConverter.toPayload(undefined);
    const decoded = await new EncryptionCodec(ringA).decode([plain, binary, empty]);
    expect(decoded).toEqual([plain, binary, empty]);
  });

  it('uses a fresh nonce per payload: equal plaintexts give different ciphertexts', async () => {
    const [one, two] = await new EncryptionCodec(ringA).encode([plain, plain]);
    expect(Buffer.from(one!.data!).equals(Buffer.from(two!.data!))).toBe(false);
  });
});
