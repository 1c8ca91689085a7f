import { SILENT_REPLY_TOKEN, isSilentReply, isSilentReplyPrefix } from '../context/silent-reply';

/**
 * Draft suppression for one streamed reply (OpenClaw's NO_REPLY draft suppression): text is held back
 * while the reply could still be the silent token, nothing is released once it starts with the token,
 * and everything held is released the moment it cannot be.
 *
 * @example
 *   const filter = new SilentPrefixFilter();
 *   filter.push('NO');        // '' (could be NO_REPLY)
 *   filter.push(' problem');  // 'NO problem'
 */
export class SilentPrefixFilter {
  private draft = '';
  private state: 'undecided' | 'released' | 'silent' = 'undecided';

  /** The text that may be shown now ('' while held back or silent). */
  push(delta: string): string {
    if (this.state === 'released') return delta;
    if (this.state === 'silent') return '';
    this.draft += delta;
    // Leading whitespace says nothing yet: the token may still follow it.
    if (this.draft.trim() === '' || isSilentReplyPrefix(this.draft)) {
      if (this.draft.trimStart().length > SILENT_REPLY_TOKEN.length) this.state = 'silent';
      return '';
    }
    this.state = 'released';
    return this.draft;
  }

  /** At the end of the reply: what was still held, unless the reply is silent. */
  end(): string {
    if (this.state !== 'undecided') return '';
    this.state = isSilentReply(this.draft) ? 'silent' : 'released';
    return this.state === 'released' ? this.draft : '';
  }
}
