/**
 * A generated multi-session conversation between two friends, with questions whose answers a plain
 * keyword search finds hard, as real conversations make them:
 * - answers spread over two turns: one asks "what did you bake for the fair?", the other answers
 *   "lemon tarts" (the question's words are in the asking turn, the answer in the next);
 * - paraphrase: the question says "fly" where the turn said "flew", "buy" where it said "bought";
 * - words shared across unrelated sessions: places, people and occasions come back in small talk
 *   and in the other friend's plans, so a question's words match many turns.
 * Deterministic for a seed: personas, events with dates, paraphrased questions, evidence ids.
 */
import type { RecallDataset } from './dataset';
import { prng } from '../../test/fixtures/generate';

type Rand = () => number;

const pick = <T>(rand: Rand, list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;

const FRIENDS = ['Nadia', 'Tomas'] as const;
const PEOPLE = ['Maja', 'Ingrid', 'Okonkwo', 'Priya', 'Lars', 'Benedikt', 'Yusuf', 'Carmen'];
const PLACES = [
  'Porto',
  'the lake',
  'the harbour',
  'the old mill',
  'Lisbon',
  'the climbing gym',
  'the botanical garden',
  'the ski lodge',
  'the farmers market',
  'Bergen',
];
/** Journeys told with an irregular past the question asks about in the present. */
const TRAVEL = [
  { past: 'flew', base: 'fly' },
  { past: 'drove', base: 'drive' },
  { past: 'went', base: 'go' },
  { past: 'rode', base: 'ride' },
] as const;
const OCCASIONS = [
  'school fair',
  'book club',
  'office party',
  'potluck',
  'birthday dinner',
  'charity run',
  'wedding',
  'street festival',
];
const MAKES = [
  {
    verb: 'bake',
    asks: 'What did you end up baking for the',
    answers: ['Lemon tarts', 'A rye loaf with caraway', 'Cinnamon knots', 'A plum cake'],
  },
  {
    verb: 'cook',
    asks: 'So what did you cook for the',
    answers: ['A big pot of lentil curry', 'Paella with mussels', 'Stuffed peppers', 'A mushroom risotto'],
  },
  {
    verb: 'wear',
    asks: 'And what did you wear to the',
    answers: ['My green velvet jacket', 'The yellow dress from Maja', 'A borrowed grey suit', 'The striped jumpsuit'],
  },
  {
    verb: 'bring',
    asks: 'What did you bring to the',
    answers: ['A crate of cider', 'Homemade lemonade', 'A board game nobody knew', 'Flowers from the garden'],
  },
] as const;
const PURCHASES = [
  { item: 'a secondhand cello', purpose: 'the evening music lessons' },
  { item: 'a tent with two porches', purpose: 'the camping trip in June' },
  { item: 'a standing desk', purpose: 'working from home' },
  { item: 'hiking boots', purpose: 'the mountain trail' },
  { item: 'a sewing machine', purpose: 'the costume project' },
  { item: 'an e-bike', purpose: 'the commute to the studio' },
] as const;
const HABITS = [
  { doing: 'swimming laps', days: 'Mondays and Thursdays', asks: 'swim laps' },
  { doing: 'practising the cello', days: 'every evening after nine', asks: 'practise the cello' },
  { doing: 'running along the river', days: 'weekend mornings', asks: 'run along the river' },
  { doing: 'calling my grandmother', days: 'Sunday afternoons', asks: 'call her grandmother' },
] as const;
const JOBS = [
  'a structural engineer',
  'a paediatric nurse',
  'a sound designer',
  'a ferry captain',
  'a patent lawyer',
  'a beekeeper',
];
const SMALL_TALK = [
  (o: string, p: string) => `The weather at ${p} was lovely this week, we should plan something there.`,
  (o: string) => `Work has been busy, but I am looking forward to the ${o} next month.`,
  (o: string, p: string) => `Did you hear that the ${o} might move to ${p} this year?`,
  () => `Same here, it has been a long week. How is the family doing?`,
  (o: string, p: string) => `I keep thinking about ${p}. Maybe we could go together after the ${o}.`,
  () => `Everyone is fine, thanks for asking! The kids keep me on my toes.`,
  (o: string) => `Are you going to the ${o} again? I heard it was great last time.`,
];

interface Builder {
  readonly turns: RecallDataset['sessions'][number]['turns'];
  readonly questions: RecallDataset['questions'];
  readonly session: number;
  readonly rand: Rand;
  /** Facts told already (by whom, about what): a question must have one answer. */
  readonly told: Set<string>;
}

/** A pick from `list` making a fact not told before, by its key; undefined when every one was told. */
function fresh<T>(b: Builder, list: readonly T[], key: (item: T) => string): T | undefined {
  const left = list.filter((item) => !b.told.has(key(item)));
  if (left.length === 0) return undefined;
  const item = pick(b.rand, left);
  b.told.add(key(item));
  return item;
}

function say(b: Builder, speaker: string, text: string): string {
  const id = `D${b.session}:${b.turns.length + 1}`;
  b.turns.push({ id, speaker, text });
  return id;
}

/** One friend asks what the other made for an occasion; the answer is in the next turn only. */
function madeFor(b: Builder, who: string, other: string): void {
  const make = pick(b.rand, MAKES);
  const occasion = fresh(b, OCCASIONS, (o) => `${who} ${make.verb} ${o}`);
  if (!occasion) return;
  say(b, other, `${make.asks} ${occasion}?`);
  const answer = say(
    b,
    who,
    `${pick(b.rand, make.answers)}. ${pick(b.rand, ['It went down well.', 'Nobody complained!', 'I was nervous but it worked out.', 'I would do it again.'])}`,
  );
  b.questions.push({
    question: `What did ${who} ${make.verb} for the ${occasion}?`,
    evidence: [answer],
    category: 'answer-in-next-turn',
  });
}

/** A journey told with an irregular past; the other friend's plans mention the same place. */
function journey(b: Builder, who: string, other: string): void {
  const travel = pick(b.rand, TRAVEL);
  const place = fresh(b, PLACES, (p) => `${who} ${travel.base} ${p}`);
  if (!place) return;
  const person = pick(b.rand, PEOPLE);
  const told = say(
    b,
    who,
    `Last weekend I ${travel.past} to ${place} with ${person}. ${pick(b.rand, ['It rained the whole time.', 'We stayed at a tiny guesthouse.', 'The view was unreal.', 'We got lost twice.'])}`,
  );
  say(
    b,
    other,
    `${who}, I would love to ${travel.base} to ${place} someday too. Was ${person} happy to ${travel.base} with you?`,
  );
  say(b, who, `Very happy, we talked the whole way.`);
  b.questions.push({
    question: `When did ${who} ${travel.base} to ${place}, and with whom?`,
    evidence: [told],
    category: 'paraphrase',
  });
}

/** A purchase told as "bought", asked as "buy". */
function purchase(b: Builder, who: string, other: string): void {
  const p = fresh(b, PURCHASES, (x) => `${who} buy ${x.purpose}`);
  if (!p) return;
  const told = say(b, who, `I finally bought ${p.item} for ${p.purpose}.`);
  say(b, other, `Nice! I still need to buy something for ${p.purpose} myself.`);
  b.questions.push({ question: `What did ${who} buy for ${p.purpose}?`, evidence: [told], category: 'paraphrase' });
}

/** A standing habit, asked about in other words. */
function habit(b: Builder, who: string): void {
  const h = fresh(b, HABITS, (x) => `${who} ${x.asks}`);
  if (!h) return;
  const told = say(b, who, `From now on I am ${h.doing} on ${h.days}, no excuses.`);
  b.questions.push({ question: `On which days does ${who} ${h.asks}?`, evidence: [told], category: 'preference' });
}

/** A person's job, stated once. */
function job(b: Builder, who: string, other: string): void {
  const person = fresh(b, PEOPLE, (p) => `job of ${p}`);
  if (!person) return;
  const work = pick(b.rand, JOBS);
  say(b, other, `How is ${person} doing these days?`);
  const told = say(
    b,
    who,
    `${person} is great, ${person === 'Maja' ? 'she' : 'they'} started working as ${work} in the spring.`,
  );
  b.questions.push({ question: `What does ${person} do for work?`, evidence: [told], category: 'single-hop' });
}

const EVENTS = [madeFor, madeFor, journey, journey, purchase, habit, job];

/** The generated conversation: `sessions` sessions a week apart, each with small talk around a few events. */
export function generateRecallDataset(opts: { seed?: number; sessions?: number } = {}): RecallDataset {
  const seed = opts.seed ?? 7;
  const rand = prng(seed);
  const sessions: RecallDataset['sessions'] = [];
  const questions: RecallDataset['questions'] = [];
  const told = new Set<string>();
  const start = Date.UTC(2025, 0, 5, 18, 30);
  for (let s = 1; s <= (opts.sessions ?? 20); s++) {
    const b: Builder = { turns: [], questions, session: s, rand, told };
    const events = 3 + Math.floor(rand() * 3);
    for (let e = 0; e < events; e++) {
      const who = pick(rand, FRIENDS);
      const other = FRIENDS.find((f) => f !== who)!;
      const talk = pick(rand, SMALL_TALK);
      say(b, other, talk(pick(rand, OCCASIONS), pick(rand, PLACES)));
      say(b, who, pick(rand, SMALL_TALK)(pick(rand, OCCASIONS), pick(rand, PLACES)));
      pick(rand, EVENTS)(b, who, other);
    }
    sessions.push({
      date: new Date(start + (s - 1) * 7 * 86_400_000 + Math.floor(rand() * 3) * 3_600_000).toISOString(),
      turns: b.turns,
    });
  }
  return { name: `generated (seed ${seed})`, sessions, questions };
}
