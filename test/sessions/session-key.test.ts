import {
  InvalidSessionKeyError,
  MAX_SESSION_KEY_LENGTH,
  buildSessionKey,
  chatTypeOf,
  isValidSessionKey,
  parseSessionKey,
  sessionWorkflowId,
  sessionWorkflowType,
  type ParsedSessionKey,
} from '../../src/sessions/session-key';
import { sessionKeySchema } from '../../src/sessions/session-key-schema';

const UUID = '0b8f3c1e-7d4a-4c2b-9f6e-1a2b3c4d5e6f';

/** The InvalidSessionKeyError `fn` throws; fails the test when it throws nothing or something else. */
function thrownBy(fn: () => unknown): InvalidSessionKeyError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidSessionKeyError);
    return error as InvalidSessionKeyError;
  }
  throw new Error('expected an InvalidSessionKeyError, but nothing was thrown');
}

/** Every OpenClaw session-key shape with the fields it must parse into. */
const validKeys: Array<[string, Partial<ParsedSessionKey> & { chatType: string }]> = [
  ['agent:ops:main', { kind: 'main', agentId: 'ops', mainKey: 'main', baseKey: 'agent:ops:main', chatType: 'main' }],
  ['agent:ops:work', { kind: 'main', agentId: 'ops', mainKey: 'work', chatType: 'main' }],
  [
    'agent:ops:main:thread:1712.5',
    { kind: 'main', mainKey: 'main', threadId: '1712.5', baseKey: 'agent:ops:main', chatType: 'main' },
  ],
  [
    'agent:ops:telegram:group:-1003593489589',
    { kind: 'group', channel: 'telegram', peerId: '-1003593489589', chatType: 'group' },
  ],
  [
    'agent:ops:telegram:group:-1003593489589:topic:298',
    {
      kind: 'group',
      peerId: '-1003593489589',
      topicId: '298',
      baseKey: 'agent:ops:telegram:group:-1003593489589',
      chatType: 'group',
    },
  ],
  [
    'agent:ops:discord:channel:1234567890',
    { kind: 'channel', channel: 'discord', peerId: '1234567890', chatType: 'channel' },
  ],
  ['agent:ops:slack:room:C024BE91L', { kind: 'room', channel: 'slack', peerId: 'C024BE91L', chatType: 'channel' }],
  [
    'agent:ops:slack:channel:C024BE91L:thread:1712345678.000200',
    {
      kind: 'channel',
      threadId: '1712345678.000200',
      baseKey: 'agent:ops:slack:channel:C024BE91L',
      chatType: 'channel',
    },
  ],
  [
    'agent:ops:discord:dm:81234',
    { kind: 'dm', channel: 'discord', peerId: '81234', dmVariant: 'dm', chatType: 'direct' },
  ],
  [
    'agent:ops:whatsapp:direct:+4915112345678@s.whatsapp.net',
    { kind: 'dm', peerId: '+4915112345678@s.whatsapp.net', dmVariant: 'direct', chatType: 'direct' },
  ],
  [
    'agent:ops:telegram:dm:42:thread:7',
    { kind: 'dm', peerId: '42', threadId: '7', baseKey: 'agent:ops:telegram:dm:42', chatType: 'direct' },
  ],
  [`agent:worker:subagent:${UUID}`, { kind: 'subagent', agentId: 'worker', subagentId: UUID, chatType: 'subagent' }],
  ['cron:nightly-report', { kind: 'cron', agentId: undefined, jobId: 'nightly-report', chatType: 'cron' }],
  [`hook:${UUID.toUpperCase()}`, { kind: 'hook', agentId: undefined, hookId: UUID.toUpperCase(), chatType: 'hook' }],
  [
    'agent:A_1-b:user_peer:dm:Ünïcødé',
    { kind: 'dm', agentId: 'A_1-b', channel: 'user_peer', peerId: 'Ünïcødé', chatType: 'direct' },
  ],
];

