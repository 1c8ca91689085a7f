/**
 * What kind of thing a sentence says, found without a model: a decision, an instruction or
 * preference, an open task (a request, a commitment, a deadline), a person's role, or an error and
 * its cause. The extractive summary keeps these sentences verbatim; the quality guard checks that a
 * model summary kept the decisions and instructions among them.
 */

/** The summary section a statement belongs to. */
export type StatementKind = 'decisions' | 'instructions' | 'tasks' | 'people' | 'errors';

/** Who said it: instructions and preferences are taken from the user (and from a summary's lines) only. */
export type Speaker = 'user' | 'assistant' | 'summary';

const DECISION = new RegExp(
  [
    String.raw`\blet'?s decide\b`,
    String.raw`\b(?:we|i)(?:'ve| have)? decided\b`,
    String.raw`\bdecided (?:to|on|that|against)\b`,
    String.raw`\bdecision\s*:`,
    String.raw`\blet'?s (?:go with|use|not|stick with|switch to|keep)\b`,
    String.raw`\bwe(?:'ll| will) (?:use|go with|stick with|switch to)\b`,
    String.raw`\bgoing with\b`,
    String.raw`\bwe (?:chose|picked)\b`,
    String.raw`\bsettled on\b`,
    String.raw`\bagreed (?:to|on|that)\b`,
  ].join('|'),
  'i',
);
/** "Use X instead of Y" said by the user is a choice even without the word "decide". */
const USER_CHOICE = /\b(?:use|switch to|go with|move to)\b.*\binstead of\b/i;

