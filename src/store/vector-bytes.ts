/** Vectors as stored in the portable `bytea` columns: little-endian float32, four bytes a dimension. */

/** The bytes a vector is stored as. */
export function vectorBytes(vector: Float32Array): Uint8Array {
  const bytes = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i]!, i * 4);
  return bytes;
}

/** The vector stored as `bytes`. */
export function bytesVector(bytes: Uint8Array): Float32Array {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(bytes.byteLength / 4);
  for (let i = 0; i < out.length; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}
