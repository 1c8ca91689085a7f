/**
 * Keel against a real OpenAI-compatible server, as a new user with a local model meets it:
 * llama-cpp-python serving Gemma 3 270M (`bench/llama/serve.sh`, which builds it once), configured
 * as an `openai-compatible` agent in keel.config.json, driven through `keel dev` with piped input.
 * A logging proxy between them records every exchange. Three set-ups: a wrong window (agent 16k,
 * server 4,096), a right one (both 4,096) and a 2k window (both 2,048). For each it reports what it
 * saw: overflows and how they were handled, usage known or estimated, tool calls made, compactions
 * model-made or extractive, and whether Ctrl-C during a turn stopped cleanly. Never in CI.
 *
 *   bench/llama/serve.sh --build-only            # once, ~10 minutes
 *   npx ts-node --swc bench/llama/drive.ts       # one JSON object on stdout, progress on stderr
 *   … drive.ts --quick --only=wrong --words=900  # 3 notes (of 900 words; default 350); only set-ups named so
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { openStore } from '../../src/store/connect';
import { defaultCountTokens } from '../../src/context/estimate-tokens';

const ROOT = resolve(__dirname, '../..');
const MODEL_ID = 'gemma3-270m';
const say = (line: string): void => void process.stderr.write(`${line}\n`);

interface Scenario {
  readonly name: string;
  readonly serverWindow: number;
  readonly agentWindow: number;
}

const SCENARIOS: readonly Scenario[] = [
  { name: 'wrong window (agent 16k, server 4,096)', serverWindow: 4_096, agentWindow: 16_000 },
  { name: 'right window (4,096)', serverWindow: 4_096, agentWindow: 4_096 },
  { name: '2k window (2,048)', serverWindow: 2_048, agentWindow: 2_048 },
];

/** One request through the proxy and what came back. */
interface Exchange {
  readonly stream: boolean;
  readonly tools: number;
  readonly toolChoice: unknown;
  readonly requestBytes: number;
  readonly lastUser: string;
  status?: number | undefined;
  contentType?: string;
  responseBytes?: number;
  done?: boolean;
  finishReason?: boolean;
  usage?: boolean;
  toolCalls?: boolean;
  errorText?: string;
}