const REMEMBER =
  /\b(?:remember (?:that|this|to)|please remember|remember\s*:|don't forget|do not forget|write (?:that|this|it) down|note (?:that|this) down|make a note|keep in mind|for the record|from now on|going forward|from here on)\b/i;
/** Imperative always/never ("Always run the linter", "you should never push to main"), not "it never worked". */
const ALWAYS_NEVER = /^(?:please\s+)?(?:always|never)\b|\b(?:you|we)\s+(?:should\s+|must\s+)?(?:always|never)\b/i;
const IMPERATIVE = /^(?:please\s+)?(?:do not|don't|make sure|be sure to)\b/i;
const PREFERENCE =
  /\bI(?:'d| would)? (?:prefer|rather)\b|\bI (?:don't |do not )?(?:like|love|hate) (?:it )?when\b|\bmy preference\b|\bprefer\b.*\bover\b|^please (?:avoid|stop)\b/i;

const TASK = [/^[-*]?\s*\[ \]\s+(.+)$/, /\bTODO\b[:\s-]*(.+)$/, /^(?:[-*]\s*)?next\s*:\s*(.+)$/i];
/** A commitment: "I will…", "we'll…"; "I will not…" is a refusal, not a task. */
const COMMITMENT = /\b(?:I|we)(?:'ll| will| shall)\s+(?!not\b|never\b)(.+)$/i;
/** A request of the user's, or a question asking for work ("Can you…?"). */
const REQUEST = /^(?:please|can you|could you|would you|will you|I need you to|I want you to|we need to|I need)\b/i;
const WEEKDAY = '(?:mon|tues|wednes|thurs|fri|satur|sun)day';
const MONTH = '(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\\.?\\s+\\d{1,2}';
const DEADLINE = new RegExp(
  `\\b(?:deadline|due (?:on|by|date)|no later than|(?:by|before|until) (?:${WEEKDAY}|tomorrow|tonight|noon|eod|eow|end of (?:the )?(?:day|week|month|quarter|sprint)|${MONTH}|\\d{4}-\\d\\d-\\d\\d|\\d{1,2}(?::\\d\\d)?\\s*(?:am|pm)))\\b`,
  'i',
);

const ROLE_WORDS =
  '(?:lead|manager|owner|engineer|admin|administrator|DBA|contact|reviewer|architect|PM|CTO|CEO|CFO|on-call|designer|maintainer|head|director|lawyer|counsel|accountant|customer|client|approver|sponsor|analyst|tester|QA|SRE|developer)';
/** "Dana is our DBA", "Priya owns billing", "ask Tom": a capitalised name with a role. */
const PERSON_ROLE = new RegExp(
  `\\b([A-Z][a-z]+(?: [A-Z][a-z]+)?)(?:\\s*\\([^)]*\\))? (?:is|was|will be|has been) (?:our|the|their|my|your|a|an) (?:[\\w-]+ ){0,3}${ROLE_WORDS}\\b|\\b([A-Z][a-z]+(?: [A-Z][a-z]+)?) (?:owns|leads|manages|approves|signs off|is responsible for|is in charge of|is on call|reports to)\\b|\\b(?:ask|ping|cc|loop in|escalate to) ([A-Z][a-z]+)\\b`,
);
/** Capitalised words that start sentences, not names. */
const NOT_NAMES = new Set([
  'This',
  'That',
  'It',
  'There',
  'Here',
  'What',
  'Which',
  'Who',
  'He',
  'She',
  'They',
  'We',
  'You',
  'The',
  'A',
  'An',
  'One',
  'Our',
  'My',
  'Your',
  'Their',
  'Its',
  'Everything',
  'Nothing',
  'Someone',
  'Nobody',
]);

const ERROR =
  /\b(?:error|exception|fail(?:ed|s|ure|ing)?|crash(?:ed|es)?|timed out|timeout|deadlock(?:ed)?|panic(?:ked)?|broke|broken|bug|outage|regression)\b/i;
const CAUSE = /\b(?:because|caused by|due to|root cause|the cause|the reason|that's why|which is why|turned out)\b/i;
const ERROR_LINE = /^(?:error|fatal|exception|panic)\b\s*[:!]/i;
const DONE = [/^[-*]?\s*\[x\]\s+(.+)$/i, /\b(?:DONE|[Dd]one|[Cc]ompleted|[Ff]ixed|[Ff]inished)\s*:\s*(.+)$/];

function isQuestion(statement: string): boolean {
  return /\?["')\]]*$/.test(statement.trim());
}

function namesPerson(statement: string): boolean {
  const m = PERSON_ROLE.exec(statement);
  const name = m ? (m[1] ?? m[2] ?? m[3])! : undefined;
  return name !== undefined && !NOT_NAMES.has(name.split(' ')[0]!);
}

/**
 * The kind of one sentence said by `speaker`, or undefined when it is none of them. Order decides
 * a sentence that is several things: a decision, then an instruction or preference, a person, an
 * error, a task. A question is at most a request ("Can you…?"), never a decision.
 *
 * @example statementKind("Let's decide: use advisory locks per account.", 'user') // 'decisions'
 */
export function statementKind(statement: string, speaker: Speaker): StatementKind | undefined {
  const s = statement.trim();
  if (!s) return undefined;
  if (isQuestion(s)) return speaker !== 'assistant' && REQUEST.test(s) ? 'tasks' : undefined;
  const fromUser = speaker !== 'assistant';
  if (DECISION.test(s) || (fromUser && USER_CHOICE.test(s))) return 'decisions';
  if (REMEMBER.test(s) || (fromUser && (ALWAYS_NEVER.test(s) || IMPERATIVE.test(s) || PREFERENCE.test(s))))
    return 'instructions';
  if (namesPerson(s)) return 'people';
  if (ERROR_LINE.test(s) || (ERROR.test(s) && CAUSE.test(s))) return 'errors';
  if (taskBody(s, true) !== undefined || DEADLINE.test(s) || (fromUser && REQUEST.test(s))) return 'tasks';
  return undefined;
}

/** The work a task statement names (what a later "done" line matches), or undefined when it names none. */
export function taskBody(statement: string, allowCommitments: boolean): string | undefined {
  const m = TASK.map((p) => p.exec(statement)).find((x) => x) ?? (allowCommitments ? COMMITMENT.exec(statement) : null);
  return m ? m[1] : undefined;
}

/** The work a "done" statement closes ("Done: X", "[x] X"), or undefined. */
export function doneBody(statement: string): string | undefined {
  return DONE.map((p) => p.exec(statement)).find((m) => m)?.[1];
}

/** True when a task statement carries a deadline: it outranks other tasks when the summary is full. */
export function hasDeadline(statement: string): boolean {
  return DEADLINE.test(statement);
}

/** A request with no TODO, commitment or deadline in it ("Please check X"): the newest few matter. */
export function isPlainRequest(statement: string): boolean {
  return REQUEST.test(statement.trim()) && taskBody(statement, true) === undefined && !DEADLINE.test(statement);
}

/** "Write that down.", "Remember this.": a sentence whose content is the one before it. */
const BACK_REFERENCE =
  /^(?:please\s+)?(?:write (?:that|this|it) down|remember (?:that|this|it)|note (?:that|this)(?: down)?|don't forget (?:that|this|it)|keep (?:that|this|it) in mind)\s*[.!]*$/i;

/**
 * The sentences of a text, one per item: each line split at sentence ends, bullets stripped. A
 * back-reference ("Write that down.") is joined to the sentence before it, so the kept item says
 * what was to be written down.
 */
export function statementsOf(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const l = line.trim();
    if (!l) continue;
    for (const sentence of l.split(/(?<=[.!?])\s+(?=[A-Z"“])/)) {
      if (BACK_REFERENCE.test(sentence) && out.length > 0) out[out.length - 1] = `${out[out.length - 1]} ${sentence}`;
      else out.push(sentence);
    }
  }
  return out;
}