describe('parseSessionKey', () => {
  it.each(validKeys)('parses %s', (key, expected) => {
    const { chatType, ...fields } = expected;
    const parsed = parseSessionKey(key);
    expect(parsed).toMatchObject({ key, ...fields });
    expect(parsed.baseKey).toBe(fields.baseKey ?? key);
    expect(chatTypeOf(parsed)).toBe(chatType);
  });

  const invalid: Array<[string, string, string]> = [
    ['', 'key', 'is empty'],
    ['agent::main', 'agentId', 'agentId is empty; expected agent:<agentId>:<mainKey>'],
    ['agent:ops', 'mainKey', 'mainKey is missing'],
    ['agent:ops:', 'mainKey', 'mainKey is empty'],
    ['session:ops:main', 'prefix', 'starts with "session"'],
    ['Agent:ops:main', 'prefix', 'starts with "Agent"'],
    ['agent:ops:main ', 'key', 'whitespace'],
    ['agent:o ps:main', 'key', 'whitespace'],
    ['agent:ops:ma\u0000in', 'key', 'control'],
    ['agent:op$:main', 'agentId', 'agentId "op$" is not a valid name'],
    ['agent:-ops:main', 'agentId', 'starting with a letter or digit'],
    [`agent:${'a'.repeat(65)}:main`, 'agentId', 'is not a valid name'],
    ['agent:ops:tele.gram:group:1', 'channel', 'channel "tele.gram"'],
    ['agent:ops:telegram:groups:1', 'kind', 'kind "groups" is not one of group, channel, room, dm, direct'],
    ['agent:ops:telegram:group', 'peerId', 'peerId is missing'],
    ['agent:ops:telegram:group:', 'peerId', 'peerId is empty'],
    ['agent:ops:telegram:acct:dm:1', 'key', 'has 6 parts'],
    ['agent:ops:telegram:group:1:thread:', 'thread', 'thread is empty'],
    ['agent:ops:subagent', 'uuid', 'uuid is empty'],
    ['agent:ops:subagent:not-a-uuid', 'uuid', '"not-a-uuid" is not a uuid'],
    [`agent:ops:subagent:${UUID}:thread:1`, 'thread', 'takes nothing after its uuid'],
    ['hook:1234', 'uuid', '"1234" is not a uuid'],
    [`hook:${UUID}:extra`, 'key', 'has 3 parts'],
    ['cron:', 'jobId', 'jobId is empty'],
    ['cron:a:b', 'key', 'has 3 parts'],
    [`agent:ops:telegram:dm:${'9'.repeat(201)}`, 'peerId', 'is not a valid id'],
    [
      `agent:ops:main:thread:${'1'.repeat(MAX_SESSION_KEY_LENGTH)}`,
      'key',
      `at most ${MAX_SESSION_KEY_LENGTH} characters`,
    ],
  ];

  it.each(invalid)('rejects %j naming the part %s', (key, part, message) => {
    const error = thrownBy(() => parseSessionKey(key));
    expect(error.part).toBe(part);
    expect(error.key).toBe(key);
    expect(error.message).toContain(message);
    expect(error.message).toContain(`session key ${JSON.stringify(key)}`);
  });

  it('says what is wrong and what to write instead', () => {
    expect(() => parseSessionKey('agent::main')).toThrow(
      'session key "agent::main": agentId is empty; expected agent:<agentId>:<mainKey>',
    );
  });

  it('keeps case and the dm/direct spelling exactly as written', () => {
    expect(parseSessionKey('agent:Ops:Slack:direct:U1')).toMatchObject({
      agentId: 'Ops',
      channel: 'Slack',
      dmVariant: 'direct',
    });
  });
});

