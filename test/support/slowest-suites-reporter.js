// @ts-check
/**
 * A jest reporter that prints the ten slowest suites, with their seconds, when a run ends: CI's log
 * then shows where the run's time went without a second run. Plain JavaScript, as jest loads
 * reporters without its transform.
 */

const { relative } = require('node:path');

/** How many suites the list names. */
const SHOWN = 10;

class SlowestSuitesReporter {
  /**
   * Jest's hook after the last suite; `results` is jest's AggregatedResult (the fields read here).
   * @param {unknown} _contexts
   * @param {{ testResults: Array<{ testFilePath: string; perfStats: { start: number; end: number } }> }} results
   */
  onRunComplete(_contexts, results) {
    const suites = results.testResults
      .map((r) => ({ file: r.testFilePath, seconds: (r.perfStats.end - r.perfStats.start) / 1000 }))
      .filter((s) => Number.isFinite(s.seconds) && s.seconds > 0)
      .sort((a, b) => b.seconds - a.seconds);
    if (suites.length === 0) return;
    const total = suites.reduce((sum, s) => sum + s.seconds, 0);
    const lines = suites
      .slice(0, SHOWN)
      .map((s) => `${s.seconds.toFixed(1).padStart(8)} s  ${relative(process.cwd(), s.file)}`);
    process.stderr.write(
      `\nslowest ${Math.min(SHOWN, suites.length)} of ${suites.length} suites ` +
        `(suite times add up to ${total.toFixed(0)} s):\n${lines.join('\n')}\n`,
    );
  }
}

module.exports = SlowestSuitesReporter;
