/**
 * On/off environment variables (KEEL_PROMPT_CACHING, KEEL_ENCRYPT_AT_REST, …) share one grammar, so
 * `=1` or `=no` means the same everywhere. A word outside it is handed on as it is, for the config
 * schema to refuse with the variable's name: guessing would turn `KEEL_ENCRYPT_AT_REST=enabled` into
 * plaintext without a word.
 */
import { z } from 'zod';

const ON = new Set(['on', 'true', '1', 'yes']);
const OFF = new Set(['off', 'false', '0', 'no']);

/** What a switch says to a word it does not know. */
export function unknownSwitchWord(value: unknown): string {
  return `use on or off (also true/false, 1/0, yes/no), not ${JSON.stringify(value)}`;
}

/** A config field that is an on/off switch: a boolean, or refused with the accepted words. */
export function switchField() {
  return z.boolean({ error: (issue) => unknownSwitchWord(issue.input) });
}

/** The switch's value: undefined when unset or empty, a boolean for a known word, else the word itself. */
export function envSwitch(value: string | undefined): boolean | string | undefined {
  const word = value?.trim().toLowerCase();
  if (!word) return undefined;
  if (ON.has(word)) return true;
  if (OFF.has(word)) return false;
  return value;
}
