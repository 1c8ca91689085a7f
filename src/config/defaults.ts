/**
 * Every default in one place, each with where it comes from.
 */
export const DEFAULTS = {
  /** Context window when nothing else says (OpenClaw default). */
  contextWindowTokens: 200_000,
  /**
   * Reserve floor: reserveTokens is raised to at least this (OpenClaw `reserveTokensFloor`); the
   * reserve still never takes more than `maxReserveWindowShare` of a window.
   */
  reserveTokensFloor: 20_000,
  /** Token estimates carry a safety margin (OpenClaw). */
  tokenSafetyMargin: 1.2,
  /** Memory flush runs this many tokens below the compaction threshold (OpenClaw `softThresholdTokens`). */
  softThresholdTokens: 4_000,
  /**
   * A compaction starts beside the session, not waited for, once the context passes this share of
   * the budget (window − reserve): 70% leaves the summary time to land before the hard limit (Keel;
   * Claude Code and OpenClaw block the turn at their threshold instead). 0 turns it off.
   */
  backgroundCompactionShare: 0.7,
  /** ...but at most this share of the budget (window − reserve) below it (Keel: a 4k window has no 4,000 tokens to spare). */
  maxSoftThresholdBudgetShare: 0.25,
  /**
   * Outer bound of one compaction run. The summarize phase has its own deadline derived from the
   * plan (`summarizerCallBudgetMs` per sequential step); past it the extractive summary is written.
   */
  compactionTimeoutMs: 60 * 60_000,
  /** Chunk ratio of the window, adaptive down to the minimum (OpenClaw). */
  baseChunkRatio: 0.4,
  minChunkRatio: 0.15,
  /** Tokens reserved for the summarization prompt itself (OpenClaw)... */
  summarizationOverheadTokens: 4_096,
  /**
   * Below this room for conversation text in the summarizer's window, a model summary is pointless and
   * compaction writes the extractive one (Keel: a summary of a few hundred tokens of text keeps little).
   */
  minSummaryRoomTokens: 1_000,
  /** ...at most this share of the summarizer's window (Keel: a 4k window cannot set 4,096 aside). */
  maxSummarizationOverheadWindowShare: 0.1,
  /** Pi default recent tail kept after compaction. */
  keepRecentTokens: 20_000,
  /** An automatic compaction keeps at most this share of the window as its tail (Keel: small windows must reclaim). */
  keepRecentMaxWindowShare: 0.25,
  /**
   * A summary may grow by this share of the messages it newly replaces (in characters at
   * `charsPerToken`), on top of the summary it replaces (Keel: a fixed cap kept a small share of
   * what a long session allowed, and lost what people had said).
   */
  summaryShareOfReplaced: 0.05,
  /** A summary never takes more than this share of the window, however much it replaces (Keel). */
  maxSummaryWindowShare: 0.04,
  /** Nor less than this, so a small compaction has room for its sections and identifiers (Keel). */
  minSummaryChars: 1_000,
  /** Protected identifiers a summary lists past its text cap, at most this share of the window; the newest are kept (Keel). */
  maxIdentifierWindowShare: 0.1,
  /**
   * Characters of an identifier listing per token of Keel's estimate: identifiers tokenize densely
   * (cl100k: UUIDs 1.5 and hashes 1.7 characters a token, order numbers 2.2, paths and URLs 3.2; the
   * estimate adds its ×1.2 margin), so the listing's share holds for the densest kind (Keel).
   */
  identifierCharsPerToken: 1.25,
  /** A session stops auto-compacting after this many consecutive failures (Keel's guard against compaction loops; docs/reference.md, "Failure model"). */
  maxConsecutiveCompactionFailures: 3,
  /** A compaction freeing less than this share of its input is low-yield: the next threshold compaction waits (no storms). */
  compactionMinReclaimShare: 0.1,
  /**
   * Threshold and manual compactions summarize on the conversation's own prompt cache: the last turn's
   * request, then the summary request (Keel: the prefix is billed as a cache read, a tenth of the price).
   */
  compactionPromptCache: true,
  /** Bootstrap caps (OpenClaw). */
  bootstrapMaxCharsPerFile: 5_000,
  bootstrapMaxCharsTotal: 20_000,
  /** Workspace files are re-hashed this often (seconds) in case the file watcher missed a change (network filesystems, editors that replace files). */
  workspacePollSeconds: 5,
  /** Session pruning of old tool output (OpenClaw). */
  minPrunableToolChars: 50_000,
  keepLastAssistants: 3,
  /** Maintenance (OpenClaw): prune sessions older than 30 days, keep at most 500 sessions per agent (its store's cap). */
  pruneAfterDays: 30,
  maxSessionsPerAgent: 500,
  /** Workers probe the database this often and log when it goes away and comes back (Keel). */
  databaseProbeIntervalMs: 5_000,
  /** A health probe that has not answered by then counts as down (Keel: well under the probe interval). */
  databaseProbeTimeoutMs: 2_000,
  /**
   * An activity that lost the database asks it this often and runs again as soon as it answers
   * (Keel: turns resume within a second of the database's return, not at their next retry backoff).
   */
  outageProbeIntervalMs: 500,
  /** An activity waits out a database outage this long per attempt, like a model call's retry budget (Keel). */
  outageWaitMs: 30 * 60_000,
  /** Daily reset hour (OpenClaw: 04:00 local). */
  dailyResetHour: 4,
  /** Default model when none is configured. */
  model: 'claude-sonnet-4-6',
  maxOutputTokens: 4_096,
  /**
   * Anthropic `budget_tokens` per thinking level, on top of the reply's max tokens (pi-ai's budgets;
   * `xhigh` doubles `high`). The API's floor is 1,024.
   */
  thinkingBudgetTokens: { minimal: 1_024, low: 2_048, medium: 8_192, high: 16_384, xhigh: 32_768 },
  /** From this share of the window (percent) the chat and `keel status` warn the user (OpenClaw's seed: warn at 65%). */
  contextWarningPercent: 65,
  /** The default maxOutputTokens takes at most this share of the reserve (Keel: a small window keeps slack for estimates). */
  defaultOutputReserveShare: 0.5,
  /** A model response must start (headers) within this; the streamed body is bounded by the idle timeout instead (Keel). */
  modelRequestTimeoutMs: 120_000,
  /**
   * A model stream that sends nothing for this long is stalled and fails as a retryable timeout; one
   * that keeps sending is never cut, however long the reply takes (Keel; env KEEL_MODEL_IDLE_TIMEOUT_MS).
   */
  modelStreamIdleTimeoutMs: 60_000,
  /** A single tool result may take at most this share of the model's budget; the rest is cut with a note (Keel). */
  toolResultMaxBudgetShare: 0.3,
  /** Rough characters per token, for turning a token budget into a character cut (Keel). */
  charsPerToken: 4,
  /**
   * A turn's run budget: it stops at whichever limit comes first, with one last call without tools
   * that reports where the run stands (Keel). A thousand model calls let a long agent task finish
   * (hundreds of tool rounds, compacting as it goes) while a runaway loop still ends; fifty million
   * tokens (every kind billed, cache reads included) is the spend bound on a large window, where each
   * call can carry a full context. Per agent `runBudget`, env KEEL_MAX_MODEL_CALLS / KEEL_MAX_TURN_TOKENS,
   * or per request; `null` is no limit (a step limit only where a token limit is set).
   */
  runBudget: { maxModelCalls: 1_000 as number | null, maxTokens: 50_000_000 as number | null },
  /** A turn's result lists at most this many of its tool calls, the most recent (a long run's payloads stay small; Keel). */
  turnToolCallsListed: 50,
  /**
   * A long turn hands itself on to a new workflow run (continue-as-new) after this many model calls in
   * one run, so each run's history stays bounded whatever the number of rounds (Keel).
   */
  maxRoundsPerRun: 100,
  /** Subagents: nesting depth (the main agent spawns, its children do not) and running children per session. */
  subagentMaxDepth: 1,
  /**
   * A configured window of at most this many tokens is a small local model's: its main sessions get
   * the minimal system prompt and no subagent tools, which would take half of a 4k window (Keel).
   */
  smallWindowTokens: 16_384,
  subagentMaxChildren: 5,
  /** A subagent's result in its parent's context: about 500 tokens, the rest stays in the child's transcript. */
  subagentAnnounceChars: 2_000,
  /** A spawn's task and attachments together, in characters (it becomes the child's first message). */
  subagentTaskChars: 50_000,
  /** One page of `sessions_history`, in characters. */
  subagentHistoryPageChars: 8_000,
  /** The session workflow continues-as-new after this many turns even if Temporal does not suggest it. */
  maxTurnsPerRun: 500,
  /** A provider's retry-after is honoured up to this (Keel: a longer wait is a stuck call, not a backoff). */
  maxRetryAfterMs: 5 * 60_000,
  /** The chunk ratio adapts down when the average message exceeds this share of the window (OpenClaw). */
  largeAverageMessageShare: 0.1,
  /** A message is "oversized" for summary when its estimate × 1.2 exceeds this share of the window (OpenClaw). */
  oversizedWindowShare: 0.5,
  /** Daily reset time zone (Keel: OpenClaw uses the host's zone; workers may run in different zones). */
  resetTimeZone: 'UTC',
  /** Above this many characters a message is estimated from its length: gpt-tokenizer is slow on megabytes (Keel). */
  tokenizeLimitChars: 1_000_000,
  /** Tokens counted for an image block, whatever its base64 size (Keel, near Anthropic's ~1.15k for a 1 MP image). */
  imageTokenEstimate: 1_200,
  /** reserveTokens when unset (Pi); the floor raises it. */
  reserveTokens: 16_384,
  /** Longest JSONL line import keeps; longer lines are dropped with a reason, memory stays bounded (Keel). */
  maxImportLineBytes: 16 * 1024 * 1024,
  /** Request ids a session remembers, so a resent request is not run twice (Keel). */
  rememberedRequestIds: 512,
  /**
   * Outcomes a session keeps in memory for senders to collect (a burst of hundreds waits its turn to
   * ask); continue-as-new carries the newest uncollected ones that fit `carriedOutcomeBytes` (Keel).
   */
  keptOutcomes: 2_000,
  carriedOutcomeBytes: 512_000,
  /** Continue-as-new hands on at most this much state; a larger queue drains first (Temporal payloads stop at 2 MiB). */
  maxCarriedBytes: 1_000_000,
  /** A model call keeps retrying transient provider errors this long, honouring retry-after (Keel: storms last minutes). */
  modelRetryBudgetMs: 30 * 60_000,
  /** The memory flush may take this long, retries included; then the compaction goes on without it (Keel). */
  memoryFlushBudgetMs: 2 * 60_000,
  /** A run started only by a request for an unknown session (or a refused agent) waits this long for its sender to collect the failure (Keel). */
  unknownSessionLingerMs: 30_000,
  /** A session workflow with nothing to do for this long closes; the next message starts it again (Keel). */
  sessionIdleCloseMs: 60 * 60_000,
  /** One summarizer call may stream this long; the summarize phase's deadline is derived from it (Keel). */
  summarizerCallBudgetMs: 10 * 60_000,
  /** A learned provider window never goes below this (Keel: a smaller reading is a broken provider, not a model). */
  minLearnedWindowTokens: 4_096,
  /** The learned window stays this share under the provider's stated maximum (Keel: estimates drift). */
  learnedWindowSafety: 0.95,
  /**
   * A successful call's usage raises a session's estimate scale only from a prompt at least this
   * share of its budget (the window less the reserve; Keel): in a smaller one the system prompt, the
   * tools and the provider's own per-message overhead weigh too much for the reading to say what the
   * content costs.
   */
  scaleReadingMinBudgetShare: 0.5,
  /** ...and only by at least this much: a steady session does not rewrite its row every turn (Keel). */
  scaleRiseMinStep: 0.05,
  /** The reserve never takes more than this share of a (small, configured or learned) window (Keel). */
  maxReserveWindowShare: 0.5,
  /** A stopping worker lets in-flight activities finish this long (a model call streams for minutes) (Keel). */
  workerShutdownGraceMs: 5 * 60_000,
  /**
   * Worker memory for copies of active windows (issue 20), so a turn reads only what was appended:
   * sized for the windows of many busy sessions at once (docs/sizing.md).
   */
  contextCacheBytes: 256 * 1024 * 1024,
  /**
   * Session workflows kept in the worker's cache between turns, so a busy fleet's sessions stay
   * sticky (the SDK's default is sized from memory; this is deliberate and configurable).
   */
  maxCachedWorkflows: 250,
  /**
   * Sessions a context engine keeps state for on one worker; past it the least recently used is
   * disposed (Keel: four times the sticky workflows, so a cached session's engine state stays).
   */
  contextEngineSessionsPerWorker: 1_000,
  /** PostgreSQL connections per process (pg's own default is 10). */
  databasePoolSize: 10,
  /** After the grace time, this long more before the worker gives up on a clean shutdown (server gone) (Keel). */
  workerShutdownForceExtraMs: 10_000,
  /**
   * A model reply up to this size (JSON) is held in its activity's heartbeat details until stored, so
   * a failed write does not call the model again (Keel: Temporal warns at 512 KB and refuses 2 MB).
   */
  maxHeldReplyBytes: 256 * 1024,
  /**
   * Model replies received and not stored yet, kept in the worker's memory so a retry after a failed
   * write does not call the model again: this many bytes at most, oldest first out (Keel: a few
   * hundred replies, a few MB of a worker's heap).
   */
  receivedRepliesMaxBytes: 16 * 1024 * 1024,
  /** Tool outputs run and not stored yet, kept in the worker's memory for a retry: this many bytes at most (Keel: as the replies' memo). */
  ranToolOutputsMaxBytes: 16 * 1024 * 1024,
  /**
   * `keel dev`'s worker: in-flight activities get this long when the chat ends, since the chat has
   * cancelled its turn already and a person waits for the prompt back (Keel).
   */
  devShutdownGraceMs: 2_000,
  /** How long `keel profile` waits for the session's status (its measured prompt overhead): a command, not a wait for workers. */
  profileStatusTimeoutMs: 5_000,
  /**
   * A model call's activity (and the memory flush's) heartbeats every second for its whole attempt,
   * whatever the stream does; one silent this long lost its worker and runs again elsewhere (Keel:
   * as a tool's; a stream that stalls is failed by `modelStreamIdleTimeoutMs`, not by this).
   */
  modelHeartbeatTimeoutMs: 5_000,
  /** Heartbeat timeout of a summarizer call: a dead worker is noticed within it (Keel). */
  summarizeHeartbeatTimeoutMs: 30_000,
  /**
   * One run of a tool may take this long; then the model gets a timeout error result and the
   * session goes on (Keel: long enough for a build or a slow API, short enough that a hung tool
   * does not hold its session). A tool or an agent sets its own.
   */
  toolTimeoutMs: 5 * 60_000,
  /**
   * A tool activity heartbeats every second while its tool runs; one silent this long lost its
   * worker and runs again elsewhere (Keel: a killed worker's call resumes within seconds; an event
   * loop blocked this long is a bug of its own).
   */
  toolHeartbeatTimeoutMs: 5_000,
  /**
   * A compaction's database steps heartbeat this often while they run, and one silent for
   * `storeHeartbeatTimeoutMs` lost its worker and runs again elsewhere (Keel: a killed worker's
   * compaction resumes within seconds, not at the step's start-to-close timeout).
   */
  storeHeartbeatIntervalMs: 1_000,
  /**
   * What a failed activity attempt reports (the worker logs it whole): Temporal keeps an activity's
   * last failure only up to a few KB and shows "Failure exceeds size limit." for a larger one, so
   * the retry line would lose its cause (Keel: under that limit with room for the details).
   */
  activityFailureBounds: { messageChars: 600, stackFrames: 3, chainDepth: 3 },
  storeHeartbeatTimeoutMs: 5_000,
  /**
   * A session's next workflow task waits this long for the worker that cached it before any worker
   * takes it (replaying its history): a killed worker's turns go on after this (Keel: the SDK's 10 s
   * made a killed worker cost 15 s more than its heartbeat timeout; a busy worker polls well within it).
   */
  stickyQueueScheduleToStartTimeoutMs: 3_000,
  /** The longest timeout a tool may have (Keel: a day; also the tool activity's start-to-close backstop). */
  toolTimeoutMaxMs: 24 * 60 * 60_000,
  /**
   * A tool that throws `RetryableToolError` without a retry policy of its own runs at most this
   * often, waiting 1 s, then 2 s, … between runs (Keel: a short blip, not an outage, is worth waiting for).
   */
  toolRetry: { maxAttempts: 3, initialIntervalMs: 1_000, maxIntervalMs: 30_000 },
  /**
   * A tool call waiting for a person is denied as "timed out" after this long (Keel: a working day and
   * a night, so a call asked in the evening can be approved the next morning). An agent sets its own.
   */
  approvalTimeoutMs: 24 * 60 * 60_000,
  /** The longest an approval may wait (Keel: a week; the wait is a workflow timer, holding nothing). */
  approvalTimeoutMaxMs: 7 * 24 * 60 * 60_000,
  /** Port of the HTTP API (`keel serve`, `keel dev`) (Keel: free of Temporal's 7233/8233 and the usual 3000/8080). */
  apiPort: 8787,
  /** The HTTP API listens on loopback unless told otherwise: beyond it, a token is required (Keel). */
  apiHost: '127.0.0.1',
  /**
   * Largest HTTP request body the API reads: one request's payload limit (`MAX_REQUEST_BYTES`, 1 MB)
   * plus room for JSON escapes (a string of quotes doubles in size when encoded) (Keel).
   */
  apiMaxBodyBytes: 2 * 1024 * 1024,
  /** How often the API's event stream reads a session's transcript when no notice woke it (as the chat polls) (Keel). */
  apiEventsPollMs: 1_000,
  /** One /v1/embeddings call may take this long (Keel: a CPU-served small model embeds 64 lines in a few seconds). */
  embeddingsTimeoutMs: 30_000,
  /**
   * Entries per /v1/embeddings request (Keel: well under OpenAI's 2,048 inputs and TEI's default
   * client batch of 32×4, large enough that a backfill of 100k entries is ~1,500 requests).
   */
  embeddingsBatchSize: 64,
  /** Characters of an entry's text that are embedded (Keel: ~512 tokens, past what small models read). */
  embeddingsMaxChars: 2_000,
  /** Characters of the question an answer is embedded after (its end, where the question is) (Keel). */
  embeddingsQuestionChars: 500,
  /** How often the worker's embedder looks for entries without vectors when the last look found none (Keel). */
  embeddingsPollMs: 2_000,
  /**
   * Waits after consecutive embedder failures, doubling from the first to the last (Keel: a restart
   * of a local server is over in seconds; a rate limit's Retry-After wins when it names a longer one).
   */
  embeddingsBackoffMs: { first: 1_000, max: 60_000 },
  /** After this many failures in a row the breaker opens: searches stop asking the embedder until a retry succeeds (Keel). */
  embeddingsBreakerFailures: 3,
  /** A search waits this long for its query's vector, then ranks by keywords alone (Keel: a search must stay fast). */
  embeddingsQueryTimeoutMs: 5_000,
  /** Candidates each side (keywords, vectors) hands to the fusion (Keel: the bench's recall@10 stops rising past ~50). */
  recallCandidates: 100,
  /** Session keys whose vectors a worker keeps in memory for search (Keel: 32 × 10k entries × 384 floats ≈ 500 MB at most). */
  recallCachedScopes: 32,
  /** Reciprocal rank fusion's k (Cormack et al. 2009: 60). */
  recallRrfK: 60,
  /**
   * A query word in at least this share of the searched entries is left out of what the dense side
   * embeds, and a keyword match on such words alone is left out of the fusion: the names of the two
   * or three people talking head every line and drown a small model's similarity (Keel bench; lower
   * shares also drop the topic words of a session that keeps asking about one thing).
   */
  denseQueryCommonShare: 0.3,
  /**
   * Tokens a history_search or memory_search result may take (Keel: ten hits with the message beside
   * each came to ~1,200; hits are shown best first while they fit, a long one skipped for a shorter).
   */
  recallResultTokens: 1_200,
  /**
   * Newest memory notes one memory_search ranks (Keel: a flush writes a few notes per compaction, so
   * thousands of cycles; read and ranked in the worker in a few milliseconds). The result says when older ones exist.
   */
  memorySearchNotes: 5_000,
} as const;
