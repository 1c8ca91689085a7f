import { DEFAULTS } from '../../src/config/defaults';
import { InvalidTimeZoneError } from '../../src/sessions/errors';
import {
  evaluateFreshness,
  isKnownTimeZone,
  isSystemEvent,
  mostRecentDailyReset,
  parseResetCommand,
  sessionResetPolicySchema,
  type SessionEventKind,
  type SessionResetPolicyInput,
} from '../../src/sessions/lifecycle';

const at = (iso: string) => new Date(iso);

describe('mostRecentDailyReset', () => {
  // Local times in the comments; 2025 DST changes: Berlin 30 Mar 02:00→03:00 and 26 Oct 03:00→02:00,
  // New York 9 Mar 02:00→03:00 and 2 Nov 02:00→01:00.
  const cases: Array<[string, string, number, string, string]> = [
    ['Berlin 03:59 CEST, first day of summer time', 'Europe/Berlin', 4, '2025-03-30T01:59:00Z', '2025-03-29T03:00:00Z'],
    ['Berlin 04:00 CEST exactly', 'Europe/Berlin', 4, '2025-03-30T02:00:00Z', '2025-03-30T02:00:00Z'],
    ['Berlin 03:30 CEST the day after', 'Europe/Berlin', 4, '2025-03-31T01:30:00Z', '2025-03-30T02:00:00Z'],
    [
      'Berlin 03:59:59 CET, first day of winter time',
      'Europe/Berlin',
      4,
      '2025-10-26T02:59:59Z',
      '2025-10-25T02:00:00Z',
    ],
    ['Berlin 04:00 CET exactly', 'Europe/Berlin', 4, '2025-10-26T03:00:00Z', '2025-10-26T03:00:00Z'],
    ['Berlin local midnight', 'Europe/Berlin', 4, '2025-01-15T23:00:00Z', '2025-01-15T03:00:00Z'],
    ['Berlin one ms before midnight', 'Europe/Berlin', 4, '2025-01-15T22:59:59.999Z', '2025-01-15T03:00:00Z'],
    [
      'Berlin 02:00 that does not exist: the boundary is 03:00 CEST',
      'Europe/Berlin',
      2,
      '2025-03-30T01:00:00Z',
      '2025-03-30T01:00:00Z',
    ],
    ['Berlin 01:59:59 CET before the gap', 'Europe/Berlin', 2, '2025-03-30T00:59:59Z', '2025-03-29T01:00:00Z'],
    [
      'Berlin first 02:00 (CEST) of the repeated hour',
      'Europe/Berlin',
      2,
      '2025-10-26T00:00:00Z',
      '2025-10-26T00:00:00Z',
    ],
    [
      'Berlin second 02:30 (CET) still counts from the first 02:00',
      'Europe/Berlin',
      2,
      '2025-10-26T01:30:00Z',
      '2025-10-26T00:00:00Z',
    ],
    [
      'New York 03:59 EDT, first day of summer time',
      'America/New_York',
      4,
      '2025-03-09T07:59:00Z',
      '2025-03-08T09:00:00Z',
    ],
    ['New York 04:00 EDT exactly', 'America/New_York', 4, '2025-03-09T08:00:00Z', '2025-03-09T08:00:00Z'],
    [
      'New York 03:59 EST, first day of winter time',
      'America/New_York',
      4,
      '2025-11-02T08:59:00Z',
      '2025-11-01T08:00:00Z',
    ],
    ['New York 04:00 EST exactly', 'America/New_York', 4, '2025-11-02T09:00:00Z', '2025-11-02T09:00:00Z'],
    [
      'New York 02:00 that does not exist: the boundary is 03:00 EDT',
      'America/New_York',
      2,
      '2025-03-09T07:00:00Z',
      '2025-03-09T07:00:00Z',
    ],
    ['New York 01:59 EST before the gap', 'America/New_York', 2, '2025-03-09T06:59:00Z', '2025-03-08T07:00:00Z'],
    [
      'New York second 01:30 (EST) counts from the first 01:00 (EDT)',
      'America/New_York',
      1,
      '2025-11-02T06:30:00Z',
      '2025-11-02T05:00:00Z',
    ],
    ['New York first 01:00 (EDT) exactly', 'America/New_York', 1, '2025-11-02T05:00:00Z', '2025-11-02T05:00:00Z'],
    ['New York hour 0 at local midnight', 'America/New_York', 0, '2025-06-01T04:00:00Z', '2025-06-01T04:00:00Z'],
    [
      'New York hour 0 one second before midnight',
      'America/New_York',
      0,
      '2025-06-01T03:59:59Z',
      '2025-05-31T04:00:00Z',
    ],
    ['Kolkata (+05:30) 05:30', 'Asia/Kolkata', 4, '2025-06-01T00:00:00Z', '2025-05-31T22:30:00Z'],
    ['UTC 04:00 exactly', 'UTC', 4, '2025-06-01T04:00:00Z', '2025-06-01T04:00:00Z'],
  ];

  it.each(cases)('%s', (_label, timeZone, hour, now, expected) => {
    expect(mostRecentDailyReset(at(now), hour, timeZone).toISOString()).toBe(at(expected).toISOString());
  });

  it('throws InvalidTimeZoneError for an unknown zone', () => {
    expect(() => mostRecentDailyReset(at('2025-06-01T00:00:00Z'), 4, 'Mars/Olympus')).toThrow(InvalidTimeZoneError);
  });
});

