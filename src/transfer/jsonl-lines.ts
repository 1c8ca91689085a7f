import { DEFAULTS } from '../config/defaults';
import { createReadStream } from 'node:fs';

/**
 * Longest JSONL line the importer reads into memory (16 MiB). Real transcripts carry tool results
 * of several MB (a 10 MB line is imported); anything longer is dropped with a reason, and the reader
 * never buffers more than this, so memory stays bounded whatever the file holds.
 */
export const MAX_IMPORT_LINE_BYTES = DEFAULTS.maxImportLineBytes;

/** One line of a JSONL file: its text, or a marker that it was too long to read. */
export type JsonlLine =
  | { readonly lineNumber: number; readonly bytes: number; readonly text: string; readonly tooLong?: undefined }
  | { readonly lineNumber: number; readonly bytes: number; readonly tooLong: true };

const NEWLINE = 0x0a;
const CR = 0x0d;
const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * Streams a file line by line (1-based line numbers, `bytes` counts the line and its newline).
 * Tolerates what editors and crashes leave behind: a UTF-8 BOM on the first line, CRLF endings, and
 * a last line without newline (yielded as is). Invalid UTF-8 becomes U+FFFD, so binary garbage shows
 * up as a line that does not parse. Blank lines are yielded too; the caller decides.
 */
export async function* readJsonlLines(path: string, opts: { maxLineBytes?: number } = {}): AsyncGenerator<JsonlLine> {
  const maxLineBytes = opts.maxLineBytes ?? MAX_IMPORT_LINE_BYTES;
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  // Bytes of the current line seen past the cap: they are counted, not kept.
  let overflowBytes = 0;
  let lineNumber = 0;

  const finish = (withNewline: boolean): JsonlLine => {
    lineNumber += 1;
    const bytes = pendingBytes + overflowBytes + (withNewline ? 1 : 0);
    let line: JsonlLine;
    if (overflowBytes > 0) {
      line = { lineNumber, bytes, tooLong: true };
    } else {
      let buf = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
      if (lineNumber === 1 && buf.subarray(0, 3).equals(UTF8_BOM)) buf = buf.subarray(3);
      if (buf.length > 0 && buf[buf.length - 1] === CR) buf = buf.subarray(0, buf.length - 1);
      line = { lineNumber, bytes, text: decoder.decode(buf) };
    }
    pending = [];
    pendingBytes = 0;
    overflowBytes = 0;
    return line;
  };

  const keep = (part: Buffer, copy: boolean): void => {
    if (part.length === 0) return;
    if (overflowBytes > 0 || pendingBytes + part.length > maxLineBytes) {
      // Past the cap: drop what was kept so far and only count from here on.
      overflowBytes += pendingBytes + part.length;
      pending = [];
      pendingBytes = 0;
      return;
    }
    // A part carried over to the next chunk is copied: it must not pin or alias the chunk.
    pending.push(copy ? Buffer.from(part) : part);
    pendingBytes += part.length;
  };

  for await (const chunk of createReadStream(path, { highWaterMark: 256 * 1024 })) {
    const buf = chunk as Buffer;
    let start = 0;
    for (let nl = buf.indexOf(NEWLINE, start); nl !== -1; nl = buf.indexOf(NEWLINE, start)) {
      keep(buf.subarray(start, nl), false);
      yield finish(true);
      start = nl + 1;
    }
    keep(buf.subarray(start), true);
  }
  if (pendingBytes > 0 || overflowBytes > 0) yield finish(false);
}
