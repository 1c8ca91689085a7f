/**
 * Turns config advice into edits of keel.config.json: the agent's own section gets the recommended
 * values (so other agents keep theirs), each edit named by its JSON path with old → new. Pure: the
 * caller backs the file up, writes it and re-reads it with Keel's loader.
 */
import type { ConfigAdvice, SettingKey } from './config-advice';

export interface FileChange {
  /** JSON path in the file, e.g. `agents.ops.reserveTokens`. */
  readonly path: string;
  /** The value at that path now (undefined: not set there). */
  readonly old: unknown;
  /** The value the agent runs with now, when the path is unset (inherited or a default). */
  readonly effective?: unknown;
  readonly new: unknown;
}

export interface PlannedFile {
  readonly json: Record<string, unknown>;
  readonly changes: FileChange[];
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const ENGINE_OPTIONS: readonly SettingKey[] = ['pruningTtl', 'keepLastAssistants', 'minPrunableToolChars'];

/**
 * The file with `advice.changes` written into `agents.<agentId>`. An agent without a section gets one;
 * an agent that inherits the top level's contextEngineOptions gets a copy of them with the changes,
 * so nothing it inherited is lost. A section's workStyle, if it has one, becomes the advised style.
 */
export function planConfigChanges(file: unknown, agentId: string, advice: ConfigAdvice): PlannedFile {
  if (!isObject(file)) throw new Error('the config file is not a JSON object');
  const json: Json = structuredClone(file);
  const agents: Json = isObject(json.agents) ? json.agents : {};
  json.agents = agents;
  const section: Json = isObject(agents[agentId]) ? agents[agentId] : {};
  agents[agentId] = section;
  const prefix = `agents.${agentId}`;
  const changes: FileChange[] = [];
  const record = (path: string, old: unknown, value: unknown, effective: unknown) =>
    changes.push({ path, old, ...(old === undefined ? { effective } : {}), new: value });

  const options: Json = isObject(section.contextEngineOptions)
    ? section.contextEngineOptions
    : isObject(json.contextEngineOptions)
      ? { ...json.contextEngineOptions }
      : {};
  let optionsChanged = false;
  for (const a of advice.changes) {
    const value = a.recommended;
    if (ENGINE_OPTIONS.includes(a.key)) {
      const own = isObject(section.contextEngineOptions) ? section.contextEngineOptions[a.key] : undefined;
      record(`${prefix}.contextEngineOptions.${a.key}`, own, value, a.current ?? 'off');
      options[a.key] = value;
      optionsChanged = true;
    } else {
      record(`${prefix}.${a.key}`, section[a.key], value, a.current);
      section[a.key] = value;
    }
  }
  if (optionsChanged) section.contextEngineOptions = options;
  if (section.workStyle !== undefined && section.workStyle !== advice.style && changes.length > 0) {
    record(`${prefix}.workStyle`, section.workStyle, advice.style, undefined);
    section.workStyle = advice.style;
  }
  return { json, changes };
}

/** A change as one line: `agents.ops.reserveTokens: 20000 (inherited) → 60000`. */
export function changeLine(c: FileChange): string {
  const show = (v: unknown) => (typeof v === 'string' ? `"${v}"` : String(v));
  const old =
    c.old === undefined ? `unset (now ${c.effective === undefined ? 'default' : show(c.effective)})` : show(c.old);
  return `${c.path}: ${old} → ${show(c.new)}`;
}
