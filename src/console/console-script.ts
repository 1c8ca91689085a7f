/**
 * The console's browser script, served as /console/console.js. Plain JavaScript for any browser in
 * use: two views chosen by the URL hash (`#/` the fleet, `#/s/<key>` a session), drawn from the
 * paginated JSON routes with the login cookie, refreshed by polling that backs off while nothing changes.
 * Text from the server is set with textContent, never parsed as HTML.
 */
export const CONSOLE_SCRIPT = String.raw`
'use strict';
(function () {
  var view = document.getElementById('view');
  var timer = null;
  var events = null;
  var PAGE_SIZE = 50;
  var LONG_TEXT = 1500;

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (attrs[k] === null || attrs[k] === undefined) return;
      if (k === 'text') node.textContent = attrs[k];
      else if (k.slice(0, 2) === 'on') node.addEventListener(k.slice(2), attrs[k]);
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) node.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    return node;
  }
  function api(method, path) {
    return fetch(path, { method: method, headers: { accept: 'application/json' }, credentials: 'same-origin' }).then(function (res) {
      if (res.status === 401) { location.href = '/'; throw new Error('logged out'); }
      return res.json().then(function (body) {
        if (!res.ok) throw new Error(body.detail || res.statusText);
        return body;
      });
    });
  }
  function when(iso) { return iso ? iso.slice(0, 19).replace('T', ' ') : ''; }
  function bar(parts, label) {
    var b = el('div', { class: 'bar', role: 'img', 'aria-label': label, title: label });
    parts.forEach(function (p) { b.appendChild(el('span', { class: 'p-' + p[0], style: 'width:' + Math.min(100, p[1]) + '%' })); });
    return b;
  }
  /** The context as the chat splits it (system, workspace, tools, history), or one bar before a turn measured the split. */
  function contextBar(split, tokens, window) {
    var w = window || 1;
    var parts = split ? [['system', split.systemTokens], ['workspace', split.bootstrapTokens], ['tools', split.toolTokens], ['history', split.historyTokens]] : [['used', tokens]];
    return bar(parts.map(function (p) { return [p[0], (p[1] / w) * 100]; }), parts.map(function (p) { return p[0] + ' ' + p[1]; }).join(', ') + ' of ' + window);
  }
  function showError(err) { view.appendChild(el('p', { class: 'error', role: 'alert', text: String(err && err.message || err) })); }
  /** A Chart.js chart on a fresh canvas in box (no animation: drawn at once, also for the tests). */
  function chart(box, id, label, config) {
    box.textContent = '';
    var canvas = el('canvas', { id: id, role: 'img', 'aria-label': label, width: '600', height: '240' });
    box.appendChild(canvas);
    config.options = Object.assign({ animation: false, responsive: true, maintainAspectRatio: false }, config.options || {});
    box.style.height = '240px';
    new window.Chart(canvas, config);
  }
  /** Calls refresh now, then again after delay; the delay doubles while refresh reports no change. */
  function poll(refresh, delay) {
    clearTimeout(timer);
    timer = setTimeout(function () {
      refresh().then(function (changed) { poll(refresh, changed ? 1000 : Math.min(delay * 2, 15000)); }, function () { poll(refresh, Math.min(delay * 2, 15000)); });
    }, delay);
  }

  // The fleet: one page at a time, filtered and sorted by the server.
  var fleet = { page: 1, sort: 'updated', q: '' };
  function drawFleet() {
    clearTimeout(timer);
    view.textContent = '';
    var q = el('input', { id: 'filter', type: 'search', value: fleet.q, placeholder: 'part of a session key' });
    var sort = el('select', { id: 'sort' }, [['updated', 'last activity'], ['context', 'context used'], ['compactions', 'compactions'], ['key', 'key']].map(function (o) {
      var opt = el('option', { value: o[0], text: o[1] });
      if (o[0] === fleet.sort) opt.selected = true;
      return opt;
    }));
    var form = el('form', { class: 'filters', role: 'search', onsubmit: function (e) { e.preventDefault(); fleet.q = q.value; fleet.sort = sort.value; fleet.page = 1; loadFleet(); } }, [
      el('label', { for: 'filter' }, ['Filter', q]), el('label', { for: 'sort' }, ['Sort by', sort]), el('button', { type: 'submit', text: 'Apply' }),
    ]);
    view.appendChild(el('h1', { text: 'Fleet' }));
    view.appendChild(el('div', { class: 'charts' }, [
      el('figure', {}, [el('figcaption', { text: 'Sessions by context pressure (share of window)' }), el('div', { id: 'pressure-box' })]),
      el('figure', {}, [el('figcaption', { text: 'Compactions per hour, failed or degraded in red' }), el('div', { id: 'compactions-box' })]),
    ]));
    view.appendChild(el('section', { id: 'approvals' }));
    view.appendChild(form);
    view.appendChild(el('div', { id: 'fleet' }));
    loadFleet();
    loadOverview();
    loadApprovals(null).catch(showError);
    poll(function () { return loadApprovals(null); }, 2000);
  }

  /** Tool calls waiting for a person (the fleet's, or one session's), each with Approve and Deny. */
  function loadApprovals(sessionKey) {
    return api('GET', '/v1/approvals').then(function (body) {
      var waiting = body.approvals.filter(function (a) { return !sessionKey || a.sessionKey === sessionKey; });
      var box = document.getElementById('approvals');
      var signature = JSON.stringify(waiting.map(function (a) { return a.id; }));
      if (!box || signature === box.getAttribute('data-signature')) return false;
      box.setAttribute('data-signature', signature);
      box.textContent = '';
      if (waiting.length === 0) return true;
      box.appendChild(el('h2', { text: 'Waiting for approval (' + waiting.length + ')' }));
      waiting.forEach(function (a) {
        box.appendChild(el('article', { class: 'approval', 'data-approval': a.id }, [
          el('h3', { text: a.toolName + ' · ' + a.id }),
          el('p', { class: 'meta' }, [
            sessionKey ? null : el('a', { href: '#/s/' + encodeURIComponent(a.sessionKey), text: a.sessionKey }),
            ' waits until ' + when(a.deadline) + (a.approvers ? ' · approvers: ' + a.approvers.join(', ') : ''),
          ]),
          el('pre', { class: 'arguments', text: JSON.stringify(a.arguments, null, 2) }),
          el('button', { 'data-approve': a.id, onclick: function () { decide(a, 'approve', sessionKey); } }, ['Approve']),
          el('button', { class: 'danger', 'data-deny': a.id, onclick: function () { decide(a, 'deny', sessionKey); } }, ['Deny']),
        ]));
      });
      return true;
    });
  }
  /** An approval confirmed, or a denial with the reason the model is told; the first decision on a call wins. */
  function decide(a, decision, sessionKey) {
    var body = { decision: decision, by: 'console' };
    if (decision === 'approve') {
      if (!window.confirm('Run ' + a.toolName + ' for ' + a.sessionKey + '?')) return;
    } else {
      var reason = window.prompt('Deny ' + a.toolName + ' for ' + a.sessionKey + '? The reason is told to the model:', '');
      if (reason === null) return;
      if (reason) body.reason = reason;
    }
    fetch('/v1/approvals/' + encodeURIComponent(a.id), { method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/json' }, credentials: 'same-origin', body: JSON.stringify(body) })
      .then(function (res) { return res.json().then(function (b) { if (!res.ok) throw new Error(b.detail || res.statusText); return b; }); })
      .then(function (r) {
        var box = document.getElementById('approvals');
        view.insertBefore(el('p', { role: 'status', 'data-decided': r.approvalId, text: a.toolName + ' ' + r.status + (r.decidedBy ? ' by ' + r.decidedBy : '') }), box);
        return loadApprovals(sessionKey);
      })
      .catch(showError);
  }
  function loadFleet() {
    var params = new URLSearchParams({ page: String(fleet.page), pageSize: String(PAGE_SIZE), sort: fleet.sort });
    if (fleet.q) params.set('q', fleet.q);
    return api('GET', '/v1/console/sessions?' + params).then(function (body) {
      var box = document.getElementById('fleet');
      if (!box) return;
      box.textContent = '';
      var rows = body.sessions.map(function (s) {
        return el('tr', {}, [
          el('td', { class: 'key' }, [el('a', { href: '#/s/' + encodeURIComponent(s.sessionKey), text: s.sessionKey })]),
          el('td', { text: s.agentId }),
          el('td', { class: 'wide', text: when(s.updatedAt) }),
          el('td', { class: 'context' }, [contextBar(s.contextSplit, s.contextTokens, s.contextWindow), el('small', { text: ' ' + s.percentUsed + '%' })]),
          el('td', { class: 'cache', text: s.promptCache ? s.promptCache.hitRatePercent + '%' : '–' }),
          el('td', { text: String(s.compactions) }),
          el('td', { class: s.failedCompactions > 0 ? 'error' : '', text: String(s.failedCompactions) + (s.autoCompactionPaused ? ' (paused)' : '') }),
          el('td', { class: 'wide', text: String(s.contextWindow) }),
        ]);
      });
      var head = el('tr', {}, ['Session', 'Agent', 'Last activity', 'Context', 'Cache hit', 'Compactions', 'Failed', 'Window'].map(function (h, i) { return el('th', { scope: 'col', class: i === 2 || i === 7 ? 'wide' : '', text: h }); }));
      box.appendChild(el('div', { class: 'table-wrap' }, [el('table', { id: 'sessions' }, [el('thead', {}, [head]), el('tbody', {}, rows)])]));
      var pages = Math.max(1, Math.ceil(body.total / body.pageSize));
      box.appendChild(el('div', { class: 'pager' }, [
        el('button', { id: 'prev', onclick: function () { fleet.page--; loadFleet(); } }, ['Previous']),
        el('span', { id: 'page-label', text: 'page ' + body.page + ' of ' + pages + ' · ' + body.total + ' sessions' }),
        el('button', { id: 'next', onclick: function () { fleet.page++; loadFleet(); } }, ['Next']),
      ]));
      document.getElementById('prev').disabled = body.page <= 1;
      document.getElementById('next').disabled = body.page >= pages;
    }).catch(showError);
  }

  function loadOverview() {
    return api('GET', '/v1/console/overview').then(function (o) {
      var tenths = o.pressure.map(function (_, i) { return i * 10 + '–' + (i + 1) * 10 + '%'; });
      chart(document.getElementById('pressure-box'), 'pressure-chart', 'sessions by context pressure', {
        type: 'bar', data: { labels: tenths, datasets: [{ label: 'sessions', data: o.pressure, backgroundColor: '#5470c6' }] },
      });
      var hours = o.compactionsPerHour.map(function (h) { return h.hour.slice(11, 16); });
      chart(document.getElementById('compactions-box'), 'compactions-chart', 'compactions per hour', {
        type: 'bar',
        data: { labels: hours, datasets: [
          { label: 'succeeded', data: o.compactionsPerHour.map(function (h) { return h.total - h.failed; }), backgroundColor: '#91cc75' },
          { label: 'failed or degraded', data: o.compactionsPerHour.map(function (h) { return h.failed; }), backgroundColor: '#b00020' },
        ] },
        options: { scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true } } },
      });
    }).catch(showError);
  }

  // A session: status, compactions with their summaries and a retry each, the transcript by pages.
  var session = { key: '', page: 0, total: -1, compactions: '', subagents: '' };
  function drawSession(key) {
    clearTimeout(timer);
    session = { key: key, page: 0, total: -1, compactions: '', subagents: '' };
    view.textContent = '';
    view.appendChild(el('p', {}, [el('a', { href: '#/', text: '← Fleet' })]));
    view.appendChild(el('h1', { class: 'key', text: key }));
    view.appendChild(el('figure', {}, [el('figcaption', { text: 'Context tokens per model reply; compactions and pruned tool output marked' }), el('div', { id: 'series-box' })]));
    ['approvals', 'status', 'compactions', 'subagents', 'transcript'].forEach(function (id) { view.appendChild(el('section', { id: id })); });
    drawReplay();
    refreshSession().then(function () { poll(refreshSession, 1000); });
    // What the session says unasked (its answers to subagents' reports) refreshes at once; polling covers the rest.
    events = new EventSource(path('/events'));
    events.addEventListener('announce', function () { refreshSession(); });
  }
  function path(rest) { return '/v1/sessions/' + encodeURIComponent(session.key) + rest; }
  function refreshSession() {
    return Promise.all([loadApprovals(session.key), loadStatus(), loadCompactions(), loadSubagents(), loadTranscript().then(function (changed) { return changed ? loadSeries().then(function () { return true; }) : false; })]).then(function (changed) { return changed.some(Boolean); });
  }
  function loadStatus() {
    return api('GET', path('')).then(function (s) {
      var box = document.getElementById('status');
      box.textContent = '';
      var split = s.contextSplit;
      var parts = split ? [['system', split.systemTokens], ['workspace', split.bootstrapTokens], ['tools', split.toolTokens], ['history', split.historyTokens]] : [];
      box.appendChild(el('h2', { text: 'Context' }));
      box.appendChild(contextBar(split, s.contextTokens, s.contextWindow));
      box.appendChild(el('p', { id: 'status-line', text: s.contextTokens + ' of ' + s.contextWindow + ' tokens (' + s.percentUsed + '%) · turns ' + s.turnsCompleted + ' · compactions ' + s.compactionCount + (s.promptCache ? ' · prompt cache hit ' + s.promptCache.hitRatePercent + '%' : '') }));
      if (split) box.appendChild(el('p', { class: 'meta', text: parts.map(function (p) { return p[0] + ' ' + p[1]; }).join(' · ') }));
      var r = s.runningTurn;
      var of = function (limit) { return limit === null ? '' : ' of ' + limit; };
      if (r) box.appendChild(el('p', { id: 'running-turn', text: 'running turn ' + r.turn + ': ' + r.modelCalls + of(r.budget.maxModelCalls) + ' model calls · ' + r.tokens + of(r.budget.maxTokens) + ' tokens · ' + r.toolCalls + ' tool calls · ' + r.compactions + ' compactions' }));
      return false;
    });
  }
  function loadSeries() {
    return api('GET', path('/context-series')).then(function (s) {
      chart(document.getElementById('series-box'), 'context-chart', 'context tokens per model reply', {
        type: 'scatter',
        data: { datasets: [
          { type: 'line', label: 'context tokens', data: s.points.map(function (p) { return { x: p.seq, y: p.contextTokens }; }), borderColor: '#5470c6', pointRadius: 2 },
          { label: 'compaction (tokens before)', data: s.compactions.map(function (c) { return { x: c.seq, y: c.tokensBefore }; }), backgroundColor: '#b00020', pointStyle: 'triangle', pointRadius: 7 },
          { label: 'tool output pruned', data: s.prunes.map(function (p) { return { x: p.seq, y: p.contextTokens, pruned: p.toolResults }; }), borderColor: '#e07b00', backgroundColor: 'transparent', pointStyle: 'crossRot', pointRadius: 7, borderWidth: 2 },
        ] },
        options: { scales: { x: { title: { display: true, text: 'transcript position' } }, y: { beginAtZero: true } } },
      });
    });
  }
  function loadCompactions() {
    return api('GET', path('/compactions')).then(function (body) {
      var signature = JSON.stringify(body.compactions.map(function (c) { return [c.id, c.status, c.degraded]; }));
      if (signature === session.compactions) return false;
      session.compactions = signature;
      var box = document.getElementById('compactions');
      box.textContent = '';
      box.appendChild(el('h2', { text: 'Compactions' }));
      if (body.compactions.length === 0) box.appendChild(el('p', { text: 'none yet' }));
      body.compactions.forEach(function (c) {
        var bad = c.status === 'failed' || c.degraded;
        var item = el('article', { class: 'compaction' + (bad ? ' failed' : ''), 'data-compaction': c.id, 'data-status': c.status + (c.degraded ? ' degraded' : '') }, [
          el('h3', { text: c.id + ' · ' + c.trigger + ' · ' + c.status + (c.degraded ? ' (degraded)' : '') + (c.retryOf ? ' · retry of ' + c.retryOf : '') }),
          el('p', { class: 'meta', text: when(c.startedAt) + ' · tokens ' + (c.tokensBefore === null ? '?' : c.tokensBefore) + ' → ' + (c.tokensAfter === null ? '?' : c.tokensAfter) + (c.firstKeptEntryId ? ' · kept from entry ' + c.firstKeptEntryId : '') }),
          c.error ? el('p', { class: 'error', text: c.error }) : null,
          c.summary ? el('details', {}, [el('summary', { text: 'Summary' }), el('pre', { class: 'summary', text: c.summary })]) : null,
          c.kept ? keptList(c.kept) : null,
        ]);
        if (bad) item.appendChild(el('button', { class: 'danger', 'data-retry': c.id, onclick: function () { retry(c); } }, ['Retry']));
        if (c.status === 'succeeded' && c.entryId) {
          item.appendChild(el('button', { 'data-revert': c.id, onclick: function () { edit(c, 'revert', 'Revert compaction ' + c.id + '? The session sees the transcript from before it again (nothing is deleted; the revert can be reverted).', null); } }, ['Revert']));
          item.appendChild(el('button', { 'data-rerun': c.id, onclick: function () { edit(c, 'rerun', 'Summarize the range of ' + c.id + ' again? It is recorded beside it; the session is unchanged.', '{}'); } }, ['Rerun']));
        }
        box.appendChild(item);
      });
      return true;
    });
  }
  /** What the summary preserved: its identifiers and its decisions and instructions, folded. */
  function keptList(kept) {
    var list = function (cls, title, items) {
      return el('div', { class: cls }, [el('h4', { text: title + ' (' + items.length + ')' }), items.length ? el('ul', {}, items.map(function (t) { return el('li', { text: t }); })) : el('p', { class: 'meta', text: 'none' })]);
    };
    return el('details', { class: 'kept' }, [
      el('summary', { text: 'Kept: ' + kept.identifiers.length + ' identifiers, ' + kept.decisions.length + ' decisions' }),
      list('kept-identifiers', 'Identifiers', kept.identifiers),
      list('kept-decisions', 'Decisions and instructions', kept.decisions),
    ]);
  }
  function retry(c) {
    if (!window.confirm('Retry compaction ' + c.id + ' of ' + c.sessionKey + '? A fresh compaction of the session starts.')) return;
    api('POST', '/v1/compactions/' + encodeURIComponent(c.id) + '/retry?agent=' + encodeURIComponent(c.agentId)).then(function (r) {
      view.insertBefore(el('p', { role: 'status', text: (r.started ? 'started ' : 'joined ') + r.compactionId }), document.getElementById('compactions'));
      poll(refreshSession, 500);
    }).catch(showError);
  }
  function loadSubagents() {
    return api('GET', path('/subagents')).then(function (body) {
      var signature = JSON.stringify(body.subagents.map(function (r) { return [r.id, r.status]; }));
      if (signature === session.subagents) return false;
      session.subagents = signature;
      var box = document.getElementById('subagents');
      box.textContent = '';
      var under = function (key) {
        var runs = body.subagents.filter(function (r) { return r.parentSessionKey === key; });
        if (runs.length === 0) return null;
        return el('ul', { class: 'tree' }, runs.map(function (r) {
          var steer = el('input', { 'aria-label': 'message to ' + (r.label || r.id), placeholder: 'steer: a message' });
          var live = r.endedAt === null;
          return el('li', { 'data-subagent': r.id, 'data-state': r.status }, [
            el('a', { href: '#/s/' + encodeURIComponent(r.childSessionKey), text: (r.label || r.id) }),
            ' · ' + r.status + ' · ' + r.mode + ' · ' + r.task.slice(0, 120),
            live ? el('button', { class: 'danger', onclick: function () { subagentAction(r, 'kill', 'Stop subagent ' + (r.label || r.id) + '?', null); } }, ['Kill']) : null,
            live ? el('form', { onsubmit: function (e) { e.preventDefault(); subagentAction(r, 'steer', null, JSON.stringify({ text: steer.value })); } }, [steer, el('button', { type: 'submit', text: 'Steer' })]) : null,
            under(r.childSessionKey),
          ]);
        }));
      };
      var tree = under(session.key);
      if (tree) {
        box.appendChild(el('h2', { text: 'Subagents' }));
        box.appendChild(tree);
      }
      return true;
    });
  }
  function subagentAction(r, verb, question, body) {
    if (question && !window.confirm(question)) return;
    fetch('/v1/subagents/' + encodeURIComponent(r.id) + '/' + verb + '?agent=' + encodeURIComponent(r.agentId), { method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/json' }, credentials: 'same-origin', body: body || '' })
      .then(function (res) { return res.json().then(function (b) { if (!res.ok) throw new Error(b.detail || res.statusText); return b; }); })
      .then(function (b) { view.insertBefore(el('p', { role: 'status', text: b.message }), document.getElementById('subagents')); poll(refreshSession, 500); })
      .catch(showError);
  }
  /** The what-if replay: a policy the operator edits, replayed on the server, the report in a sandboxed frame. */
  function drawReplay() {
    var policy = el('textarea', { id: 'replay-policy', rows: '3', cols: '60', 'aria-label': 'replay policy (JSON)' });
    policy.value = '{ "name": "half the window", "contextWindowTokens": 100000 }';
    var out = el('div', { id: 'replay-out' });
    view.appendChild(el('section', { id: 'replay' }, [
      el('h2', { text: 'What-if replay' }),
      el('p', { class: 'meta', text: 'The session replayed under its agent’s configuration and this policy (keel replay; extractive summaries).' }),
      policy,
      el('p', {}, [el('button', { id: 'replay-run', onclick: function () {
        out.textContent = 'replaying…';
        var body;
        try { body = JSON.stringify({ policy: JSON.parse(policy.value) }); } catch (e) { out.textContent = 'the policy is not JSON: ' + e.message; return; }
        fetch(path('/replay'), { method: 'POST', headers: { 'content-type': 'application/json' }, credentials: 'same-origin', body: body }).then(function (res) {
          return res.text().then(function (text) {
            out.textContent = '';
            if (!res.ok) { out.appendChild(el('p', { class: 'error', role: 'alert', text: JSON.parse(text).detail })); return; }
            var frame = el('iframe', { id: 'replay-frame', title: 'replay report', sandbox: 'allow-scripts', style: 'width:100%;height:900px;border:1px solid #e3e6ea;background:#fff' });
            frame.srcdoc = text;
            out.appendChild(frame);
          });
        }).catch(showError);
      } }, ['Replay'])]),
      out,
    ]));
  }
  /** A revert or rerun, confirmed: the server answers once the edit is done. */
  function edit(c, verb, question, body) {
    if (!window.confirm(question)) return;
    var url = '/v1/compactions/' + encodeURIComponent(c.id) + '/' + verb + '?agent=' + encodeURIComponent(c.agentId);
    fetch(url, { method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/json' }, credentials: 'same-origin', body: body || '' })
      .then(function (res) { return res.json().then(function (b) { if (!res.ok) throw new Error(b.detail || res.statusText); return b; }); })
      .then(function (r) {
        view.insertBefore(el('p', { role: 'status', text: verb + ' recorded as ' + r.compaction.id }), document.getElementById('compactions'));
        poll(refreshSession, 200);
      })
      .catch(showError);
  }
  function loadTranscript(page) {
    var wanted = page || session.page || 0;
    var probe = api('GET', path('/transcript?page=1&pageSize=1'));
    return probe.then(function (head) {
      var last = Math.max(1, Math.ceil(head.total / PAGE_SIZE));
      var target = wanted === 0 ? last : wanted;
      if (head.total === session.total && target === session.page && !page) return false;
      return api('GET', path('/transcript?page=' + target + '&pageSize=' + PAGE_SIZE)).then(function (body) {
        session.total = body.total;
        session.page = wanted === 0 ? 0 : target;
        drawTranscript(body, target, last);
        return true;
      });
    });
  }
  function drawTranscript(body, page, last) {
    var box = document.getElementById('transcript');
    box.textContent = '';
    box.appendChild(el('h2', { text: 'Transcript' }));
    body.entries.forEach(function (e) {
      var calls = e.toolCalls.map(function (t) { return el('details', { class: 'tool' }, [el('summary', { text: 'tool call ' + t.name }), el('pre', { text: t.arguments })]); });
      // Tool results and long texts fold: the page stays scannable.
      var text = e.toolName ? el('details', { class: 'tool' }, [el('summary', { text: 'tool result ' + e.toolName }), el('pre', { text: e.text })])
        : e.text.length > LONG_TEXT ? el('details', {}, [el('summary', { text: e.text.slice(0, 200) + '… (' + e.text.length + ' characters)' }), el('pre', { text: e.text })])
        : el('pre', { text: e.text });
      box.appendChild(el('div', { class: 'entry', 'data-role': e.role || e.type }, [el('div', { class: 'meta', text: '#' + e.seq + ' ' + (e.role || e.type) + ' · ' + when(e.createdAt) + (e.tokens !== null ? ' · ' + e.tokens + ' tokens' : '') }), text].concat(calls)));
    });
    box.appendChild(el('div', { class: 'pager' }, [
      el('button', { onclick: function () { loadTranscript(page - 1); }, disabled: page <= 1 ? '' : null }, ['Earlier']),
      el('span', { text: 'page ' + page + ' of ' + last }),
      el('button', { onclick: function () { loadTranscript(page + 1 > last ? 0 : page + 1); } }, ['Later']),
    ]));
  }

  function route() {
    if (events) { events.close(); events = null; }
    var m = /^#\/s\/(.+)$/.exec(location.hash);
    if (m) drawSession(decodeURIComponent(m[1]));
    else drawFleet();
  }
  window.addEventListener('hashchange', route);
  route();
})();
`;
