/**
 * Splits serialized transcript text into pieces of at most `maxTokens` each, at paragraph breaks where
 * it can (a summarizer sees whole messages), at line breaks next, and by characters as a last resort.
 * Returns `[text]` when it already fits.
 *
 * @example splitTextToFit(longChunk, 20_000, countTokens) // ['[User]: …', '[Assistant]: …']
 */
export function splitTextToFit(text: string, maxTokens: number, countTokens: (text: string) => number): string[] {
  if (countTokens(text) <= maxTokens) return [text];
  for (const separator of ['\n\n', '\n']) {
    const parts = text.split(separator);
    if (parts.length < 2) continue;
    return packParts(parts, separator, maxTokens, countTokens).flatMap((p) =>
      splitTextToFit(p, maxTokens, countTokens),
    );
  }
  // One unbroken run: halve it until each half fits.
  const mid = Math.ceil(text.length / 2);
  if (mid >= text.length) return [text];
  return [
    ...splitTextToFit(text.slice(0, mid), maxTokens, countTokens),
    ...splitTextToFit(text.slice(mid), maxTokens, countTokens),
  ];
}

/** Greedily joins consecutive parts while the joined piece fits; a part too big alone stays alone (split further by the caller). */
function packParts(
  parts: string[],
  separator: string,
  maxTokens: number,
  countTokens: (text: string) => number,
): string[] {
  const pieces: string[] = [];
  let current = '';
  let currentTokens = 0;
  for (const part of parts) {
    const tokens = countTokens(part);
    if (current !== '' && currentTokens + tokens > maxTokens) {
      pieces.push(current);
      current = '';
      currentTokens = 0;
    }
    current = current === '' ? part : `${current}${separator}${part}`;
    currentTokens += tokens;
  }
  if (current !== '') pieces.push(current);
  return pieces;
}