describe('buildSessionKey', () => {
  it.each(validKeys.map(([key]) => [key]))('is the exact inverse of parse for %s', (key) => {
    expect(buildSessionKey(parseSessionKey(key))).toBe(key);
  });

  it('defaults mainKey to main and the DM spelling to dm', () => {
    expect(buildSessionKey({ kind: 'main', agentId: 'ops' })).toBe('agent:ops:main');
    expect(buildSessionKey({ kind: 'dm', agentId: 'ops', channel: 'discord', peerId: '81234' })).toBe(
      'agent:ops:discord:dm:81234',
    );
  });

  it('appends a thread or topic suffix', () => {
    expect(buildSessionKey({ kind: 'group', agentId: 'ops', channel: 'telegram', peerId: '-100', topicId: '5' })).toBe(
      'agent:ops:telegram:group:-100:topic:5',
    );
    expect(buildSessionKey({ kind: 'main', agentId: 'ops', threadId: '9' })).toBe('agent:ops:main:thread:9');
  });

  const badParts: Array<[string, Parameters<typeof buildSessionKey>[0], string]> = [
    ['an empty agentId', { kind: 'main', agentId: '' }, 'agentId'],
    ['a peerId with a colon', { kind: 'dm', agentId: 'ops', channel: 'matrix', peerId: '@bob:matrix.org' }, 'peerId'],
    ['a peerId with a space', { kind: 'group', agentId: 'ops', channel: 'tg', peerId: 'a b' }, 'peerId'],
    [
      'both thread and topic',
      { kind: 'group', agentId: 'ops', channel: 'tg', peerId: '1', threadId: '2', topicId: '3' },
      'thread',
    ],
    ['the reserved mainKey subagent', { kind: 'main', agentId: 'ops', mainKey: 'subagent' }, 'mainKey'],
    ['a subagent id that is no uuid', { kind: 'subagent', agentId: 'ops', subagentId: '42' }, 'uuid'],
    ['a hook id that is no uuid', { kind: 'hook', hookId: 'my-hook' }, 'uuid'],
    ['a cron job id with a colon', { kind: 'cron', jobId: 'a:b' }, 'jobId'],
    ['a channel with a dot', { kind: 'room', agentId: 'ops', channel: 'a.b', peerId: '1' }, 'channel'],
  ];

  it.each(badParts)('rejects %s', (_label, parts, part) => {
    expect(thrownBy(() => buildSessionKey(parts)).part).toBe(part);
  });
});

describe('isValidSessionKey', () => {
  it('is true for every valid shape and false for invalid keys and non-strings', () => {
    for (const [key] of validKeys) expect(isValidSessionKey(key)).toBe(true);
    for (const bad of ['', 'agent::main', 'hook:nope', 'main', 42, undefined, null])
      expect(isValidSessionKey(bad)).toBe(false);
  });
});

describe('sessionKeySchema', () => {
  it('parses a valid key into its parts', () => {
    expect(sessionKeySchema.parse('agent:ops:discord:dm:81234')).toMatchObject({ kind: 'dm', peerId: '81234' });
  });

  it('fails with the error message naming the part', () => {
    const result = sessionKeySchema.safeParse('agent::main');
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe(
      'session key "agent::main": agentId is empty; expected agent:<agentId>:<mainKey>',
    );
  });

  it('rejects non-strings', () => {
    expect(sessionKeySchema.safeParse(12).success).toBe(false);
  });
});

describe('sessionWorkflowId', () => {
  it('is readable and deterministic', () => {
    expect(sessionWorkflowId('ops', 'agent:ops:main')).toBe('keel-session/ops/agent:ops:main');
    expect(sessionWorkflowId('ops', 'cron:nightly')).toBe('keel-session/ops/cron:nightly');
    expect(sessionWorkflowId('ops', 'agent:ops:main')).toBe(sessionWorkflowId('ops', 'agent:ops:main'));
  });

  it('differs for the same cron key under two agents', () => {
    expect(sessionWorkflowId('a', 'cron:j')).not.toBe(sessionWorkflowId('b', 'cron:j'));
  });

  it('rejects an agent: key that names another agent', () => {
    expect(() => sessionWorkflowId('ops', 'agent:sales:main')).toThrow('belongs to agent "sales", not "ops"');
  });

  it('rejects an agentId that could blur the id, such as one containing a slash', () => {
    expect(() => sessionWorkflowId('a/b', 'cron:j')).toThrow(InvalidSessionKeyError);
  });
});

describe('sessionWorkflowType', () => {
  it.each([
    ['agent:ops:main', 'sessionWorkflow'],
    ['cron:nightly', 'sessionWorkflow'],
    ['agent:ops:task-1', 'sessionWorkflow'],
    [`agent:ops:subagent:${UUID}`, 'subagentWorkflow'],
  ])('starts %s as %s', (key, type) => {
    expect(sessionWorkflowType(key)).toBe(type);
  });

  it('rejects an invalid key as sessionWorkflowId does', () => {
    expect(() => sessionWorkflowType('agent:ops:subagent:not-a-uuid')).toThrow(InvalidSessionKeyError);
  });
});
