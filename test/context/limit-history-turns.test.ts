import { limitHistoryTurns, resolveHistoryLimit, type HistoryLimitConfig } from '../../src/context/limit-history-turns';
import type { AgentMessage } from '../../src/context/types';
import { assistant, call, result, shape, user } from './factories';

const convo: AgentMessage[] = [user('u1'), assistant('a1'), user('u2'), assistant('a2'), user('u3'), assistant('a3')];

describe('limitHistoryTurns', () => {
  it.each<[string, number | undefined, string[]]>([
    ['keeps everything from the N-th last user message on', 2, ['u:u2', 'a:a2', 'u:u3', 'a:a3']],
    ['keeps only the last user turn with limit 1', 1, ['u:u3', 'a:a3']],
    ['leaves the transcript unchanged when the limit equals the user turns', 3, shape(convo)],
    ['leaves the transcript unchanged when the limit exceeds the user turns', 10, shape(convo)],
    ['leaves the transcript unchanged for limit 0', 0, shape(convo)],
    ['leaves the transcript unchanged for a negative limit', -2, shape(convo)],
    ['leaves the transcript unchanged for an undefined limit', undefined, shape(convo)],
  ])('%s', (_rule, limit, expected) => {
    expect(shape(limitHistoryTurns(convo, limit).messages)).toEqual(expected);
  });

  it('returns the same array when nothing is cut and pairing needs nothing', () => {
    expect(limitHistoryTurns(convo, 5).messages).toBe(convo);
    expect(limitHistoryTurns(convo, undefined).messages).toBe(convo);
  });

  it('re-runs pairing repair: results orphaned by the cut are dropped', () => {
    // A displaced user turn inside a tool batch: the cut lands between a call and its result.
    const input = [user('u1'), assistant(call('c')), user('u2'), result('c'), assistant('a2')];
    const r = limitHistoryTurns(input, 1);
    expect(shape(r.messages)).toEqual(['u:u2', 'a:a2']);
    expect(r.droppedMessageCount).toBe(2);
    expect(r.pairing.droppedOrphanCount).toBe(1);
  });

  it('does not count a user message holding only native tool_result blocks as a user turn', () => {
    const nativeResult = {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'c', content: 'x' }],
    } as unknown as AgentMessage;
    const input = [user('u1'), assistant(call('c')), nativeResult, assistant('done')];
    expect(shape(limitHistoryTurns(input, 1).messages)).toEqual(['u:u1', 'a:[c]', 'r:c', 'a:done']);
  });
});

describe('resolveHistoryLimit', () => {
  const config: HistoryLimitConfig = {
    channels: {
      telegram: { historyLimit: 50, dmHistoryLimit: 20, dms: { '42': { historyLimit: 5 }, alice: {} } },
      slack: { historyLimit: 30 },
      discord: { dmHistoryLimit: 8 },
    },
  };

  it.each<[string, string, number | undefined]>([
    ['uses the per-DM override', 'agent:main:telegram:dm:42', 5],
    ['accepts "direct" as a DM kind', 'agent:main:telegram:direct:42', 5],
    ['falls back to dmHistoryLimit for a DM without an override', 'agent:main:telegram:dm:7', 20],
    ['falls back to dmHistoryLimit when the override has no limit', 'agent:main:telegram:dm:alice', 20],
    ['uses historyLimit for a group', 'agent:main:telegram:group:-100123', 50],
    ['uses historyLimit for a channel', 'agent:ops:slack:channel:C123', 30],
    ['uses historyLimit for a room', 'agent:main:slack:room:R9', 30],
    ['strips a :thread: suffix before the DM lookup', 'agent:main:telegram:dm:42:thread:99', 5],
    ['strips a :topic: suffix', 'agent:main:telegram:group:-100123:topic:7', 50],
    ['reads a DM key with an account segment', 'agent:main:telegram:bot2:direct:42', 5],
    ['matches the provider and peer case-insensitively', 'agent:main:Telegram:DM:ALICE', 20],
    ['gives DMs no limit when the provider sets only historyLimit', 'agent:main:slack:dm:U1', undefined],
    ['gives groups no limit when the provider sets only dmHistoryLimit', 'agent:main:discord:group:G1', undefined],
    ['gives the main session no limit', 'agent:main:main', undefined],
    ['gives subagent sessions no limit', 'agent:main:subagent:0b7c6d4e', undefined],
    ['gives cron sessions no limit', 'cron:nightly', undefined],
    ['gives unknown providers no limit', 'agent:main:whatsapp:dm:1', undefined],
  ])('%s (%s)', (_rule, key, expected) => {
    expect(resolveHistoryLimit(key, config)).toBe(expected);
  });

  it('returns undefined without a config', () => {
    expect(resolveHistoryLimit('agent:main:telegram:dm:42', undefined)).toBeUndefined();
  });
});
