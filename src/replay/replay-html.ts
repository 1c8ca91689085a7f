/**
 * The replay report as one self-contained HTML file: Chart.js inlined from node_modules (no
 * network), the report's numbers as inline JSON, the charts drawn on load. Everything that came
 * from the transcript, a policy file or the advice is escaped: as HTML text, or as JSON that
 * cannot end its script element.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ReplayReport } from './replay-report';
import { shortTokens } from './replay-report';
import { adviceSections, type AdviceSection } from './replay-advice';

/** Chart.js's browser build, read once per process. */
let chartJsSource: string | undefined;
function chartJs(): string {
  // The package exports only its module builds; the UMD bundle sits next to them in dist/.
  chartJsSource ??= readFileSync(join(dirname(require.resolve('chart.js')), 'chart.umd.min.js'), 'utf8');
  return chartJsSource;
}

/** Text for an HTML text node or a quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** JSON safe inside a <script> element: no `<` (so no `</script>` or `<!--`), no line separators. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** A script's source inlined: only `</script` could end the element early. */
function inlineScript(source: string): string {
  return source.replace(/<\/(script)/gi, '<\\/$1');
}

/** One colour per policy, in order (distinguishable, and readable on white). */
const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf'];

/** The data the page's script draws from: small, numbers and names only. */
function chartData(report: ReplayReport) {
  return {
    turns: report.turns,
    policies: report.policies.map((run, k) => ({
      name: run.policy.name,
      colour: COLOURS[k % COLOURS.length],
      window: run.policy.contextWindow,
      context: run.turns.map((t) => t.contextTokens),
      summary: run.turns.map((t) => t.summaryChars),
      compactions: run.turns
        .filter((t) => t.compactedAfter || t.compactedMidTurn)
        .map((t) => ({ x: t.turn, y: t.contextTokens })),
      pruned: run.turns.filter((t) => t.prunedResults > 0).map((t) => ({ x: t.turn, y: t.contextTokens })),
    })),
  };
}

/** The page's script: two charts, then `window.replayChartsDrawn` for whoever waits on them. */
const DRAW = `
(function () {
  var data = JSON.parse(document.getElementById('replay-data').textContent);
  var turns = [];
  for (var i = 1; i <= data.turns; i++) turns.push(i);
  var context = [], summary = [];
  data.policies.forEach(function (p) {
    context.push({ type: 'line', label: p.name + ' — context tokens', data: p.context, borderColor: p.colour, backgroundColor: p.colour, pointRadius: 0, borderWidth: 1.5 });
    context.push({ type: 'scatter', label: p.name + ' — compaction', data: p.compactions, borderColor: p.colour, backgroundColor: p.colour, pointStyle: 'triangle', pointRadius: 6 });
    if (p.pruned.length) context.push({ type: 'scatter', label: p.name + ' — pruned', data: p.pruned, borderColor: p.colour, backgroundColor: 'transparent', pointStyle: 'crossRot', pointRadius: 5 });
    summary.push({ type: 'line', label: p.name + ' — summary chars', data: p.summary, borderColor: p.colour, backgroundColor: p.colour, stepped: true, pointRadius: 0, borderWidth: 1.5 });
  });
  var axes = function (y) {
    return { x: { type: 'linear', min: 1, max: Math.max(1, data.turns), title: { display: true, text: 'turn' } }, y: { beginAtZero: true, title: { display: true, text: y } } };
  };
  var options = function (y) { return { animation: false, responsive: false, parsing: { xAxisKey: 'x', yAxisKey: 'y' }, scales: axes(y), plugins: { legend: { position: 'bottom' } } }; };
  var withTurns = function (sets) {
    return sets.map(function (s) { return s.type === 'line' ? Object.assign({}, s, { data: s.data.map(function (y, i) { return { x: i + 1, y: y }; }) }) : s; });
  };
  new Chart(document.getElementById('context-chart'), { type: 'line', data: { datasets: withTurns(context) }, options: options('context tokens') });
  new Chart(document.getElementById('summary-chart'), { type: 'line', data: { datasets: withTurns(summary) }, options: options('summary characters') });
  window.replayChartsDrawn = true;
})();
`;

const STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; }
table { border-collapse: collapse; margin: 8px 0; } td, th { border: 1px solid #ccc; padding: 4px 8px; text-align: left; vertical-align: top; }
tr.differs td { background: #fff6d5; } .swatch { display: inline-block; width: 12px; height: 12px; margin-right: 6px; vertical-align: middle; }
.muted { color: #666; } canvas { border: 1px solid #eee; }
`;

/** A heading of the advice and its items as a nested list (the list draws the bullets, the text has none). */
function adviceItem(section: AdviceSection): string {
  const items =
    section.items.length > 0 ? `<ul>${section.items.map((i) => `<li>${escapeHtml(i)}</li>`).join('')}</ul>` : '';
  return `<li>${escapeHtml(section.heading)}${items}</li>`;
}

/** The report page. */
export function renderReplayHtml(report: ReplayReport): string {
  const e = escapeHtml;
  const policies = report.policies;
  const legend = policies
    .map(
      (run, k) =>
        `<li><span class="swatch" style="background:${COLOURS[k % COLOURS.length]}"></span>${e(run.policy.name)}: window ${e(shortTokens(run.policy.contextWindow))}, reserve ${e(shortTokens(run.policy.reserveTokens))}, engine ${e(run.policy.contextEngine)}</li>`,
    )
    .join('\n');
  const head = `<tr><th>metric</th>${policies.map((r) => `<th>${e(r.policy.name)}</th>`).join('')}</tr>`;
  const rows = report.differences
    .map(
      (d) =>
        `<tr${d.differs ? ' class="differs"' : ''}><td>${e(d.metric)}</td>${d.values.map((v) => `<td>${e(v)}</td>`).join('')}</tr>`,
    )
    .join('\n');
  const compactions = policies
    .map((run) => {
      if (run.compactions.length === 0) return `<h3>${e(run.policy.name)}</h3><p class="muted">no compaction</p>`;
      const lines = run.compactions
        .map(
          (c) =>
            `<tr><td>${c.turn}</td><td>${e(c.trigger)}</td><td>${e(c.status)}</td><td>${c.tokensBefore.toLocaleString('en-US')} → ${c.tokensAfter.toLocaleString('en-US')}</td><td>${c.summaryChars.toLocaleString('en-US')}</td><td>${c.identifiers - c.missingIdentifiers.length} of ${c.identifiers}${c.missingIdentifiers.length ? ` (missing ${e(c.missingIdentifiers.join(', '))})` : ''}</td></tr>`,
        )
        .join('\n');
      return `<h3>${e(run.policy.name)}</h3><table><tr><th>turn</th><th>trigger</th><th>status</th><th>tokens before → after</th><th>summary chars</th><th>identifiers kept</th></tr>\n${lines}</table>`;
    })
    .join('\n');
  const advice =
    report.advice && report.advice.length > 0
      ? `<h2>Advice</h2>\n<ul id="advice">${adviceSections(report.advice).map(adviceItem).join('\n')}</ul>`
      : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>Keel replay: ${e(report.source)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>Keel replay</h1>
<p>${e(report.source)}: ${report.turns} turns, ${report.messages} messages${report.droppedLines ? `, ${report.droppedLines} unusable lines skipped` : ''}.</p>
<ul id="policies">${legend}</ul>
<h2>Context tokens per turn</h2>
<p class="muted">Triangles: a compaction ran in or after that turn. Crosses: the context engine cleared old tool output.</p>
<canvas id="context-chart" width="1000" height="380"></canvas>
<h2>Summary size over time</h2>
<canvas id="summary-chart" width="1000" height="260"></canvas>
<h2>Differences</h2>
<table id="differences">${head}\n${rows}</table>
<h2>Compactions</h2>
${compactions}
${advice}
<script type="application/json" id="replay-data">${scriptJson(chartData(report))}</script>
<script>${inlineScript(chartJs())}</script>
<script>${DRAW}</script>
</body>
</html>
`;
}
