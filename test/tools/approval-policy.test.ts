import { approvalNeed, matchesToolPattern, toolAsksApproval } from '../../src/tools/approval-policy';

describe('matchesToolPattern', () => {
  it.each([
    ['send_email', 'send_email', true],
    ['send_email', 'send_emails', false],
    ['send_*', 'send_email', true],
    ['send_*', 'resend_email', false],
    ['*_delete', 'rows_delete', true],
    ['*', 'anything', true],
    ['a.b', 'axb', false],
  ])('%s against %s is %s', (pattern, name, expected) => {
    expect(matchesToolPattern(pattern, name)).toBe(expected);
  });
});

describe('approvalNeed', () => {
  it('asks for every call of a configured tool, whatever the tool says', () => {
    expect(approvalNeed({ name: 'deploy' }, 'deploy', ['deploy'])).toBe('always');
    expect(approvalNeed(undefined, 'deploy', ['dep*'])).toBe('always');
  });
  it("follows the tool's own policy otherwise", () => {
    expect(approvalNeed({ name: 'pay', approval: 'always' }, 'pay', [])).toBe('always');
    expect(approvalNeed({ name: 'pay', approval: () => false }, 'pay', [])).toBe('ask-tool');
    expect(approvalNeed({ name: 'read' }, 'read', ['send_*'])).toBe('none');
  });
});

describe('toolAsksApproval', () => {
  const ctx = { agentId: 'main', sessionKey: 'agent:main:main' };
  it("returns the tool function's answer on the input", () => {
    const tool = { approval: (input: { amount: number }) => input.amount > 100 };
    expect(toolAsksApproval(tool as never, { amount: 500 }, ctx)).toBe(true);
    expect(toolAsksApproval(tool as never, { amount: 5 }, ctx)).toBe(false);
  });
  it('asks for approval when the function throws (fails closed)', () => {
    const tool = {
      approval: () => {
        throw new Error('no policy today');
      },
    };
    expect(toolAsksApproval(tool, {}, ctx)).toBe(true);
  });
});
