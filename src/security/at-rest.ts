import type {
  Kysely,
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import type { KeyRing } from './key-ring';
import type { Database } from '../store/schema';
import { isSealed, openValue, sealJson, sealText, type RowBinding } from './sealed-value';
import { blindIndex, blindTerms, blindWord, searchWords } from './blind-index';

/**
 * Encryption at rest (KEEL_ENCRYPT_AT_REST). Reading is one chokepoint: a kysely plugin on the
 * store's handle opens every sealed column value in every result row, so no reader changes.
 * Writing seals explicitly at the few places that write conversation text (entry payloads,
 * compaction summaries in their entries, memory notes and checkpoints, pending tool arguments),
 * through {@link atRestOf}. The plugin rides along into transactions, so a write inside one seals too.
 *
 * Each value is sealed for its row (`RowBinding`: table, column, the row's key columns), and the
 * plugin opens it only in that column and where the result row's key columns hold those values: a
 * value a database writer moved to another row fails to read, naming both. So readers of a sealed
 * column select the row's key columns with it.
 */
export interface AtRestOptions {
  /** The ring that opens sealed values (and seals, when `seal` is on); unset → sealed values fail to read, naming the fix. */
  readonly ring?: KeyRing;
  /** Seal new writes with the ring's current key. Off with a ring: old sealed rows still read. */
  readonly seal: boolean;
}

/** The seal/open operations of a store handle. */
export interface AtRest {
  /** New writes are sealed (encryption at rest on, with a ring). */
  readonly seals: boolean;
  /** The JSON text to write into a jsonb column of `row`: the value, or its envelope sealed for that row. */
  json(value: unknown, row: RowBinding): string;
  /** The text to write into a text column of `row`: the text, or its form sealed for that row. */
  text(value: string, row: RowBinding): string;
  /** Blind-index entries for sealed text; null when the text is written plain (searched with ILIKE). */
  index(value: string): string[] | null;
  /** Blind-index entries of search terms for sealed text; null when the text is written plain. */
  indexTerms(terms: readonly string[]): string[] | null;
  /** For each word of a query, its blind-index entries under every key; undefined without a ring. */
  queryWords(query: readonly string[]): string[][] | undefined;
}

class AtRestPlugin implements KyselyPlugin, AtRest {
  constructor(private readonly options: AtRestOptions) {}

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const { result } = args;
    if (!result.rows.some(hasSealedColumn)) return result;
    return {
      ...result,
      rows: result.rows.map((row) => (hasSealedColumn(row) ? openRow(this.options.ring, row) : row)),
    };
  }

  get seals(): boolean {
    return this.sealing();
  }

  json(value: unknown, row: RowBinding): string {
    return JSON.stringify(this.sealing() ? sealJson(this.options.ring!, value, row) : value);
  }

  text(value: string, row: RowBinding): string {
    return this.sealing() ? sealText(this.options.ring!, value, row) : value;
  }

  index(value: string): string[] | null {
    return this.sealing() ? blindIndex(this.options.ring!, value) : null;
  }

  indexTerms(terms: readonly string[]): string[] | null {
    return this.sealing() ? blindTerms(this.options.ring!, terms) : null;
  }

  queryWords(query: readonly string[]): string[][] | undefined {
    const ring = this.options.ring;
    if (!ring) return undefined;
    return query.flatMap(searchWords).map((word) => blindWord(ring, word));
  }

  private sealing(): boolean {
    return this.options.seal && this.options.ring !== undefined;
  }
}

function hasSealedColumn(row: UnknownRow): boolean {
  for (const key in row) if (isSealed(row[key])) return true;
  return false;
}

function openRow(ring: KeyRing | undefined, row: UnknownRow): UnknownRow {
  const out: UnknownRow = {};
  for (const key in row) out[key] = openValue(ring, row[key], { column: key, row });
  return out;
}

/** The plugin a store handle is opened with (`openStore`): opens sealed values, seals when asked to. */
export function atRestPlugin(options: AtRestOptions): KyselyPlugin {
  return new AtRestPlugin(options);
}

const PLAIN = new AtRestPlugin({ seal: false });

/**
 * The at-rest operations of a handle (or a transaction of it). A handle opened without the plugin
 * (a bare kysely instance) writes plain.
 */
export function atRestOf(db: Kysely<Database>): AtRest {
  // getExecutor is kysely's way to reach a handle's plugins; transactions inherit them.
  return db.getExecutor().plugins.find((p): p is AtRestPlugin => p instanceof AtRestPlugin) ?? PLAIN;
}
