import type {
  KyselyPlugin,
  OperationNode,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';

/**
 * Counts the statements a Kysely instance runs, by kind and table (`select model_limits`,
 * `insert transcript_entries`) or, for raw SQL, by its text (`raw select pg_notify(?, ?)`): install
 * it with `db.withPlugin(counter)` to see what a step costs the database.
 */
export class StatementCounter implements KyselyPlugin {
  readonly seen: string[] = [];

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.seen.push(labelOf(args.node));
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }

  /** How many statements since `from` (an index into `seen`) had this label. */
  count(label: string, from = 0): number {
    return this.seen.slice(from).filter((l) => l === label).length;
  }
}

function labelOf(node: RootOperationNode): string {
  const n = node as unknown as Record<string, unknown> & OperationNode;
  switch (node.kind) {
    case 'SelectQueryNode':
      return `select ${tableOf((n.from as { froms?: unknown[] } | undefined)?.froms?.[0])}`;
    case 'InsertQueryNode':
      return `insert ${tableOf(n.into)}`;
    case 'UpdateQueryNode':
      return `update ${tableOf(n.table)}`;
    case 'DeleteQueryNode':
      return `delete ${tableOf((n.from as { froms?: unknown[] } | undefined)?.froms?.[0])}`;
    case 'RawNode':
      return `raw ${(n.sqlFragments as string[]).join('?').trim()}`;
    default:
      return node.kind;
  }
}

function tableOf(node: unknown): string {
  const table = node as { kind?: string; table?: { identifier?: { name?: string } }; node?: unknown } | undefined;
  if (table?.kind === 'AliasNode') return tableOf(table.node);
  return table?.table?.identifier?.name ?? '?';
}