/** A proxy that forwards to `target` and records each chat-completions exchange. */
async function startProxy(target: string, exchanges: Exchange[]): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(parts);
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
      } catch {
        // not JSON: forwarded as is
      }
      const messages = (body.messages ?? []) as Array<{ role: string; content: unknown }>;
      const lastUser = messages.filter((m) => m.role === 'user').at(-1);
      const exchange: Exchange = {
        stream: body.stream === true,
        tools: Array.isArray(body.tools) ? body.tools.length : 0,
        toolChoice: body.tool_choice,
        requestBytes: raw.length,
        lastUser: typeof lastUser?.content === 'string' ? lastUser.content.slice(0, 60) : '',
      };
      if (req.url?.endsWith('/chat/completions')) exchanges.push(exchange);
      const upstream = httpRequest(
        new URL(req.url ?? '/', target),
        { method: req.method, headers: { ...req.headers, host: new URL(target).host } },
        (answer) => {
          exchange.status = answer.statusCode;
          exchange.contentType = String(answer.headers['content-type'] ?? '');
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          const seen: Buffer[] = [];
          answer.on('data', (c: Buffer) => {
            seen.push(c);
            res.write(c);
          });
          answer.on('end', () => {
            const text = Buffer.concat(seen).toString('utf8');
            exchange.responseBytes = text.length;
            exchange.done = text.includes('[DONE]');
            exchange.finishReason = /"finish_reason":\s*"/.test(text);
            exchange.usage = /"usage":\s*\{/.test(text);
            exchange.toolCalls = /"tool_calls":\s*\[\s*\{/.test(text);
            if ((answer.statusCode ?? 200) >= 400) exchange.errorText = text.slice(0, 300);
            res.end();
          });
        },
      );
      upstream.on('error', (err) => {
        exchange.errorText = String(err);
        res.destroy();
      });
      upstream.end(raw);
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** Starts `serve.sh` with the window and waits until it answers `/v1/models`. */
async function startLlama(window: number, port: number): Promise<ChildProcess> {
  const child = spawn(join(ROOT, 'bench/llama/serve.sh'), [String(window), String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let log = '';
  child.stderr!.on('data', (c: Buffer) => (log += c.toString()));
  for (let waited = 0; waited < 300_000; waited += 1_000) {
    if (child.exitCode !== null) throw new Error(`serve.sh exited ${child.exitCode}: ${log.slice(-2_000)}`);
    const up = await fetch(`http://127.0.0.1:${port}/v1/models`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return child;
    await new Promise((r) => setTimeout(r, 1_000));
  }
  throw new Error(`llama server not up after 300 s: ${log.slice(-2_000)}`);
}

/** ~`words` words of plain prose with a planted word, as a pasted note would be. */
function note(turn: number, words: number): string {
  const vocabulary = ['harbour', 'rope', 'tide', 'gull', 'lantern', 'anchor', 'sail', 'keel', 'deck', 'storm'];
  const body = Array.from({ length: words }, (_, i) => vocabulary[(i * 3 + turn) % vocabulary.length]).join(' ');
  return `Note ${turn}: the lighthouse keeper wrote ${body}. Reply with one short sentence.`;
}

interface Outcome {
  readonly scenario: string;
  readonly turnsSent: number;
  readonly requests: number;
  readonly overflow: {
    readonly emptyStreams: number;
    readonly unstreamedOverflows: number;
    readonly learnedWindow: number | null;
  };
  readonly usage: {
    readonly streamsWithoutUsage: number;
    readonly sessionEstimated: boolean;
    readonly summarizerEstimated: boolean;
  };
  readonly tools: {
    readonly offeredWithAuto: number;
    readonly offeredWithout: number;
    readonly streamedToolRequests: number;
    readonly refusedStreams: number;
    readonly toolCallsReturned: number;
  };
  readonly cutReplies: number;
  readonly compactions: ReadonlyArray<{ trigger: string; degraded: boolean; why: string | null }>;
  readonly smallWindowLine: string | null;
  readonly cleanStop: {
    readonly stoppedCleanly: boolean;
    readonly stackJsonLeft: boolean;
    readonly uncaught: boolean;
    readonly exitCode: number | null;
  };
}

async function runScenario(scenario: Scenario, turns: number, noteWords: number, port: number): Promise<Outcome> {
  say(`\n== ${scenario.name}`);
  const llama = await startLlama(scenario.serverWindow, port);
  const exchanges: Exchange[] = [];
  const proxy = await startProxy(`http://127.0.0.1:${port}`, exchanges);
  const home = await mkdtemp(join(tmpdir(), 'keel-llama-'));
  const config = join(home, 'keel.config.json');
  await writeFile(
    config,
    JSON.stringify({
      model: { provider: 'openai-compatible', id: MODEL_ID, baseUrl: `${proxy.url}/v1` },
      models: {
        providers: { 'openai-compatible': { models: [{ id: MODEL_ID, contextWindow: scenario.agentWindow }] } },
      },
      maxOutputTokens: 96,
    }),
  );
  const keelHome = join(home, '.keel');
  const dev = spawn('npx', ['ts-node', '--swc', 'workers/keel.ts', 'dev', '--session', 'agent:main:main'], {
    cwd: ROOT,
    env: {
      ...process.env,
      KEEL_HOME: keelHome,
      KEEL_CONFIG: config,
      DATABASE_URL: '',
      TEMPORAL_ADDRESS: '',
      ANTHROPIC_API_KEY: '',
    },
    stdio: ['pipe', 'pipe', 'pipe'],
    // Its own process group, signalled as a terminal's Ctrl-C is: npx alone does not pass SIGINT on.
    detached: true,
  });
  let shown = '';
  dev.stdout!.on('data', (c: Buffer) => (shown += c.toString()));
  dev.stderr!.on('data', (c: Buffer) => (shown += c.toString()));
  const exited = new Promise<number | null>((done) => dev.on('exit', (code) => done(code)));
  for (let turn = 1; turn <= turns; turn++) dev.stdin!.write(`${note(turn, noteWords)}\n`);
  dev.stdin!.write('Use the history_search tool to find what the lighthouse keeper wrote in note 1.\n');
  dev.stdin!.write('FINAL: tell me a long story about the sea.\n');
  // Ctrl-C twice once the last turn is in flight: the chat leaves, the stack must stop cleanly.
  const deadline = Date.now() + 40 * 60_000;
  while (!exchanges.some((e) => e.lastUser.startsWith('FINAL')) && Date.now() < deadline && dev.exitCode === null)
    await new Promise((r) => setTimeout(r, 1_000));
  await new Promise((r) => setTimeout(r, 1_500));
  const ctrlC = () => dev.pid !== undefined && process.kill(-dev.pid, 'SIGINT');
  ctrlC();
  await new Promise((r) => setTimeout(r, 300));
  ctrlC();
  const exitCode = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), 60_000))]);
  proxy.server.close();
  if (llama.pid) process.kill(-llama.pid, 'SIGTERM');

  const store = await openStore({ kind: 'pglite', dataDir: join(keelHome, 'db') });
  try {
    const compactions = await store.db.selectFrom('compactions').selectAll().orderBy('started_at').execute();
    const session = await store.db
      .selectFrom('sessions')
      .selectAll()
      .where('session_key', '=', 'agent:main:main')
      .executeTakeFirst();
    const learned = await store.db
      .selectFrom('model_limits')
      .select('context_window')
      .where('model', '=', MODEL_ID)
      .executeTakeFirst();
    const streams = exchanges.filter((e) => e.stream && e.status === 200);
    return {
      scenario: scenario.name,
      turnsSent: turns + 2,
      requests: exchanges.length,
      overflow: {
        emptyStreams: streams.filter((e) => (e.responseBytes ?? 0) === 0).length,
        unstreamedOverflows: exchanges.filter(
          (e) => !e.stream && e.status === 400 && /context|exceed|token/i.test(e.errorText ?? ''),
        ).length,
        learnedWindow: learned?.context_window ?? null,
      },
      usage: {
        streamsWithoutUsage: streams.filter((e) => (e.responseBytes ?? 0) > 0 && !e.usage).length,
        sessionEstimated: Boolean(session?.usage_estimated),
        summarizerEstimated: compactions.some((c) => c.summarizer_usage_estimated),
      },
      tools: {
        offeredWithAuto: exchanges.filter((e) => e.tools > 0 && e.toolChoice === 'auto').length,
        offeredWithout: exchanges.filter((e) => e.tools > 0 && e.toolChoice === undefined).length,
        streamedToolRequests: exchanges.filter((e) => e.tools > 0 && e.stream).length,
        refusedStreams: exchanges.filter((e) => e.tools > 0 && e.stream && (e.status ?? 0) >= 400).length,
        toolCallsReturned: exchanges.filter((e) => e.toolCalls).length,
      },
      cutReplies: streams.filter((e) => e.done && !e.finishReason && (e.responseBytes ?? 0) > 0).length,
      compactions: compactions.map((c) => ({ trigger: c.trigger, degraded: c.degraded, why: c.error })),
      smallWindowLine: /window [\d,]+ tokens is too small[^\n]*/.exec(shown)?.[0] ?? null,
      cleanStop: {
        stoppedCleanly: shown.includes('stopped cleanly'),
        stackJsonLeft: existsSync(join(keelHome, 'stack.json')),
        uncaught: /Channel has been shut down\n\s+at /.test(shown),
        exitCode,
      },
    };
  } finally {
    await store.close();
  }
}

/**
 * Keel's token count (its tokenizer, no safety margin) beside the server's own (`/extras/tokenize/count`)
 * on English prose and on digit-heavy text: whether calibrating the estimate with the server would pay.
 */
async function tokenizerGap(
  port: number,
): Promise<Record<string, { keel: number; server: number; keelOverServer: number }>> {
  const llama = await startLlama(2_048, port);
  try {
    const texts = {
      prose: Array.from({ length: 40 }, (_, i) => note(i, 20)).join(' '),
      digits: Array.from({ length: 400 }, (_, i) => `${(i * 7919) % 100_000}.${i % 97}`).join(', '),
    };
    const out: Record<string, { keel: number; server: number; keelOverServer: number }> = {};
    for (const [name, text] of Object.entries(texts)) {
      const answer = await fetch(`http://127.0.0.1:${port}/extras/tokenize/count`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input: text, model: MODEL_ID }),
      });
      const server = ((await answer.json()) as { count: number }).count;
      const keel = defaultCountTokens(text);
      out[name] = { keel, server, keelOverServer: Math.round((keel / server) * 1000) / 1000 };
    }
    return out;
  } finally {
    if (llama.pid) process.kill(-llama.pid, 'SIGTERM');
  }
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
  const words = Number(process.argv.find((a) => a.startsWith('--words='))?.slice('--words='.length) ?? 350);
  const tokenizer = await tokenizerGap(8198);
  say(`tokenizer: ${JSON.stringify(tokenizer)}`);
  const outcomes: Outcome[] = [];
  for (const [i, scenario] of SCENARIOS.entries()) {
    if (only && !scenario.name.startsWith(only)) continue;
    const outcome = await runScenario(scenario, quick ? 3 : 6, words, 8199 + i);
    say(JSON.stringify(outcome, null, 2));
    outcomes.push(outcome);
  }
  process.stdout.write(`${JSON.stringify({ tokenizer, outcomes })}\n`);
}

main().catch((err: unknown) => {
  say(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exitCode = 1;
});
