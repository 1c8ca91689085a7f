/**
 * The console's browser script, bundled at build time into `console-script.generated.ts` and served
 * as /console/console.js. Two views chosen by the URL hash (`#/` the fleet, `#/s/<key>` a session),
 * drawn from the paginated JSON routes with the login cookie, refreshed by polling that backs off
 * while nothing changes. Text from the server is set with textContent, never parsed as HTML. What
 * each route answers is typed by the operations' views: the schemas the server answers with.
 */
import type { z } from 'zod';
import type { approvalOutcome, approvalsList, approvalListing } from '../../operations/approvals/approval-views';
import type { compactionEdit, retryResult, sessionCompactions } from '../../operations/compactions/compaction-views';
import type { FleetOverview, FleetPage } from '../../operations/fleet/fleet-views';
import type { ContextSeries, SessionStatusReport } from '../../operations/sessions/session-views';
import type { killResult, subagentListing, subagentsList } from '../../operations/subagents/subagent-views';
import type { TranscriptPage } from '../../operations/transcripts/transcript-views';

type Approval = z.infer<typeof approvalListing>;
type SessionCompaction = z.infer<typeof sessionCompactions>['compactions'][number];
type Subagent = z.infer<typeof subagentListing>;
type ContextSplit = NonNullable<SessionStatusReport['contextSplit']>;

/** Chart.js, loaded by its own script tag before this one. */
interface ChartConfig {
  type: string;
  data: unknown;
  options?: Record<string, unknown>;
}
declare global {
  interface Window {
    Chart: new (canvas: HTMLCanvasElement, config: ChartConfig) => unknown;
  }
}

type Attr = string | number | boolean | null | undefined | ((event: Event) => void);
type Child = Node | string | null;

const PAGE_SIZE = 50;
const LONG_TEXT = 1500;
const view = document.getElementById('view')!;
let timer: ReturnType<typeof setTimeout> | undefined;
let events: EventSource | null = null;

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, Attr> = {},
  children: Child[] = [],
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, value] of Object.entries(attrs)) {
    if (value === null || value === undefined) continue;
    if (k === 'text') node.textContent = String(value);
    else if (typeof value === 'function') node.addEventListener(k.slice(2), value);
    else node.setAttribute(k, String(value));
  }
  for (const c of children) if (c) node.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
  return node;
}
function byId<T extends HTMLElement = HTMLElement>(id: string): T | null {
  return document.getElementById(id) as T | null;
}
/** The JSON body of a response, or an error with the problem's detail. */
function jsonOf<T>(res: Response): Promise<T> {
  return res.json().then((body: T & { detail?: string }) => {
    if (!res.ok) throw new Error(body.detail || res.statusText);
    return body;
  });
}
function api<T>(method: string, path: string): Promise<T> {
  return fetch(path, { method, headers: { accept: 'application/json' }, credentials: 'same-origin' }).then((res) => {
    if (res.status === 401) {
      location.href = '/';
      throw new Error('logged out');
    }
    return jsonOf<T>(res);
  });
}
/** A POST with a JSON body, as the buttons send it. */
function post<T>(path: string, body: string): Promise<T> {
  return fetch(path, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json' },
    credentials: 'same-origin',
    body,
  }).then((res) => jsonOf<T>(res));
}
function when(iso: string | null | undefined): string {
  return iso ? iso.slice(0, 19).replace('T', ' ') : '';
}
function bar(parts: Array<[string, number]>, label: string): HTMLDivElement {
  const b = el('div', { class: 'bar', role: 'img', 'aria-label': label, title: label });
  for (const [name, width] of parts)
    b.appendChild(el('span', { class: `p-${name}`, style: `width:${Math.min(100, width)}%` }));
  return b;
}
function splitParts(split: ContextSplit): Array<[string, number]> {
  return [
    ['system', split.systemTokens],
    ['workspace', split.bootstrapTokens],
    ['tools', split.toolTokens],
    ['history', split.historyTokens],
  ];
}
/** The context as the chat splits it (system, workspace, tools, history), or one bar before a turn measured the split. */
function contextBar(split: ContextSplit | undefined, tokens: number, window: number): HTMLDivElement {
  const w = window || 1;
  const parts: Array<[string, number]> = split ? splitParts(split) : [['used', tokens]];
  return bar(
    parts.map(([name, n]): [string, number] => [name, (n / w) * 100]),
    `${parts.map(([name, n]) => `${name} ${n}`).join(', ')} of ${window}`,
  );
}
function showError(err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  view.appendChild(el('p', { class: 'error', role: 'alert', text: message }));
}
/** A Chart.js chart on a fresh canvas in box (no animation: drawn at once, also for the tests). */
function chart(box: HTMLElement | null, id: string, label: string, config: ChartConfig): void {
  if (!box) return;
  box.textContent = '';
  const canvas = el('canvas', { id, role: 'img', 'aria-label': label, width: '600', height: '240' });
  box.appendChild(canvas);
  config.options = { animation: false, responsive: true, maintainAspectRatio: false, ...config.options };
  box.style.height = '240px';
  new window.Chart(canvas, config);
}
/** Calls refresh after delay, then again; the delay doubles while refresh reports no change. */
function poll(refresh: () => Promise<boolean>, delay: number): void {
  clearTimeout(timer);
  timer = setTimeout(() => {
    refresh().then(
      (changed) => poll(refresh, changed ? 1000 : Math.min(delay * 2, 15000)),
      () => poll(refresh, Math.min(delay * 2, 15000)),
    );
  }, delay);
}

