import { createHash, randomBytes } from 'node:crypto';
import { Client, type QueryResult } from 'pg';

/**
 * Server-side prepared statements for the statements a turn runs every time (`compiledOnce`). pg
 * sends an unnamed statement as parse, bind and execute on each run, and PostgreSQL parses and plans
 * it anew each time: for a turn's hot statements, parsing and planning took longer in the server
 * than executing them. A named
 * statement is parsed once per connection, and after five runs PostgreSQL keeps a generic plan when
 * it is as good. Only fixed texts are named (registered by `compiledOnce`): a name per connection
 * lives as long as the connection, so statements of varying text stay unnamed.
 */
const names = new Map<string, string>();

/** Marks `sql` as a statement worth preparing on each connection that runs it. */
export function registerPreparedStatement(sql: string): void {
  if (!names.has(sql)) names.set(sql, `keel_${createHash('sha256').update(sql).digest('hex').slice(0, 20)}`);
}

/** What PostgreSQL says when a prepared statement's result columns changed under it (a migration added one). */
const RESULT_TYPE_CHANGED = 'cached plan must not change result type';

/**
 * The pool's client: a registered text runs as a named statement. Each client names its statements
 * apart (the text's hash and the client's own suffix): PostgreSQL keeps names per connection, but a
 * PGlite socket serves every connection from one session, which also keeps what a killed process
 * prepared, and a name prepared twice there fails ("already exists") and aborts the transaction.
 * A statement prepared before a migration changed its table's columns fails once with "cached plan
 * must not change result type"; it is then prepared again under a fresh name on this connection (the
 * stale one is left to the connection's end: dropping it would fail inside the transaction that error
 * aborted) and run again, which inside a transaction fails with the transaction, and succeeds on the
 * caller's retry.
 */
export class PreparingClient extends Client {
  private readonly suffix = randomBytes(4).toString('hex');
  /** A statement's name on this connection, when it had to be prepared again. */
  private readonly renamed = new Map<string, string>();
  private renames = 0;

  override query(...args: unknown[]): never {
    const [text, values, callback] = args;
    const name =
      typeof text === 'string' && Array.isArray(values) && callback === undefined ? names.get(text) : undefined;
    if (name === undefined) return (super.query as (...a: unknown[]) => never)(...args);
    return this.runNamed(name, text as string, values as unknown[]) as never;
  }

  private async runNamed(base: string, text: string, values: unknown[]): Promise<QueryResult> {
    try {
      return await super.query({ name: this.renamed.get(base) ?? `${base}_${this.suffix}`, text, values });
    } catch (err) {
      if (!(err instanceof Error) || !err.message.includes(RESULT_TYPE_CHANGED)) throw err;
      const fresh = `${base}_${this.suffix}_${++this.renames}`;
      this.renamed.set(base, fresh);
      return super.query({ name: fresh, text, values });
    }
  }
}
