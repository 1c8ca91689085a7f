import {
  type ColumnMetadata,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  type Kysely,
  PostgresDialect,
  type SchemaMetadata,
  sql,
  type TableMetadata,
} from 'kysely';

/**
 * PostgreSQL's dialect, whose introspection reads only the connection's current schema. Kysely's own
 * reads every column of every table in every schema, calling a function per column, and its migrator
 * asks it twice per run: on a database holding many schemas (a test server) that was most of a
 * fresh schema's migration time. Keel only ever introspects its own schema (the migrator, with
 * migrationTableSchema set to it).
 */
export class CurrentSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }
}

interface ColumnRow {
  table: string;
  kind: string;
  schema: string;
  column: string;
  not_null: boolean;
  has_default: boolean;
  identity: string;
  type: string;
  type_schema: string;
}

class CurrentSchemaIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<unknown>) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<SchemaMetadata>`select nspname as name from pg_catalog.pg_namespace`.execute(this.db);
    return rows;
  }

  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    const { rows } = await sql<ColumnRow>`
      select c.relname as table, c.relkind as kind, ns.nspname as schema, a.attname as column,
             a.attnotnull as not_null, a.atthasdef as has_default, a.attidentity as identity,
             typ.typname as type, tns.nspname as type_schema
        from pg_catalog.pg_class c
        join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
        join pg_catalog.pg_attribute a on a.attrelid = c.oid
        join pg_catalog.pg_type typ on typ.oid = a.atttypid
        join pg_catalog.pg_namespace tns on tns.oid = typ.typnamespace
       where ns.nspname = current_schema() and c.relkind in ('r', 'v', 'p')
         and a.attnum > 0 and not a.attisdropped
       order by c.relname, a.attnum`.execute(this.db);
    const tables = new Map<string, TableMetadata & { columns: ColumnMetadata[] }>();
    for (const r of rows) {
      if (!options.withInternalKyselyTables && r.table.startsWith('kysely_migration')) continue;
      let table = tables.get(r.table);
      if (!table) {
        table = { name: r.table, isView: r.kind === 'v', schema: r.schema, columns: [] };
        tables.set(r.table, table);
      }
      table.columns.push({
        name: r.column,
        dataType: r.type,
        dataTypeSchema: r.type_schema,
        isNullable: !r.not_null,
        // Identity columns; serial columns' defaults call nextval (hasDefaultValue says so).
        isAutoIncrementing: r.identity !== '',
        hasDefaultValue: r.has_default || r.identity !== '',
      });
    }
    return [...tables.values()];
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}