// The fleet: one page at a time, filtered and sorted by the server.
const fleet = { page: 1, sort: 'updated', q: '' };
function drawFleet(): void {
  clearTimeout(timer);
  view.textContent = '';
  const q = el('input', { id: 'filter', type: 'search', value: fleet.q, placeholder: 'part of a session key' });
  const sorts = [
    ['updated', 'last activity'],
    ['context', 'context used'],
    ['compactions', 'compactions'],
    ['key', 'key'],
  ];
  const sort = el(
    'select',
    { id: 'sort' },
    sorts.map(([value, text]) => {
      const opt = el('option', { value, text });
      if (value === fleet.sort) opt.selected = true;
      return opt;
    }),
  );
  const apply = (e: Event) => {
    e.preventDefault();
    fleet.q = q.value;
    fleet.sort = sort.value;
    fleet.page = 1;
    void loadFleet();
  };
  const form = el('form', { class: 'filters', role: 'search', onsubmit: apply }, [
    el('label', { for: 'filter' }, ['Filter', q]),
    el('label', { for: 'sort' }, ['Sort by', sort]),
    el('button', { type: 'submit', text: 'Apply' }),
  ]);
  view.appendChild(el('h1', { text: 'Fleet' }));
  view.appendChild(
    el('div', { class: 'charts' }, [
      el('figure', {}, [
        el('figcaption', { text: 'Sessions by context pressure (share of window)' }),
        el('div', { id: 'pressure-box' }),
      ]),
      el('figure', {}, [
        el('figcaption', { text: 'Compactions per hour, failed or degraded in red' }),
        el('div', { id: 'compactions-box' }),
      ]),
    ]),
  );
  view.appendChild(el('section', { id: 'approvals' }));
  view.appendChild(form);
  view.appendChild(el('div', { id: 'fleet' }));
  void loadFleet();
  void loadOverview();
  loadApprovals(null).catch(showError);
  poll(() => loadApprovals(null), 2000);
}

