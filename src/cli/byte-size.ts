/**
 * A byte count for people, in the unit that keeps it readable: `512 B`, `3.4 KB`, `12.0 MB`
 * (decimal units, as file managers show them).
 *
 * @example byteSize(3_400) // '3.4 KB'
 */
export function byteSize(bytes: number): string {
  if (bytes < 1_000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1_000).toFixed(1)} KB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}
