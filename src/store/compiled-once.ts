import { createQueryId, type Compilable, type Kysely, type RootOperationNode } from 'kysely';
import type { Database } from './schema';
import { registerPreparedStatement } from './prepared-statements';

/**
 * A statement of fixed shape that kysely builds and compiles once; each later run only binds its
 * values. Building and compiling a statement costs CPU (a tree of frozen nodes, then a compiler
 * pass over it), and a turn runs its hot statements on every call: in a worker's profile kysely was
 * a visible share of a text turn's main-thread time.
 *
 * `build` receives a stand-in for each named value (a marker string) and must pass it to kysely
 * unchanged, as one value: not computed with, not inlined into the SQL, not spread into a list. It
 * may choose parts of the statement by which values are present (`'x' in values`), never by what
 * they hold: each set of value names is compiled once.
 * Compiling finds each marker among the statement's parameters and remembers its positions; a
 * marker that is missing or lands in the SQL text is an error at the first run, not a wrong query.
 * The SQL is the same for every Keel handle (PostgreSQL's compiler); the handle's plugins still see
 * each run and its result rows (the at-rest plugin opens sealed values), and one that would rewrite
 * statements is refused.
 */
export function compiledOnce<P extends object, R>(
  name: string,
  build: (db: Kysely<Database>, values: P) => Compilable<R>,
): (db: Kysely<Database>, values: P) => Promise<R[]> {
  // One shape per set of value names: a statement with a part only some calls have (a column
  // written one of two ways) is two shapes, each compiled once.
  const shapes = new Map<string, Shape>();
  return async (db, values) => {
    const slots = Object.keys(values);
    const variant = slots.join(',');
    let shape = shapes.get(variant);
    if (!shape) {
      shape = compileShape(name, db, build, slots);
      shapes.set(variant, shape);
    }
    const parameters = shape.parameters.map((p) =>
      'slot' in p ? (values as Record<string, unknown>)[p.slot] : p.value,
    );
    const executor = db.getExecutor();
    const queryId = createQueryId();
    // The handle's plugins see the statement as they would a built one (a test's statement counter);
    // one that would rewrite it cannot be honoured by a compiled shape.
    for (const plugin of executor.plugins) {
      if (plugin.transformQuery({ node: shape.node, queryId }) !== shape.node)
        throw new Error(
          `statement ${name}: the plugin ${plugin.constructor.name} rewrites statements; a statement compiled once cannot carry it`,
        );
    }
    const result = await executor.executeQuery<R>({ query: shape.node, queryId, sql: shape.sql, parameters });
    return result.rows;
  };
}

type Bind = { readonly slot: string } | { readonly value: unknown };
interface Shape {
  readonly node: RootOperationNode;
  readonly sql: string;
  readonly parameters: readonly Bind[];
}

const MARKER = '\u0001keel-slot:';

function compileShape<P extends object, R>(
  name: string,
  db: Kysely<Database>,
  build: (db: Kysely<Database>, values: P) => Compilable<R>,
  slots: readonly string[],
): Shape {
  const markers = Object.fromEntries(slots.map((slot) => [slot, `${MARKER}${slot}`])) as unknown as P;
  // Compiled without the handle's plugins: they see each run instead (above).
  const compiled = build(db.withoutPlugins(), markers).compile();
  if (compiled.sql.includes(MARKER))
    throw new Error(`statement ${name}: a value was written into its SQL; pass every value as a parameter`);
  const seen = new Set<string>();
  const known = new Set(slots);
  const parameters = compiled.parameters.map((p): Bind => {
    const slot = typeof p === 'string' && p.startsWith(MARKER) ? p.slice(MARKER.length) : undefined;
    if (slot !== undefined && known.has(slot)) {
      seen.add(slot);
      return { slot };
    }
    if (typeof p === 'string' && p.includes(MARKER))
      throw new Error(`statement ${name}: a value was changed before it reached kysely (${JSON.stringify(p)})`);
    return { value: p };
  });
  const missing = slots.filter((s) => !seen.has(s));
  if (missing.length > 0)
    throw new Error(`statement ${name}: ${missing.join(', ')} never reached the statement as a parameter`);
  registerPreparedStatement(compiled.sql);
  return { node: compiled.query, sql: compiled.sql, parameters };
}
