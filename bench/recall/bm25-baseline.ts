/**
 * The plain baseline the recall bench prints beside Keel: textbook BM25 (k1 1.2, b 0.75) over every
 * entry in memory, with English stop words and naive suffix stripping. No neighbours, no echo
 * handling: what a developer would write in an afternoon.
 */
import { STOP_WORDS } from '../../src/text/stop-words';

const SUFFIXES = ['ing', 'ed', 'es', 's', 'ly'];

function tokens(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])
    .filter((w) => !STOP_WORDS.has(w))
    .map((w) => {
      const suffix = SUFFIXES.find((s) => w.endsWith(s) && w.length - s.length >= 3);
      return suffix ? w.slice(0, -suffix.length) : w;
    });
}

/** An index over `docs` answering a query with the ids of the best `k`. */
export function bm25Baseline(docs: ReadonlyArray<{ id: string; text: string }>) {
  const k1 = 1.2;
  const b = 0.75;
  const tfs = docs.map((d) => {
    const tf = new Map<string, number>();
    const words = tokens(d.text);
    for (const w of words) tf.set(w, (tf.get(w) ?? 0) + 1);
    return { id: d.id, tf, length: words.length };
  });
  const df = new Map<string, number>();
  for (const d of tfs) for (const w of d.tf.keys()) df.set(w, (df.get(w) ?? 0) + 1);
  const avg = tfs.reduce((s, d) => s + d.length, 0) / Math.max(1, tfs.length);
  return (query: string, k: number): string[] => {
    const terms = [...new Set(tokens(query))];
    return tfs
      .map((d) => {
        let score = 0;
        for (const t of terms) {
          const f = d.tf.get(t) ?? 0;
          if (f === 0) continue;
          const n = df.get(t)!;
          score +=
            Math.log(1 + (tfs.length - n + 0.5) / (n + 0.5)) *
            ((f * (k1 + 1)) / (f + k1 * (1 - b + (b * d.length) / avg)));
        }
        return { id: d.id, score };
      })
      .filter((d) => d.score > 0)
      .sort((x, y) => y.score - x.score)
      .slice(0, k)
      .map((d) => d.id);
  };
}