/** Tool calls waiting for a person (the fleet's, or one session's), each with Approve and Deny. */
function loadApprovals(sessionKey: string | null): Promise<boolean> {
  return api<z.infer<typeof approvalsList>>('GET', '/v1/approvals').then((body) => {
    const waiting = body.approvals.filter((a) => !sessionKey || a.sessionKey === sessionKey);
    const box = byId('approvals');
    const signature = JSON.stringify(waiting.map((a) => a.id));
    if (!box || signature === box.getAttribute('data-signature')) return false;
    box.setAttribute('data-signature', signature);
    box.textContent = '';
    if (waiting.length === 0) return true;
    box.appendChild(el('h2', { text: `Waiting for approval (${waiting.length})` }));
    for (const a of waiting) {
      box.appendChild(
        el('article', { class: 'approval', 'data-approval': a.id }, [
          el('h3', { text: `${a.toolName} · ${a.id}` }),
          el('p', { class: 'meta' }, [
            sessionKey ? null : el('a', { href: `#/s/${encodeURIComponent(a.sessionKey)}`, text: a.sessionKey }),
            ` waits until ${when(a.deadline)}${a.approvers ? ` · approvers: ${a.approvers.join(', ')}` : ''}`,
          ]),
          el('pre', { class: 'arguments', text: JSON.stringify(a.arguments, null, 2) }),
          el('button', { 'data-approve': a.id, onclick: () => decide(a, 'approve', sessionKey) }, ['Approve']),
          el('button', { class: 'danger', 'data-deny': a.id, onclick: () => decide(a, 'deny', sessionKey) }, ['Deny']),
        ]),
      );
    }
    return true;
  });
}
/** An approval confirmed, or a denial with the reason the model is told; the first decision on a call wins. */
function decide(a: Approval, decision: 'approve' | 'deny', sessionKey: string | null): void {
  const body: { decision: string; by: string; reason?: string } = { decision, by: 'console' };
  if (decision === 'approve') {
    if (!window.confirm(`Run ${a.toolName} for ${a.sessionKey}?`)) return;
  } else {
    const reason = window.prompt(`Deny ${a.toolName} for ${a.sessionKey}? The reason is told to the model:`, '');
    if (reason === null) return;
    if (reason) body.reason = reason;
  }
  post<z.infer<typeof approvalOutcome>>(`/v1/approvals/${encodeURIComponent(a.id)}`, JSON.stringify(body))
    .then((r) => {
      const text = `${a.toolName} ${r.status}${r.decidedBy ? ` by ${r.decidedBy}` : ''}`;
      view.insertBefore(el('p', { role: 'status', 'data-decided': r.approvalId, text }), byId('approvals'));
      return loadApprovals(sessionKey);
    })
    .catch(showError);
}
function loadFleet(): Promise<void> {
  const params = new URLSearchParams({ page: String(fleet.page), pageSize: String(PAGE_SIZE), sort: fleet.sort });
  if (fleet.q) params.set('q', fleet.q);
  return api<FleetPage>('GET', `/v1/console/sessions?${params.toString()}`)
    .then((body) => {
      const box = byId('fleet');
      if (!box) return;
      box.textContent = '';
      const rows = body.sessions.map((s) =>
        el('tr', {}, [
          el('td', { class: 'key' }, [
            el('a', { href: `#/s/${encodeURIComponent(s.sessionKey)}`, text: s.sessionKey }),
          ]),
          el('td', { text: s.agentId }),
          el('td', { class: 'wide', text: when(s.updatedAt) }),
          el('td', { class: 'context' }, [
            contextBar(s.contextSplit, s.contextTokens, s.contextWindow),
            el('small', { text: ` ${s.percentUsed}%` }),
          ]),
          el('td', { class: 'cache', text: s.promptCache ? `${s.promptCache.hitRatePercent}%` : '–' }),
          el('td', { text: String(s.compactions) }),
          el('td', {
            class: s.failedCompactions > 0 ? 'error' : '',
            text: String(s.failedCompactions) + (s.autoCompactionPaused ? ' (paused)' : ''),
          }),
          el('td', { class: 'wide', text: String(s.contextWindow) }),
        ]),
      );
      const headings = ['Session', 'Agent', 'Last activity', 'Context', 'Cache hit', 'Compactions', 'Failed', 'Window'];
      const head = el(
        'tr',
        {},
        headings.map((h, i) => el('th', { scope: 'col', class: i === 2 || i === 7 ? 'wide' : '', text: h })),
      );
      box.appendChild(
        el('div', { class: 'table-wrap' }, [
          el('table', { id: 'sessions' }, [el('thead', {}, [head]), el('tbody', {}, rows)]),
        ]),
      );
      const pages = Math.max(1, Math.ceil(body.total / body.pageSize));
      const turn = (by: number) => () => {
        fleet.page += by;
        void loadFleet();
      };
      const prev = el('button', { id: 'prev', onclick: turn(-1) }, ['Previous']);
      const next = el('button', { id: 'next', onclick: turn(1) }, ['Next']);
      box.appendChild(
        el('div', { class: 'pager' }, [
          prev,
          el('span', { id: 'page-label', text: `page ${body.page} of ${pages} · ${body.total} sessions` }),
          next,
        ]),
      );
      prev.disabled = body.page <= 1;
      next.disabled = body.page >= pages;
    })
    .catch(showError);
}

