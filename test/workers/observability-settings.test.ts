import { installObservability } from '../../workers/observability';

/** Bad observability settings stop the worker at start with the variable's name (before the runtime is installed). */
describe('observability settings from the environment', () => {
  it('names KEEL_METRICS_PORT when it is not a port', () => {
    expect(() => installObservability({ KEEL_METRICS_PORT: '90000' })).toThrow(
      'KEEL_METRICS_PORT must be a TCP port (1-65535), or 0 to turn it off; got "90000"',
    );
    expect(() => installObservability({ KEEL_TEMPORAL_METRICS_PORT: 'http://x' })).toThrow(
      'KEEL_TEMPORAL_METRICS_PORT must be a TCP port',
    );
  });

  it('names KEEL_LOG_LEVEL when it is not a level', () => {
    expect(() => installObservability({ KEEL_LOG_LEVEL: 'loud' })).toThrow(
      'KEEL_LOG_LEVEL "loud" is not a log level; use one of trace, debug, info, warn, error, fatal, silent',
    );
  });
});
