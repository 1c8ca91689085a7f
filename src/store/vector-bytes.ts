/** Vectors as stored in the portable `bytea` columns: little-endian float32, four bytes a dimension. */
import { endianness } from 'node:os';

/** Float32Array's own byte order is the machine's: on a little-endian one the bytes are copied as they are. */
const NATIVE_LE = endianness() === 'LE';

/** The bytes a vector is stored as. */
export function vectorBytes(vector: Float32Array): Uint8Array {
  if (NATIVE_LE) return new Uint8Array(vector.buffer.slice(vector.byteOffset, vector.byteOffset + vector.byteLength));
  const bytes = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i]!, i * 4);
  return bytes;
}

/** The vector stored as `bytes`. */
export function bytesVector(bytes: Uint8Array): Float32Array {
  // A copy (a pg Buffer is a view into a shared pool), aligned for the float view.
  if (NATIVE_LE) return new Float32Array(new Uint8Array(bytes).buffer, 0, bytes.byteLength >> 2);
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(bytes.byteLength / 4);
  for (let i = 0; i < out.length; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}