function loadOverview(): Promise<void> {
  return api<FleetOverview>('GET', '/v1/console/overview')
    .then((o) => {
      const tenths = o.pressure.map((_, i) => `${i * 10}–${(i + 1) * 10}%`);
      chart(byId('pressure-box'), 'pressure-chart', 'sessions by context pressure', {
        type: 'bar',
        data: { labels: tenths, datasets: [{ label: 'sessions', data: o.pressure, backgroundColor: '#5470c6' }] },
      });
      const hours = o.compactionsPerHour.map((h) => h.hour.slice(11, 16));
      chart(byId('compactions-box'), 'compactions-chart', 'compactions per hour', {
        type: 'bar',
        data: {
          labels: hours,
          datasets: [
            {
              label: 'succeeded',
              data: o.compactionsPerHour.map((h) => h.total - h.failed),
              backgroundColor: '#91cc75',
            },
            {
              label: 'failed or degraded',
              data: o.compactionsPerHour.map((h) => h.failed),
              backgroundColor: '#b00020',
            },
          ],
        },
        options: { scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true } } },
      });
    })
    .catch(showError);
}

// A session: status, compactions with their summaries and a retry each, the transcript by pages.
let session = { key: '', page: 0, total: -1, compactions: '', subagents: '' };
function drawSession(key: string): void {
  clearTimeout(timer);
  session = { key, page: 0, total: -1, compactions: '', subagents: '' };
  view.textContent = '';
  view.appendChild(el('p', {}, [el('a', { href: '#/', text: '← Fleet' })]));
  view.appendChild(el('h1', { class: 'key', text: key }));
  view.appendChild(
    el('figure', {}, [
      el('figcaption', { text: 'Context tokens per model reply; compactions and pruned tool output marked' }),
      el('div', { id: 'series-box' }),
    ]),
  );
  for (const id of ['approvals', 'status', 'compactions', 'subagents', 'transcript'])
    view.appendChild(el('section', { id }));
  drawReplay();
  void refreshSession().then(() => poll(refreshSession, 1000));
  // What the session says unasked (its answers to subagents' reports) refreshes at once; polling covers the rest.
  events = new EventSource(path('/events'));
  events.addEventListener('announce', () => void refreshSession());
}
function path(rest: string): string {
  return `/v1/sessions/${encodeURIComponent(session.key)}${rest}`;
}
function refreshSession(): Promise<boolean> {
  return Promise.all([
    loadApprovals(session.key),
    loadStatus(),
    loadCompactions(),
    loadSubagents(),
    loadTranscript().then((changed) => (changed ? loadSeries().then(() => true) : false)),
  ]).then((changed) => changed.some(Boolean));
}
function loadStatus(): Promise<boolean> {
  return api<SessionStatusReport>('GET', path('')).then((s) => {
    const box = byId('status')!;
    box.textContent = '';
    const split = s.contextSplit;
    box.appendChild(el('h2', { text: 'Context' }));
    box.appendChild(contextBar(split, s.contextTokens, s.contextWindow));
    const cache = s.promptCache ? ` · prompt cache hit ${s.promptCache.hitRatePercent}%` : '';
    box.appendChild(
      el('p', {
        id: 'status-line',
        text: `${s.contextTokens} of ${s.contextWindow} tokens (${s.percentUsed}%) · turns ${s.turnsCompleted} · compactions ${s.compactionCount}${cache}`,
      }),
    );
    if (split)
      box.appendChild(
        el('p', {
          class: 'meta',
          text: splitParts(split)
            .map(([name, n]) => `${name} ${n}`)
            .join(' · '),
        }),
      );
    const b = s.backgroundCompaction;
    if (b)
      box.appendChild(
        el('p', {
          id: 'background-compaction',
          text: `compacting in the background (${b.trigger}) for ${Math.round(b.runningMs / 1000)} s${b.turnWaitingMs === undefined ? '' : ` · a turn has waited ${Math.round(b.turnWaitingMs / 1000)} s: the context reached its limit`}`,
        }),
      );
    const r = s.runningTurn;
    const of = (limit: number | null) => (limit === null ? '' : ` of ${limit}`);
    if (r)
      box.appendChild(
        el('p', {
          id: 'running-turn',
          text: `running turn ${r.turn}: ${r.modelCalls}${of(r.budget.maxModelCalls)} model calls · ${r.tokens}${of(r.budget.maxTokens)} tokens · ${r.toolCalls} tool calls · ${r.compactions} compactions`,
        }),
      );
    return false;
  });
}
function loadSeries(): Promise<void> {
  return api<ContextSeries>('GET', path('/context-series')).then((s) => {
    chart(byId('series-box'), 'context-chart', 'context tokens per model reply', {
      type: 'scatter',
      data: {
        datasets: [
          {
            type: 'line',
            label: 'context tokens',
            data: s.points.map((p) => ({ x: p.seq, y: p.contextTokens })),
            borderColor: '#5470c6',
            pointRadius: 2,
          },
          {
            label: 'compaction (tokens before)',
            data: s.compactions.map((c) => ({ x: c.seq, y: c.tokensBefore })),
            backgroundColor: '#b00020',
            pointStyle: 'triangle',
            pointRadius: 7,
          },
          {
            label: 'tool output pruned',
            data: s.prunes.map((p) => ({ x: p.seq, y: p.contextTokens, pruned: p.toolResults })),
            borderColor: '#e07b00',
            backgroundColor: 'transparent',
            pointStyle: 'crossRot',
            pointRadius: 7,
            borderWidth: 2,
          },
        ],
      },
      options: { scales: { x: { title: { display: true, text: 'transcript position' } }, y: { beginAtZero: true } } },
    });
  });
}
function loadCompactions(): Promise<boolean> {
  return api<z.infer<typeof sessionCompactions>>('GET', path('/compactions')).then((body) => {
    const signature = JSON.stringify(body.compactions.map((c) => [c.id, c.status, c.degraded]));
    if (signature === session.compactions) return false;
    session.compactions = signature;
    const box = byId('compactions')!;
    box.textContent = '';
    box.appendChild(el('h2', { text: 'Compactions' }));
    if (body.compactions.length === 0) box.appendChild(el('p', { text: 'none yet' }));
    for (const c of body.compactions) box.appendChild(compactionItem(c));
    return true;
  });
}
function compactionItem(c: SessionCompaction): HTMLElement {
  const bad = c.status === 'failed' || c.degraded;
  const tokens = `${c.tokensBefore === null ? '?' : c.tokensBefore} → ${c.tokensAfter === null ? '?' : c.tokensAfter}`;
  const item = el(
    'article',
    {
      class: `compaction${bad ? ' failed' : ''}`,
      'data-compaction': c.id,
      'data-status': c.status + (c.degraded ? ' degraded' : ''),
    },
    [
      el('h3', {
        text: `${c.id} · ${c.trigger} · ${c.status}${c.degraded ? ' (degraded)' : ''}${c.retryOf ? ` · retry of ${c.retryOf}` : ''}`,
      }),
      el('p', {
        class: 'meta',
        text: `${when(c.startedAt)} · tokens ${tokens}${c.firstKeptEntryId ? ` · kept from entry ${c.firstKeptEntryId}` : ''}`,
      }),
      c.error ? el('p', { class: 'error', text: c.error }) : null,
      c.summary
        ? el('details', {}, [el('summary', { text: 'Summary' }), el('pre', { class: 'summary', text: c.summary })])
        : null,
      c.kept ? keptList(c.kept) : null,
    ],
  );
  if (bad) item.appendChild(el('button', { class: 'danger', 'data-retry': c.id, onclick: () => retry(c) }, ['Retry']));
  if (c.status === 'succeeded' && c.entryId) {
    const revert = `Revert compaction ${c.id}? The session sees the transcript from before it again (nothing is deleted; the revert can be reverted).`;
    const rerun = `Summarize the range of ${c.id} again? It is recorded beside it; the session is unchanged.`;
    item.appendChild(el('button', { 'data-revert': c.id, onclick: () => edit(c, 'revert', revert, null) }, ['Revert']));
    item.appendChild(el('button', { 'data-rerun': c.id, onclick: () => edit(c, 'rerun', rerun, '{}') }, ['Rerun']));
  }
  return item;
}
/** What the summary preserved: its identifiers and its decisions and instructions, folded. */
function keptList(kept: NonNullable<SessionCompaction['kept']>): HTMLElement {
  const list = (cls: string, title: string, items: string[]) =>
    el('div', { class: cls }, [
      el('h4', { text: `${title} (${items.length})` }),
      items.length
        ? el(
            'ul',
            {},
            items.map((t) => el('li', { text: t })),
          )
        : el('p', { class: 'meta', text: 'none' }),
    ]);
  return el('details', { class: 'kept' }, [
    el('summary', { text: `Kept: ${kept.identifiers.length} identifiers, ${kept.decisions.length} decisions` }),
    list('kept-identifiers', 'Identifiers', kept.identifiers),
    list('kept-decisions', 'Decisions and instructions', kept.decisions),
  ]);
}
function retry(c: SessionCompaction): void {
  if (!window.confirm(`Retry compaction ${c.id} of ${c.sessionKey}? A fresh compaction of the session starts.`)) return;
  api<z.infer<typeof retryResult>>(
    'POST',
    `/v1/compactions/${encodeURIComponent(c.id)}/retry?agent=${encodeURIComponent(c.agentId)}`,
  )
    .then((r) => {
      const text = `${r.started ? 'started ' : 'joined '}${r.compactionId}`;
      view.insertBefore(el('p', { role: 'status', text }), byId('compactions'));
      poll(refreshSession, 500);
    })
    .catch(showError);
}
function loadSubagents(): Promise<boolean> {
  return api<z.infer<typeof subagentsList>>('GET', path('/subagents')).then((body) => {
    const signature = JSON.stringify(body.subagents.map((r) => [r.id, r.status]));
    if (signature === session.subagents) return false;
    session.subagents = signature;
    const box = byId('subagents')!;
    box.textContent = '';
    const under = (key: string): HTMLElement | null => {
      const runs = body.subagents.filter((r) => r.parentSessionKey === key);
      if (runs.length === 0) return null;
      return el('ul', { class: 'tree' }, runs.map(subagentItem(under)));
    };
    const tree = under(session.key);
    if (tree) {
      box.appendChild(el('h2', { text: 'Subagents' }));
      box.appendChild(tree);
    }
    return true;
  });
}
/** A run with Kill and Steer while it lives, and the runs it spawned under it. */
function subagentItem(under: (key: string) => HTMLElement | null) {
  return (r: Subagent): HTMLElement => {
    const name = r.label || r.id;
    const steer = el('input', { 'aria-label': `message to ${name}`, placeholder: 'steer: a message' });
    const live = r.endedAt === null;
    const sendSteer = (e: Event) => {
      e.preventDefault();
      subagentAction(r, 'steer', null, JSON.stringify({ text: steer.value }));
    };
    return el('li', { 'data-subagent': r.id, 'data-state': r.status }, [
      el('a', { href: `#/s/${encodeURIComponent(r.childSessionKey)}`, text: name }),
      ` · ${r.status} · ${r.mode} · ${r.task.slice(0, 120)}`,
      live
        ? el('button', { class: 'danger', onclick: () => subagentAction(r, 'kill', `Stop subagent ${name}?`, null) }, [
            'Kill',
          ])
        : null,
      live ? el('form', { onsubmit: sendSteer }, [steer, el('button', { type: 'submit', text: 'Steer' })]) : null,
      under(r.childSessionKey),
    ]);
  };
}
function subagentAction(r: Subagent, verb: 'kill' | 'steer', question: string | null, body: string | null): void {
  if (question && !window.confirm(question)) return;
  post<z.infer<typeof killResult>>(
    `/v1/subagents/${encodeURIComponent(r.id)}/${verb}?agent=${encodeURIComponent(r.agentId)}`,
    body || '',
  )
    .then((b) => {
      view.insertBefore(el('p', { role: 'status', text: b.message }), byId('subagents'));
      poll(refreshSession, 500);
    })
    .catch(showError);
}
/** The what-if replay: a policy the operator edits, replayed on the server, the report in a sandboxed frame. */
function drawReplay(): void {
  const policy = el('textarea', { id: 'replay-policy', rows: '3', cols: '60', 'aria-label': 'replay policy (JSON)' });
  policy.value = '{ "name": "half the window", "contextWindowTokens": 100000 }';
  const out = el('div', { id: 'replay-out' });
  const run = () => {
    out.textContent = 'replaying…';
    let body: string;
    try {
      body = JSON.stringify({ policy: JSON.parse(policy.value) as unknown });
    } catch (e) {
      out.textContent = `the policy is not JSON: ${e instanceof Error ? e.message : String(e)}`;
      return;
    }
    fetch(path('/replay'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      credentials: 'same-origin',
      body,
    })
      .then((res) =>
        res.text().then((text) => {
          out.textContent = '';
          if (!res.ok) {
            const { detail } = JSON.parse(text) as { detail: string };
            out.appendChild(el('p', { class: 'error', role: 'alert', text: detail }));
            return;
          }
          const frame = el('iframe', {
            id: 'replay-frame',
            title: 'replay report',
            sandbox: 'allow-scripts',
            style: 'width:100%;height:900px;border:1px solid #e3e6ea;background:#fff',
          });
          frame.srcdoc = text;
          out.appendChild(frame);
        }),
      )
      .catch(showError);
  };
  view.appendChild(
    el('section', { id: 'replay' }, [
      el('h2', { text: 'What-if replay' }),
      el('p', {
        class: 'meta',
        text: 'The session replayed under its agent’s configuration and this policy (keel replay; extractive summaries).',
      }),
      policy,
      el('p', {}, [el('button', { id: 'replay-run', onclick: run }, ['Replay'])]),
      out,
    ]),
  );
}
/** A revert or rerun, confirmed: the server answers once the edit is done. */
function edit(c: SessionCompaction, verb: 'revert' | 'rerun', question: string, body: string | null): void {
  if (!window.confirm(question)) return;
  const url = `/v1/compactions/${encodeURIComponent(c.id)}/${verb}?agent=${encodeURIComponent(c.agentId)}`;
  post<z.infer<typeof compactionEdit>>(url, body || '')
    .then((r) => {
      view.insertBefore(
        el('p', { role: 'status', text: `${verb} recorded as ${r.compaction.id}` }),
        byId('compactions'),
      );
      poll(refreshSession, 200);
    })
    .catch(showError);
}
function loadTranscript(page?: number): Promise<boolean> {
  const wanted = page || session.page || 0;
  return api<TranscriptPage>('GET', path('/transcript?page=1&pageSize=1')).then((head) => {
    const last = Math.max(1, Math.ceil(head.total / PAGE_SIZE));
    const target = wanted === 0 ? last : wanted;
    if (head.total === session.total && target === session.page && !page) return false;
    return api<TranscriptPage>('GET', path(`/transcript?page=${target}&pageSize=${PAGE_SIZE}`)).then((body) => {
      session.total = body.total;
      session.page = wanted === 0 ? 0 : target;
      drawTranscript(body, target, last);
      return true;
    });
  });
}
function entryText(e: TranscriptPage['entries'][number]): HTMLElement {
  // Tool results and long texts fold: the page stays scannable.
  if (e.toolName)
    return el('details', { class: 'tool' }, [
      el('summary', { text: `tool result ${e.toolName}` }),
      el('pre', { text: e.text }),
    ]);
  if (e.text.length > LONG_TEXT)
    return el('details', {}, [
      el('summary', { text: `${e.text.slice(0, 200)}… (${e.text.length} characters)` }),
      el('pre', { text: e.text }),
    ]);
  return el('pre', { text: e.text });
}
function drawTranscript(body: TranscriptPage, page: number, last: number): void {
  const box = byId('transcript')!;
  box.textContent = '';
  box.appendChild(el('h2', { text: 'Transcript' }));
  for (const e of body.entries) {
    const calls = e.toolCalls.map((t) =>
      el('details', { class: 'tool' }, [
        el('summary', { text: `tool call ${t.name}` }),
        el('pre', { text: t.arguments }),
      ]),
    );
    const meta = `#${e.seq} ${e.role || e.type} · ${when(e.createdAt)}${e.tokens !== null ? ` · ${e.tokens} tokens` : ''}`;
    box.appendChild(
      el('div', { class: 'entry', 'data-role': e.role || e.type }, [
        el('div', { class: 'meta', text: meta }),
        entryText(e),
        ...calls,
      ]),
    );
  }
  box.appendChild(
    el('div', { class: 'pager' }, [
      el('button', { onclick: () => void loadTranscript(page - 1), disabled: page <= 1 ? '' : null }, ['Earlier']),
      el('span', { text: `page ${page} of ${last}` }),
      el('button', { onclick: () => void loadTranscript(page + 1 > last ? 0 : page + 1) }, ['Later']),
    ]),
  );
}

function route(): void {
  if (events) {
    events.close();
    events = null;
  }
  const m = /^#\/s\/(.+)$/.exec(location.hash);
  if (m) drawSession(decodeURIComponent(m[1]!));
  else drawFleet();
}
window.addEventListener('hashchange', route);
route();
