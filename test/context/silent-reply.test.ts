import { isSilentReply, isSilentReplyPrefix } from '../../src/context/silent-reply';

describe('isSilentReply', () => {
  it.each([
    ['NO_REPLY', true],
    ['no_reply', true],
    ['  No_Reply \n', true],
    ['NO_REPLY thanks', false],
    ['Sure. NO_REPLY', false],
    ['', false],
  ])('%j → %s', (text, expected) => {
    expect(isSilentReply(text)).toBe(expected);
  });
});

describe('isSilentReplyPrefix', () => {
  it.each([
    ['NO_REPLY', true],
    ['NO_REPLY\nwrote notes to memory/2026-01-01.md', true],
    ['no_reply: done', true],
    ['NO_RE', true], // still streaming the token: hold the draft back
    ['  n', true],
    ['NO_REPLYING is fun', false],
    ['Nope', false],
    ['Here is the answer', false],
    ['', false],
  ])('%j → %s', (partial, expected) => {
    expect(isSilentReplyPrefix(partial)).toBe(expected);
  });
});
