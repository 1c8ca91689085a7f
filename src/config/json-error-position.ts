/**
 * A JSON.parse failure described by line and column: Node 20 reports only a character position,
 * which no editor takes. `Expected ',' … at position 41` becomes `line 3, column 5: Expected ',' …`.
 */
export function jsonErrorAt(text: string, err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const at = /\s*(?:in JSON )?at position (\d+)(?: \(line \d+ column \d+\))?$/.exec(message);
  if (!at) return message;
  const before = text.slice(0, Number(at[1]));
  const line = before.split('\n').length;
  const column = before.length - before.lastIndexOf('\n');
  return `line ${line}, column ${column}: ${message.slice(0, at.index)}`;
}
