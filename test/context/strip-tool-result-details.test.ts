import { stripToolResultDetails } from '../../src/context/strip-tool-result-details';
import { assistant, call, result, user } from './factories';

describe('stripToolResultDetails', () => {
  it('removes details from tool results and keeps everything else', () => {
    const withDetails = { ...result('c', 'out'), details: { secret: 'token-123', diff: '...' } };
    const input = [user('q'), assistant(call('c')), withDetails];
    const out = stripToolResultDetails(input);
    expect(out[2]).toEqual(result('c', 'out'));
    expect('details' in out[2]).toBe(false);
    expect(out[0]).toBe(input[0]);
    expect(withDetails.details).toEqual({ secret: 'token-123', diff: '...' }); // input not mutated
  });

  it('returns the same array when no tool result has details', () => {
    const input = [user('q'), assistant(call('c')), result('c')];
    expect(stripToolResultDetails(input)).toBe(input);
  });
});
