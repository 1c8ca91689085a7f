import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema';
import { entriesAfter } from '../store/entries-repo';

/** Rows read per page while exporting (one index range read each). */
export const EXPORT_PAGE_ROWS = 500;
/** Pi's session file version, written in a header Keel has to synthesize. */
export const EXPORT_SESSION_VERSION = 3;

export interface ExportSessionOptions {
  db: Kysely<Database>;
  agentId: string;
  sessionId: string;
  out: Writable;
  /**
   * Written into the header as `sessionKey` (the key's current transcript), so `keel import` gives
   * the transcript its session back without a `sessions.json`.
   */
  sessionKey?: string;
}

/** What an export wrote. */
export interface ExportReport {
  entries: number;
  bytes: number;
  /** True when the session had no stored header and one was written from its first entry. */
  synthesizedHeader: boolean;
}

/**
 * Writes a session as Pi/OpenClaw JSONL: the session header first, then every entry's payload in
 * seq order, one per line. Pages through the store and honours the writable's backpressure, so
 * memory stays bounded for any transcript length. A session written by Keel without a header gets
 * `{type:"session", version, id: sessionId, timestamp: first entry's}`; `sessionKey` goes into the
 * header. Key order inside a line is PostgreSQL jsonb's, so export → import → export yields the same
 * bytes. Does not end `out`.
 */
export async function exportSessionJsonl(opts: ExportSessionOptions): Promise<ExportReport> {
  const report: ExportReport = { entries: 0, bytes: 0, synthesizedHeader: false };
  const write = async (line: string): Promise<void> => {
    report.bytes += Buffer.byteLength(line);
    if (!opts.out.write(line)) await once(opts.out, 'drain');
  };
  let afterSeq = 0;
  for (;;) {
    const rows = await entriesAfter(opts.db, opts.agentId, opts.sessionId, afterSeq, EXPORT_PAGE_ROWS);
    if (rows.length === 0) break;
    if (afterSeq === 0 && rows[0]!.type !== 'session') {
      const header = {
        type: 'session',
        version: EXPORT_SESSION_VERSION,
        id: opts.sessionId,
        timestamp: new Date(rows[0]!.created_at).toISOString(),
      };
      await write(`${JSON.stringify(withSessionKey(header, opts.sessionKey))}\n`);
      report.synthesizedHeader = true;
    }
    let chunk = '';
    for (const row of rows)
      chunk += `${JSON.stringify(row.type === 'session' ? withSessionKey(row.payload, opts.sessionKey) : row.payload)}\n`;
    await write(chunk);
    report.entries += rows.length;
    afterSeq = Number(rows[rows.length - 1]!.seq);
  }
  return report;
}

/**
 * The header with `sessionKey` set, its keys in jsonb's order (shorter first, then bytewise), so the
 * line reads the same before and after a round trip through the store.
 */
function withSessionKey(header: Record<string, unknown>, sessionKey: string | undefined): Record<string, unknown> {
  if (sessionKey === undefined) return header;
  const keyed: Record<string, unknown> = { ...header, sessionKey };
  const order = Object.keys(keyed).sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(order.map((k) => [k, keyed[k]]));
}
