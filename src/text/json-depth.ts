/**
 * How deeply a JSON value nests. `JSON.parse` takes any depth, but what stores, redacts and sends a
 * value walks it recursively (redaction, `JSON.stringify`, Temporal's payload converter), and 100k
 * levels overflow the stack. Values deeper than this are refused where they enter: an imported line,
 * a model's tool input.
 */
export const MAX_JSON_DEPTH = 256;

/** True when arrays and objects nest more than `max` levels (walked without recursion). */
export function jsonDepthExceeds(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 1 }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    if (item.value === null || typeof item.value !== 'object') continue;
    if (item.depth > max) return true;
    for (const child of Object.values(item.value)) {
      if (child !== null && typeof child === 'object') stack.push({ value: child, depth: item.depth + 1 });
    }
  }
  return false;
}
