/**
 * A multi-session conversation with questions about it, each naming the turns that hold its answer
 * (evidence). The recall bench reads this shape, as generated (`generate.ts`) or from a file: Keel's
 * own JSON shape, or a public benchmark in the LoCoMo layout (an array of samples with `conversation`
 * and `qa`), converted here.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

const turnSchema = z.object({ id: z.string().min(1), speaker: z.string().min(1), text: z.string() });
const sessionSchema = z.object({
  date: z.string().refine((d) => !Number.isNaN(Date.parse(d)), 'an ISO date'),
  turns: z.array(turnSchema).min(1),
});
const questionSchema = z.object({
  question: z.string().min(1),
  evidence: z.array(z.string().min(1)).min(1),
  category: z.string().optional(),
});

/** Keel's shape: sessions in time order, questions with evidence turn ids. */
export const recallDatasetSchema = z.object({
  name: z.string(),
  sessions: z.array(sessionSchema).min(1),
  questions: z.array(questionSchema).min(1),
});

export type RecallDataset = z.infer<typeof recallDatasetSchema>;

const locomoTurn = z.object({
  speaker: z.string(),
  dia_id: z.string(),
  text: z.string(),
  blip_caption: z.string().optional(),
});
const locomoSample = z.object({
  sample_id: z.string().optional(),
  conversation: z.record(z.string(), z.unknown()),
  qa: z.array(
    z.object({
      question: z.string(),
      evidence: z.array(z.string()).optional(),
      category: z.union([z.number(), z.string()]).optional(),
    }),
  ),
});

/**
 * Reads a dataset file: Keel's shape, or LoCoMo's (`sample` picks the conversation, default the
 * first). LoCoMo questions without evidence (its adversarial category) are left out: nothing can be
 * recalled for them. A shared photo's caption is kept with its turn, as a chat import would show it.
 */
export function loadRecallDataset(path: string, sample = 0): RecallDataset {
  if (statSync(path).isDirectory()) return loadBeamChat(path);
  const raw: unknown = JSON.parse(readFileSync(path, 'utf8'));
  const own = recallDatasetSchema.safeParse(raw);
  if (own.success) return own.data;
  const samples = z.array(locomoSample).safeParse(Array.isArray(raw) ? raw : [raw]);
  if (!samples.success)
    throw new Error(
      `${path}: neither Keel's recall dataset shape (${own.error.issues[0]?.message}) nor LoCoMo's (${samples.error.issues[0]?.message})`,
    );
  const picked = samples.data[sample];
  if (!picked) throw new Error(`${path}: no sample ${sample} (it has ${samples.data.length})`);
  return fromLocomo(picked, `${path}#${picked.sample_id ?? sample}`);
}

function fromLocomo(s: z.infer<typeof locomoSample>, name: string): RecallDataset {
  const sessions: RecallDataset['sessions'] = [];
  for (let n = 1; Array.isArray(s.conversation[`session_${n}`]); n++) {
    const turns = z.array(locomoTurn).parse(s.conversation[`session_${n}`]);
    const when = String(s.conversation[`session_${n}_date_time`] ?? '');
    sessions.push({
      date: locomoDate(when),
      turns: turns.map((t) => ({
        id: t.dia_id,
        speaker: t.speaker,
        text: t.blip_caption ? `${t.text} [shares a photo: ${t.blip_caption}]` : t.text,
      })),
    });
  }
  const questions = s.qa
    .filter((q) => (q.evidence?.length ?? 0) > 0)
    .map((q) => ({
      question: q.question,
      evidence: q.evidence!.flatMap((e) => e.split(/[;,\s]+/)).filter(Boolean),
      ...(q.category !== undefined ? { category: String(q.category) } : {}),
    }));
  return { name, sessions, questions };
}

/** LoCoMo writes "1:56 pm on 8 May, 2023". */
function locomoDate(text: string): string {
  const m = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})/i.exec(text);
  if (!m) throw new Error(`unreadable session date "${text}"`);
  const hour = (Number(m[1]) % 12) + (m[3]!.toLowerCase() === 'pm' ? 12 : 0);
  const date = new Date(`${m[4]} ${m[5]} ${m[6]} ${String(hour).padStart(2, '0')}:${m[2]}:00 UTC`);
  if (Number.isNaN(date.getTime())) throw new Error(`unreadable session date "${text}"`);
  return date.toISOString();
}

const beamMessage = z.object({ role: z.string(), id: z.number().int(), content: z.string() });
const beamChat = z.array(z.object({ time_anchor: z.string().nullish(), turns: z.array(z.array(beamMessage)) }));
/** `source_chat_ids`: message ids, in lists, nested lists or lists by role ("first_statement", "updated_info"). */
function beamSourceIds(sources: unknown): string[] {
  if (typeof sources === 'number') return [String(sources)];
  if (Array.isArray(sources)) return sources.flatMap(beamSourceIds);
  if (sources && typeof sources === 'object') return Object.values(sources).flatMap(beamSourceIds);
  return [];
}

/**
 * One BEAM conversation folder (`chats/<bucket>/<n>`: `chat.json` and
 * `probing_questions/probing_questions.json`). Each batch is a session dated by its time anchor; a
 * question's evidence is the chat messages its `source_chat_ids` name. Questions without sources
 * (abstention) are left out: nothing can be recalled for them.
 */
function loadBeamChat(dir: string): RecallDataset {
  const chat = beamChat.parse(JSON.parse(readFileSync(join(dir, 'chat.json'), 'utf8')));
  const probing = z
    .record(z.string(), z.array(z.looseObject({ question: z.string(), source_chat_ids: z.unknown().optional() })))
    .parse(JSON.parse(readFileSync(join(dir, 'probing_questions', 'probing_questions.json'), 'utf8')));
  let day = Date.parse('2024-01-01T09:00:00Z');
  const sessions = chat.map((batch) => {
    const anchored = batch.time_anchor ? Date.parse(batch.time_anchor.replace(/-/g, ' ') + ' UTC') : NaN;
    day = Number.isNaN(anchored) ? day + 86_400_000 : anchored;
    return {
      date: new Date(day).toISOString(),
      turns: batch.turns.flat().map((m) => ({ id: String(m.id), speaker: m.role, text: m.content })),
    };
  });
  const ids = new Set(sessions.flatMap((s) => s.turns.map((t) => t.id)));
  const questions = Object.entries(probing).flatMap(([category, list]) =>
    list.flatMap((q) => {
      const evidence = [...new Set(beamSourceIds(q.source_chat_ids))].filter((id) => ids.has(id));
      return evidence.length > 0 ? [{ question: q.question, evidence, category }] : [];
    }),
  );
  return { name: dir, sessions, questions };
}
