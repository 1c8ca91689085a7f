import { clearScreenDown, cursorTo, moveCursor } from 'node:readline';

/** A line the chat redraws in place at a terminal: the newest state of a wait, not a scroll of them. */
export interface StatusLine {
  /** Shows `line` in place of the one shown before. */
  show(line: string): void;
  /** Erases what is shown, so the next output starts where the line began. */
  clear(): void;
}

/**
 * A status line on `stream`. A line longer than the terminal is wide wraps, so redrawing goes back
 * up over every row it took, not just the last one. Anything else written to `stream` while a line
 * is shown must call `clear()` first.
 */
export function statusLine(stream: NodeJS.WriteStream): StatusLine {
  let rows = 0;
  const clear = () => {
    if (rows === 0) return;
    if (rows > 1) moveCursor(stream, 0, -(rows - 1));
    cursorTo(stream, 0);
    clearScreenDown(stream);
    rows = 0;
  };
  return {
    show(line) {
      clear();
      stream.write(line);
      rows = Math.max(1, Math.ceil([...line].length / Math.max(1, stream.columns || 80)));
    },
    clear,
  };
}