describe('evaluateFreshness', () => {
  const berlin: SessionResetPolicyInput = { timeZone: 'Europe/Berlin' };
  type Case = [string, { start: string; last?: string | null }, string, SessionResetPolicyInput, string | undefined];
  const cases: Case[] = [
    [
      'stale (daily) after 04:00 CEST on the DST day',
      { start: '2025-03-29T20:00:00Z' },
      '2025-03-30T02:30:00Z',
      berlin,
      'daily',
    ],
    [
      'fresh before 04:00 local (03:59 CEST)',
      { start: '2025-03-29T20:00:00Z' },
      '2025-03-30T01:59:00Z',
      berlin,
      undefined,
    ],
    [
      'fresh when started exactly at the boundary',
      { start: '2025-03-30T02:00:00Z' },
      '2025-03-30T10:00:00Z',
      berlin,
      undefined,
    ],
    [
      'stale when started 1 ms before the boundary',
      { start: '2025-03-30T01:59:59.999Z' },
      '2025-03-30T02:00:00Z',
      berlin,
      'daily',
    ],
    [
      'stale (daily) after 04:00 CET on the fall-back day, an hour later in UTC than the day before',
      { start: '2025-10-25T02:30:00Z' },
      '2025-10-26T03:00:00Z',
      berlin,
      'daily',
    ],
    [
      'fresh at 03:59 CET on the fall-back day',
      { start: '2025-10-25T02:30:00Z' },
      '2025-10-26T02:59:00Z',
      berlin,
      undefined,
    ],
    [
      'daily is measured from the session start, not the last interaction (as OpenClaw)',
      { start: '2025-06-01T01:00:00Z', last: '2025-06-01T03:00:00Z' },
      '2025-06-01T04:00:00Z',
      { timeZone: 'Europe/Berlin' },
      'daily',
    ],
    ['defaults to 04:00 UTC', { start: '2025-06-01T03:59:00Z' }, '2025-06-01T04:00:00Z', {}, 'daily'],
    [
      'idle: fresh at exactly idleMinutes',
      { start: '2025-06-01T05:00:00Z', last: '2025-06-01T06:00:00Z' },
      '2025-06-01T07:00:00Z',
      { ...berlin, idleMinutes: 60 },
      undefined,
    ],
    [
      'idle: stale 1 ms after idleMinutes',
      { start: '2025-06-01T05:00:00Z', last: '2025-06-01T06:00:00Z' },
      '2025-06-01T07:00:00.001Z',
      { ...berlin, idleMinutes: 60 },
      'idle',
    ],
    [
      'idle: measured from the start when there was no interaction yet',
      { start: '2025-06-01T05:00:00Z', last: null },
      '2025-06-01T06:01:00Z',
      { ...berlin, idleMinutes: 60 },
      'idle',
    ],
    [
      'both stale: idle expired (01:00 CEST) before the daily boundary (04:00 CEST)',
      { start: '2025-06-01T21:00:00Z', last: '2025-06-01T21:00:00Z' },
      '2025-06-02T03:00:00Z',
      { ...berlin, idleMinutes: 120 },
      'idle',
    ],
    [
      'both stale: the daily boundary (04:00 CEST) came before idle expiry (11:30 CEST)',
      { start: '2025-06-01T20:00:00Z', last: '2025-06-01T23:30:00Z' },
      '2025-06-02T10:00:00Z',
      { ...berlin, idleMinutes: 600 },
      'daily',
    ],
    [
      'New York: idle expiry inside the repeated hour is exact in UTC',
      { start: '2025-11-02T05:10:00Z', last: '2025-11-02T05:10:00Z' },
      '2025-11-02T06:10:00.001Z',
      { timeZone: 'America/New_York', idleMinutes: 60 },
      'idle',
    ],
    [
      'New York: fresh at 03:59 EST though 04:00 EDT would have passed',
      { start: '2025-11-01T12:00:00Z' },
      '2025-11-02T08:59:00Z',
      { timeZone: 'America/New_York' },
      undefined,
    ],
    [
      'mode idle ignores the daily boundary',
      { start: '2025-06-01T01:00:00Z', last: '2025-06-01T03:30:00Z' },
      '2025-06-01T04:30:00Z',
      { mode: 'idle', idleMinutes: 120 },
      undefined,
    ],
    [
      'mode none is never stale by time',
      { start: '2020-01-01T00:00:00Z', last: '2020-01-01T00:00:00Z' },
      '2025-06-01T00:00:00Z',
      { mode: 'none', idleMinutes: 1 },
      undefined,
    ],
    [
      'timestamps in the future (clock skew) count as now',
      { start: '2025-06-01T12:00:00Z', last: '2025-06-01T12:00:00Z' },
      '2025-06-01T10:00:00Z',
      { idleMinutes: 1 },
      undefined,
    ],
  ];

  it.each(cases)('%s', (_label, times, now, policy, reason) => {
    const lastInteractionAt = typeof times.last === 'string' ? at(times.last) : times.last;
    const session = { sessionStartedAt: at(times.start), lastInteractionAt };
    const result = evaluateFreshness(session, { now: at(now), policy });
    expect(result.fresh).toBe(reason === undefined);
    expect(result.reason).toBe(reason);
  });

  it('reports the boundaries it checked', () => {
    const result = evaluateFreshness(
      { sessionStartedAt: at('2025-06-01T20:00:00Z'), lastInteractionAt: at('2025-06-01T23:30:00Z') },
      { now: at('2025-06-02T10:00:00Z'), policy: { ...berlin, idleMinutes: 600 } },
    );
    expect(result.dailyResetAt?.toISOString()).toBe('2025-06-02T02:00:00.000Z');
    expect(result.idleExpiresAt?.toISOString()).toBe('2025-06-02T09:30:00.000Z');
  });

  it('is stale with reason manual when a reset was requested, even when fresh by time', () => {
    const session = { sessionStartedAt: at('2025-06-01T10:00:00Z'), lastInteractionAt: at('2025-06-01T10:00:00Z') };
    expect(
      evaluateFreshness(session, { now: at('2025-06-01T10:01:00Z'), policy: {}, resetRequested: true }),
    ).toMatchObject({
      fresh: false,
      reason: 'manual',
    });
  });

  it('uses the default reset hour from defaults.ts', () => {
    const result = evaluateFreshness(
      { sessionStartedAt: at('2025-06-01T00:00:00Z') },
      { now: at('2025-06-01T12:00:00Z'), policy: {} },
    );
    expect(result.dailyResetAt?.getUTCHours()).toBe(DEFAULTS.dailyResetHour);
  });
});

