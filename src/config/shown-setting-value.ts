/**
 * A bad setting's value as an error message shows it: quoted JSON, cut short; hidden for settings
 * that hold secrets (keys, tokens, passwords, database URLs with credentials); a list or object by kind.
 *
 * @example shownSettingValue('KEEL_RESERVE_TOKENS', 'abc') // '"abc"'
 */
export function shownSettingValue(setting: string, value: unknown): string {
  if (SECRET_SETTING.test(setting)) return '(value hidden)';
  // A section is named by its path; its fields could hold secrets of their own.
  if (Array.isArray(value)) return 'a list';
  if (value !== null && typeof value === 'object') return 'an object';
  const text = value === undefined ? 'nothing' : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** The value at a zod issue's path inside the parsed input. */
export function valueAtPath(input: unknown, path: readonly PropertyKey[]): unknown {
  let at = input;
  for (const key of path) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return at;
}

const SECRET_SETTING = /api_?key|encryption_?keys$|token$|password|secret|database_?url/i;
