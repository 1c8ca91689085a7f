import { Kysely, Migration, MigrationProvider, Migrator, sql } from 'kysely';
import { backfillSearchVectors } from './search-backfill';
import type { Database } from './schema';

/**
 * Migrations live in code so a worker, `keel migrate` and tests share them.
 * They are frozen once released: add a new entry, never edit an old one.
 */
const migrations: Record<string, Migration> = {
  '2026_11_22_0001_core': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('sessions')
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('session_key', 'text', (c) => c.notNull())
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('session_started_at', 'timestamptz', (c) => c.notNull())
        .addColumn('last_interaction_at', 'timestamptz', (c) => c.notNull())
        .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
        .addColumn('chat_type', 'text')
        .addColumn('channel', 'text')
        .addColumn('label', 'text')
        .addColumn('display_name', 'text')
        .addColumn('delivery', 'jsonb')
        .addColumn('model_override', 'text')
        .addColumn('provider_override', 'text')
        .addColumn('auth_profile_override', 'text')
        .addColumn('toggles', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
        .addColumn('input_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('output_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('total_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('context_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('total_tokens_fresh', 'boolean', (c) => c.notNull().defaultTo(false))
        .addColumn('compaction_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('memory_flush_at', 'timestamptz')
        .addColumn('memory_flush_compaction_count', 'integer')
        .addColumn('compaction_failures', 'integer', (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('sessions_pk', ['agent_id', 'session_key'])
        .execute();
      await db.schema.createIndex('sessions_updated_idx').on('sessions').columns(['agent_id', 'updated_at']).execute();
      await db.schema
        .createIndex('sessions_session_id_idx')
        .on('sessions')
        .columns(['agent_id', 'session_id'])
        .execute();

      await db.schema
        .createTable('transcript_entries')
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('id', 'text', (c) => c.notNull())
        .addColumn('parent_id', 'text')
        // Global identity: monotonic, so ordering within a session is append order.
        .addColumn('seq', 'bigint', (c) => c.notNull().generatedByDefaultAsIdentity())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('role', 'text')
        .addColumn('payload', 'jsonb', (c) => c.notNull())
        .addColumn('token_estimate', 'integer')
        .addColumn('byte_size', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .addPrimaryKeyConstraint('transcript_entries_pk', ['agent_id', 'session_id', 'id'])
        .execute();
      // "tail N entries" and "entries since seq X" stay index range scans.
      await db.schema
        .createIndex('transcript_entries_session_seq_idx')
        .on('transcript_entries')
        .columns(['agent_id', 'session_id', 'seq'])
        .execute();
      // "the last compaction" is one index probe, whatever the transcript length.
      await sql`CREATE INDEX transcript_entries_compaction_idx ON transcript_entries (agent_id, session_id, seq) WHERE type = 'compaction'`.execute(
        db,
      );

      await db.schema
        .createTable('compactions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('session_key', 'text', (c) => c.notNull())
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('trigger', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('degraded', 'boolean', (c) => c.notNull().defaultTo(false))
        .addColumn('error', 'text')
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('tokens_before', 'integer')
        .addColumn('tokens_after', 'integer')
        .addColumn('first_kept_entry_id', 'text')
        .addColumn('entry_id', 'text')
        .addColumn('retry_of', 'text')
        .addColumn('workflow_id', 'text')
        .addColumn('started_at', 'timestamptz', (c) => c.notNull())
        .addColumn('finished_at', 'timestamptz')
        .execute();
      await db.schema
        .createIndex('compactions_session_idx')
        .on('compactions')
        .columns(['agent_id', 'session_key', 'started_at'])
        .execute();
      await db.schema
        .createIndex('compactions_status_idx')
        .on('compactions')
        .columns(['status', 'started_at'])
        .execute();

      await db.schema
        .createTable('memory_notes')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('session_key', 'text', (c) => c.notNull())
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('text', 'text', (c) => c.notNull())
        .addColumn('compaction_cycle', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('memory_notes_agent_day_idx')
        .on('memory_notes')
        .columns(['agent_id', 'day'])
        .execute();

      await db.schema
        .createTable('subagent_runs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('parent_session_key', 'text', (c) => c.notNull())
        .addColumn('child_session_key', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('depth', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('task', 'text', (c) => c.notNull())
        .addColumn('result', 'text')
        .addColumn('workflow_id', 'text')
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .addColumn('ended_at', 'timestamptz')
        .execute();
      await db.schema
        .createIndex('subagent_runs_parent_idx')
        .on('subagent_runs')
        .columns(['agent_id', 'parent_session_key'])
        .execute();
    },
  },
  // Provider limits learned from overflow errors; memory-flush failures on the session and the compaction;
  // the session workflow's counters saved when it closes idle, read back when the next message restarts it.
  '2026_11_23_001_learned_limits_and_flush_outcomes': {
    async up(db) {
      await db.schema
        .createTable('model_limits')
        .addColumn('model', 'text', (c) => c.primaryKey())
        .addColumn('context_window', 'integer', (c) => c.notNull())
        .addColumn('provider_max_tokens', 'integer')
        .addColumn('provider_message', 'text')
        .addColumn('learned_at', 'timestamptz', (c) => c.notNull())
        .execute();
      await db.schema.alterTable('sessions').addColumn('memory_flush_error', 'text').execute();
      await db.schema.alterTable('sessions').addColumn('memory_flush_failed_at', 'timestamptz').execute();
      await db.schema.alterTable('sessions').addColumn('workflow_state', 'jsonb').execute();
      await db.schema.alterTable('compactions').addColumn('memory_flush', 'text').execute();
    },
  },
  // A tool runs with the arguments the model produced, while the transcript holds them redacted:
  // the raw arguments wait here from the model call that stored the call until its result is stored.
  '2026_11_23_002_pending_tool_args': {
    async up(db) {
      await db.schema
        .createTable('pending_tool_args')
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('assistant_entry_id', 'text', (c) => c.notNull())
        .addColumn('tool_call_id', 'text', (c) => c.notNull())
        .addColumn('arguments', 'jsonb', (c) => c.notNull())
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .addPrimaryKeyConstraint('pending_tool_args_pk', [
          'agent_id',
          'session_id',
          'assistant_entry_id',
          'tool_call_id',
        ])
        .execute();
    },
  },
  // Provider prompt caching: tokens read from and written to the cache, per session.
  '2026_11_23_003_session_cache_counters': {
    async up(db) {
      await db.schema
        .alterTable('sessions')
        .addColumn('cache_read_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable('sessions')
        .addColumn('cache_write_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  },
  // The structured checkpoint the memory flush saves before a compaction, one per session (replaced by
  // the next cycle's flush), read back into the system prompt after that compaction.
  '2026_11_23_004_memory_checkpoints': {
    async up(db) {
      await db.schema
        .createTable('memory_checkpoints')
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('session_key', 'text', (c) => c.notNull())
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('compaction_cycle', 'integer', (c) => c.notNull())
        .addColumn('flush_id', 'text', (c) => c.notNull())
        .addColumn('checkpoint', 'jsonb', (c) => c.notNull())
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .addPrimaryKeyConstraint('memory_checkpoints_pk', ['agent_id', 'session_key'])
        .execute();
    },
  },
  // Subagents: who spawned each run and from which tool call, and the announces their parents took
  // (one row per child result, keyed by the child request it answers: the claim that makes it land once).
  '2026_11_23_005_subagents': {
    async up(db) {
      await db.schema.alterTable('subagent_runs').addColumn('child_agent_id', 'text').execute();
      await db.schema.alterTable('subagent_runs').addColumn('parent_session_id', 'text').execute();
      await db.schema.alterTable('subagent_runs').addColumn('tool_call_id', 'text').execute();
      await db.schema.alterTable('subagent_runs').addColumn('label', 'text').execute();
      await db.schema.alterTable('subagent_runs').addColumn('updated_at', 'timestamptz').execute();
      await db.schema.createIndex('subagent_runs_child_idx').on('subagent_runs').column('child_session_key').execute();
      await db.schema
        .createTable('subagent_announces')
        .addColumn('subagent_id', 'text', (c) => c.notNull())
        .addColumn('announce_key', 'text', (c) => c.notNull())
        .addColumn('parent_entry_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .addPrimaryKeyConstraint('subagent_announces_pk', ['subagent_id', 'announce_key'])
        .execute();
    },
  },
  // Encryption at rest: a sealed memory note is searched through the HMACs of its words (GIN: `&&`, `@>`).
  '2026_11_24_002_encryption_at_rest': {
    async up(db) {
      await db.schema
        .alterTable('memory_notes')
        .addColumn('text_terms', sql`text[]`)
        .execute();
      await db.schema
        .createIndex('memory_notes_terms_idx')
        .on('memory_notes')
        .using('gin')
        .column('text_terms')
        .execute();
    },
  },
  '2026_11_24_003_compaction_yield': {
    async up(db) {
      // What the last compaction reclaimed: a low-yield one holds the next threshold compaction (no storms).
      await db.schema.alterTable('sessions').addColumn('last_compaction_tokens_before', 'integer').execute();
      await db.schema.alterTable('sessions').addColumn('last_compaction_tokens_after', 'integer').execute();
    },
  },
  // Every session id a key has had, so maintenance and export reach rotated transcripts. Backfilled from
  // the current ids, then from the rows that name a key next to an older id (compactions, memory notes,
  // checkpoints); a transcript no row links to a key stays unlisted (doctor reports its leftovers).
  // A backfilled earlier id's span is its entries' first and last timestamps.
  '2026_11_24_004_session_ids': {
    async up(db) {
      await db.schema
        .createTable('session_ids')
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('session_key', 'text', (c) => c.notNull())
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('started_at', 'timestamptz', (c) => c.notNull())
        .addColumn('ended_at', 'timestamptz')
        .addPrimaryKeyConstraint('session_ids_pk', ['agent_id', 'session_id'])
        .execute();
      await db.schema
        .createIndex('session_ids_key_idx')
        .on('session_ids')
        .columns(['agent_id', 'session_key', 'started_at'])
        .execute();
      await sql`
        INSERT INTO session_ids (agent_id, session_key, session_id, started_at, ended_at)
        SELECT agent_id, session_key, session_id, session_started_at, NULL FROM sessions
        ON CONFLICT DO NOTHING`.execute(db);
      await sql`
        WITH keyed AS (
          SELECT agent_id, session_key, session_id, started_at AS at FROM compactions
          UNION ALL SELECT agent_id, session_key, session_id, created_at FROM memory_notes
          UNION ALL SELECT agent_id, session_key, session_id, created_at FROM memory_checkpoints
        ),
        first_key AS (
          SELECT DISTINCT ON (agent_id, session_id) agent_id, session_key, session_id, at FROM keyed ORDER BY agent_id, session_id, at
        )
        INSERT INTO session_ids (agent_id, session_key, session_id, started_at, ended_at)
        SELECT k.agent_id, k.session_key, k.session_id, coalesce(min(e.created_at), k.at), coalesce(max(e.created_at), k.at)
        FROM first_key k
        LEFT JOIN transcript_entries e ON e.agent_id = k.agent_id AND e.session_id = k.session_id
        GROUP BY k.agent_id, k.session_key, k.session_id, k.at
        ON CONFLICT DO NOTHING`.execute(db);
    },
  },
  // history_search: each entry's words, indexed at insert time (a tsvector for plain rows, blind-index
  // HMACs for sealed ones). Existing plain rows are backfilled in batches from a best-effort SQL
  // extraction of their text (sealed rows cannot be read here; they stay unindexed).
  '2026_11_24_005_history_search': {
    async up(db) {
      await db.schema
        .alterTable('transcript_entries')
        .addColumn('search_vector', sql`tsvector`)
        .execute();
      await db.schema
        .alterTable('transcript_entries')
        .addColumn('search_terms', sql`text[]`)
        .execute();
      await db.schema
        .createIndex('transcript_entries_search_idx')
        .on('transcript_entries')
        .using('gin')
        .column('search_vector')
        .execute();
      await db.schema
        .createIndex('transcript_entries_terms_idx')
        .on('transcript_entries')
        .using('gin')
        .column('search_terms')
        .execute();
      await backfillSearchVectors(db);
    },
  },
  // Reversible compaction and summarizer spend: a revert or a rerun names the compaction it acts on, a
  // rerun that is not applied keeps its summary on its row (sealed like entries), and each row counts
  // the summarizer calls and tokens it spent (the spend limit sums them per session and per agent).
  '2026_11_25_001_reversible_compaction': {
    async up(db) {
      await db.schema
        .alterTable('compactions')
        .addColumn('revert_of', 'text')
        .addColumn('rerun_of', 'text')
        .addColumn('summary', 'text')
        .addColumn('summarizer_model', 'text')
        .addColumn('summarizer_calls', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('summarizer_tokens', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('spend_limited', 'text')
        .execute();
      // The spend window sums one session's (and one agent's) recent rows.
      await db.schema
        .createIndex('compactions_spend_idx')
        .on('compactions')
        .columns(['agent_id', 'started_at'])
        .execute();
    },
  },
  '2026_11_25_002_deferred_search_index': {
    async up(db) {
      // Imports defer search indexing; history_search probes a session for such rows before it reads.
      // Holds only rows not indexed yet, so the probe is one small index read.
      await db.schema
        .createIndex('transcript_entries_unindexed_idx')
        .on('transcript_entries')
        .columns(['agent_id', 'session_id'])
        .where(sql.ref('search_vector'), 'is', null)
        .where(sql.ref('search_terms'), 'is', null)
        .execute();
    },
  },
  '2026_11_25_003_unindexed_excludes_sealed': {
    async up(db) {
      // Sealed rows from before history_search can never be indexed: out of the partial index, a
      // search's probe and maintenance's sweep stop reading them again and again.
      await db.schema.dropIndex('transcript_entries_unindexed_idx').ifExists().execute();
      await sql`create index transcript_entries_unindexed_idx on transcript_entries (agent_id, session_id)
                 where search_vector is null and search_terms is null and not (payload ? '$sealed')`.execute(db);
    },
  },
  '2026_11_26_001_unindexed_by_seq': {
    async up(db) {
      // A search's probe reads a session's unindexed rows in seq order, so PostgreSQL takes this index
      // even when other agents' imports make unindexed rows look common (it chose a LIMIT-bounded seq
      // scan of the whole table instead, which grows with every agent's rows).
      await db.schema.dropIndex('transcript_entries_unindexed_idx').ifExists().execute();
      await sql`create index transcript_entries_unindexed_idx on transcript_entries (agent_id, session_id, seq)
                 where search_vector is null and search_terms is null and not (payload ? '$sealed')`.execute(db);
    },
  },
  '2026_11_26_002_search_indexes_skip_nulls': {
    async up(db) {
      // A GIN index holds an entry for a row whose column is NULL too, and every row has one of the two
      // NULL (a plain row no blind-index terms, a sealed row no tsvector; an imported row both until it
      // is indexed): each insert wrote into an index no search reads, a visible share of an import's
      // database time. Matching operators (@@, &&) imply NOT NULL, so searches still use them.
      // Rebuilding takes a while on a big table (about a minute per million rows), once.
      await db.schema.dropIndex('transcript_entries_search_idx').ifExists().execute();
      await db.schema.dropIndex('transcript_entries_terms_idx').ifExists().execute();
      await sql`create index transcript_entries_search_idx on transcript_entries using gin (search_vector) where search_vector is not null`.execute(
        db,
      );
      await sql`create index transcript_entries_terms_idx on transcript_entries using gin (search_terms) where search_terms is not null`.execute(
        db,
      );
    },
  },
  '2026_11_27_001_session_statistics': {
    async up(db) {
      // The planner took a session's share of the table to be the agent's share times the session's,
      // as if the two were independent, so a large session in a large table looked small: a search
      // for a rare word ANDed its few text-index matches with a scan of the session's whole key range,
      // several times slower beside other sessions' rows. Joint statistics give it the sizes of the
      // largest sessions.
      await sql`create statistics if not exists transcript_entries_session_stats (mcv, dependencies) on agent_id, session_id from transcript_entries`.execute(
        db,
      );
      await sql`analyze transcript_entries`.execute(db);
    },
  },
  '2026_11_27_002_session_estimate_scale': {
    async up(db) {
      // A model's learned window was lowered by how far Keel's estimate fell short on the prompt that
      // overflowed, for every session of the model and for good: one session full of identifiers shrank
      // them all. The shortfall is the session's content, so it is kept on the session's row.
      await db.schema.alterTable('sessions').addColumn('estimate_scale', 'double precision').execute();
      // Windows learned that way go back to the model's stated maximum (with the same 5% safety share);
      // a session whose content fools the estimate learns its own scale at its next overflow.
      await sql`update model_limits set context_window = greatest(context_window, floor(provider_max_tokens * 0.95)::int)
                 where provider_max_tokens is not null`.execute(db);
    },
  },
  '2026_11_27_003_session_estimate_scales': {
    async up(db) {
      // One scale a session served every model: a summarizer with another tokenizer narrowed the chat
      // model's window, and the chat model's usage raised it past the summarizer's. Kept per model now.
      // A scale learned before does not say for which model: not carried over, and learned again at
      // the session's next refusal (one refused call). The old column stays, unread: workers of the
      // previous release still running beside this one read and write it (no migration drops a column).
      await db.schema.alterTable('sessions').addColumn('estimate_scales', 'jsonb').execute();
    },
  },
  '2026_11_28_001_search_by_terms': {
    async up(db) {
      // history_search ranks by stemmed terms without stop words (BM25), and no longer indexes the
      // recall tools' own calls and results. Plain rows indexed by raw words lose their vector and are
      // indexed again, as an import's are, by their session's next search or by maintenance. Sealed
      // rows keep the word hashes they were written with: they match where a word is its own stem.
      await sql`update transcript_entries set search_vector = null where search_vector is not null`.execute(db);
    },
  },
  '2026_11_29_001_compaction_billing': {
    async up(db) {
      // What a compaction's summarizer calls were billed, as the provider reported it: a summary asked
      // on the conversation's own prompt cache is mostly cache reads, which `summarizer_tokens` alone hides.
      await db.schema
        .alterTable('compactions')
        .addColumn('summarizer_input_tokens', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('summarizer_cache_read_tokens', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('summarizer_cache_write_tokens', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('summarizer_output_tokens', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  },
  '2026_11_29_002_session_prompt_overhead': {
    async up(db) {
      // What the last turn's call sent besides the conversation (system prompt, workspace files, tools),
      // so the console's fleet shows every session's split from its row, as `keel status` shows one.
      await db.schema
        .alterTable('sessions')
        .addColumn('prompt_system_tokens', 'integer')
        .addColumn('prompt_workspace_tokens', 'integer')
        .addColumn('prompt_tool_tokens', 'integer')
        .execute();
    },
  },
  '2026_11_29_003_tool_approvals': {
    async up(db) {
      // Tool calls that wait for a person: `keel approvals` lists them across sessions without asking
      // each workflow; the workflow writes every row (open, then its one decision).
      await db.schema
        .createTable('tool_approvals')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('session_key', 'text', (c) => c.notNull())
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('tool_name', 'text', (c) => c.notNull())
        .addColumn('tool_call_id', 'text', (c) => c.notNull())
        .addColumn('arguments', 'jsonb', (c) => c.notNull())
        .addColumn('approvers', 'jsonb')
        .addColumn('deadline', 'timestamptz', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('decided_by', 'text')
        .addColumn('note', 'text')
        .addColumn('decided_at', 'timestamptz')
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('tool_approvals_status_idx')
        .on('tool_approvals')
        .columns(['status', 'agent_id', 'created_at'])
        .execute();
    },
  },
  '2026_12_07_001_entry_embeddings': {
    async up(db: Kysely<any>) {
      // One vector per entry and embedding model, as little-endian float32: portable to any PostgreSQL
      // and PGlite; searched in the worker. A model change writes new rows instead of mixing spaces.
      await db.schema
        .createTable('entry_embeddings')
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('vector', 'bytea', (c) => c.notNull())
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .addPrimaryKeyConstraint('entry_embeddings_pk', ['agent_id', 'session_id', 'model', 'seq'])
        .execute();
      // What each model's vectors are: learned from its first answer, checked on every later one.
      await db.schema
        .createTable('embedding_models')
        .addColumn('model', 'text', (c) => c.primaryKey())
        .addColumn('dimensions', 'integer', (c) => c.notNull())
        .addColumn('first_seen_at', 'timestamptz', (c) => c.notNull())
        .execute();
    },
  },
  '2026_12_07_002_subagent_run_budget': {
    async up(db) {
      // The run budget a spawn asked for (JSON; null: the child agent's own), so a retried spawn
      // step starts the child with the same one.
      await db.schema.alterTable('subagent_runs').addColumn('budget', 'text').execute();
    },
  },
  '2026_12_07_003_estimated_usage': {
    async up(db) {
      // A model server that reports no usage (llama-cpp-python streams) gets Keel's own count: the
      // counters say so, instead of showing zeros or passing an estimate off as the provider's figure.
      await db.schema
        .alterTable('sessions')
        .addColumn('usage_estimated', 'boolean', (c) => c.notNull().defaultTo(false))
        .execute();
      await db.schema
        .alterTable('compactions')
        .addColumn('summarizer_usage_estimated', 'boolean', (c) => c.notNull().defaultTo(false))
        .execute();
    },
  },
  '2026_12_07_004_off_branch_entries': {
    async up(db) {
      // An imported transcript is a tree: entries on branches its author left stay stored and
      // searchable, but never reach a model. A constant default adds the column without a rewrite.
      await db.schema
        .alterTable('transcript_entries')
        .addColumn('off_branch', 'boolean', (c) => c.notNull().defaultTo(false))
        .execute();
      // Counted by the window probe beside the compaction rows: one small index, empty for most sessions.
      await sql`create index transcript_entries_off_branch_idx on transcript_entries (agent_id, session_id, seq)
                 where off_branch and type <> 'compaction'`.execute(db);
    },
  },
  '2026_12_07_005_memory_note_embeddings': {
    async up(db: Kysely<any>) {
      // memory_search ranks notes as history_search ranks entries: one vector per plain note and
      // model, stored as entry_embeddings are (little-endian float32), searched in the worker.
      await db.schema
        .createTable('memory_note_embeddings')
        .ifNotExists()
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('note_id', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('vector', 'bytea', (c) => c.notNull())
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .addPrimaryKeyConstraint('memory_note_embeddings_pk', ['agent_id', 'model', 'note_id'])
        .execute();
    },
  },
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Brings the schema to the latest migration; safe to call from many workers at once on PostgreSQL. */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  // Name the schema: kysely otherwise finds another schema's migration tables and skips creating its own.
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]!.schema;
  if (await upToDate(db, schema)) return [];
  const migrator = new Migrator({ db, provider, migrationTableSchema: schema });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * True when the schema has run exactly Keel's migrations. Kysely's migrator takes a database-wide
 * advisory lock even when there is nothing to do, so every CLI command and worker start would queue
 * behind any other schema's migration; a schema already at the latest skips it.
 */
async function upToDate(db: Kysely<Database>, schema: string): Promise<boolean> {
  const exists = await sql<{
    found: string | null;
  }>`select to_regclass(quote_ident(${schema}) || '.kysely_migration') as found`.execute(db);
  if (!exists.rows[0]?.found) return false;
  const done = await sql<{ name: string }>`select name from ${sql.id(schema, 'kysely_migration')}`.execute(db);
  const names = new Set(done.rows.map((r) => r.name));
  const wanted = Object.keys(migrations);
  return names.size === wanted.length && wanted.every((name) => names.has(name));
}