describe('sessionResetPolicySchema', () => {
  it('fills in the defaults', () => {
    expect(sessionResetPolicySchema.parse({})).toEqual({
      mode: 'daily',
      dailyResetHour: DEFAULTS.dailyResetHour,
      timeZone: 'UTC',
    });
  });

  it.each([
    ['an unknown time zone', { timeZone: 'Europe/Atlantis' }, 'timeZone'],
    ['an hour of 24', { dailyResetHour: 24 }, 'dailyResetHour'],
    ['fractional idle minutes', { idleMinutes: 1.5 }, 'idleMinutes'],
    ['mode idle without idleMinutes', { mode: 'idle' }, 'idleMinutes'],
  ])('rejects %s', (_label, input, path) => {
    const result = sessionResetPolicySchema.safeParse(input);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual([path]);
  });
});

describe('isKnownTimeZone', () => {
  it.each([
    ['Europe/Berlin', true],
    ['America/New_York', true],
    ['UTC', true],
    ['Europe/Atlantis', false],
    ['', false],
  ])('%s → %s', (zone, known) => {
    expect(isKnownTimeZone(zone)).toBe(known);
  });
});

describe('parseResetCommand', () => {
  it.each([
    ['/new', { command: '/new' }],
    ['/reset', { command: '/reset' }],
    ['  /new  ', { command: '/new' }],
    ['/new summarize the report', { command: '/new', remainder: 'summarize the report' }],
    ['/reset\nfirst line\nsecond line', { command: '/reset', remainder: 'first line\nsecond line' }],
    ['/new\t  hello  ', { command: '/new', remainder: 'hello' }],
  ])('reads %j', (text, expected) => {
    expect(parseResetCommand(text)).toEqual(expected);
  });

  it.each(['/newsletter', '/resetting', 'new', 'please /new', '/NEW', '/compact', '', 'hello /reset'])(
    'ignores %j',
    (text) => {
      expect(parseResetCommand(text)).toBeUndefined();
    },
  );
});

describe('isSystemEvent', () => {
  it.each([
    ['user_message', false],
    ['heartbeat', true],
    ['cron', true],
    ['exec_notice', true],
    ['bookkeeping', true],
  ] as Array<[SessionEventKind, boolean]>)('%s → %s', (kind, system) => {
    expect(isSystemEvent(kind)).toBe(system);
  });
});
