import { open, rename, rm } from 'node:fs/promises';
import { readJsonlLines } from './jsonl-lines';

export interface RewriteInput {
  file: string;
  maxLineBytes: number;
  /** Line numbers that were dropped. */
  droppedLines: ReadonlySet<number>;
  /** Line numbers whose entry was fixed, with the fixed JSON. */
  fixedLines: ReadonlyMap<number, string>;
  now: Date;
}

/** Lines are written in blocks of about this size. */
const WRITE_BLOCK_BYTES = 1024 * 1024;

/**
 * Writes the repaired transcript in place and keeps the original as `<file>.bak-<pid>-<ms>`
 * (OpenClaw's file repair). Streams a second pass over the original, so only repaired files pay
 * for it; the swap is two renames, so a crash leaves either the original or the repaired file.
 * Blank lines go; BOM and CRLF are normalized away.
 * @returns the backup path.
 */
export async function rewriteRepairedFile(input: RewriteInput): Promise<string> {
  const tmp = `${input.file}.repair-${process.pid}`;
  const backup = `${input.file}.bak-${process.pid}-${input.now.getTime()}`;
  const out = await open(tmp, 'w');
  try {
    let block: string[] = [];
    let blockBytes = 0;
    for await (const line of readJsonlLines(input.file, { maxLineBytes: input.maxLineBytes })) {
      if (line.tooLong || input.droppedLines.has(line.lineNumber) || line.text.trim().length === 0) continue;
      const text = input.fixedLines.get(line.lineNumber) ?? line.text;
      block.push(text, '\n');
      blockBytes += text.length + 1;
      if (blockBytes >= WRITE_BLOCK_BYTES) {
        await out.write(block.join(''));
        block = [];
        blockBytes = 0;
      }
    }
    if (block.length > 0) await out.write(block.join(''));
    await out.close();
  } catch (err) {
    await out.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
  await rename(input.file, backup);
  await rename(tmp, input.file);
  return backup;
}
