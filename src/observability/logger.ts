/**
 * Keel's structured logger (pino) and the adapter that makes it Temporal's Runtime logger, so the
 * SDK's own lines, workflow `wf.log` and activity `log` lines all come out as one stream.
 */
import pino, { type DestinationStream, type Logger as PinoLogger } from 'pino';
import pinoPretty from 'pino-pretty';
import type { Logger as TemporalLogger, LogLevel, LogMetadata } from '@temporalio/common';
import { envSwitch, unknownSwitchWord } from '../config/env-switch';
import { ConfigError } from '../config/keel-config';

export interface KeelLoggerOptions {
  /** pino level name (KEEL_LOG_LEVEL); default info. */
  readonly level?: string;
  /** Human-readable lines (pino-pretty) instead of JSON: `keel dev` and KEEL_LOG_PRETTY=1. */
  readonly pretty?: boolean;
  /** Where JSON lines go (tests capture them); default stdout. */
  readonly destination?: DestinationStream;
}

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** A pino logger: JSON lines in production, pretty lines when asked. */
export function createKeelLogger(opts: KeelLoggerOptions = {}): PinoLogger {
  const level = (opts.level ?? 'info').toLowerCase();
  if (!LEVELS.includes(level))
    throw new Error(`KEEL_LOG_LEVEL "${opts.level}" is not a log level; use one of ${LEVELS.join(', ')}`);
  const base = { level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime };
  if (opts.pretty && !opts.destination) {
    // In-process and synchronous (no transport thread): a short CLI run loses no line at exit.
    return pino(base, pinoPretty({ destination: 2, sync: true, ignore: 'pid', translateTime: 'SYS:HH:MM:ss.l' }));
  }
  return opts.destination ? pino(base, opts.destination) : pino(base);
}

/** The logger settings from the environment (KEEL_LOG_LEVEL, KEEL_LOG_PRETTY). */
export function loggerOptionsFromEnv(env: NodeJS.ProcessEnv, defaults: { pretty?: boolean } = {}): KeelLoggerOptions {
  const switched = envSwitch(env.KEEL_LOG_PRETTY);
  if (typeof switched === 'string') throw new ConfigError(`KEEL_LOG_PRETTY: ${unknownSwitchWord(switched)}`);
  const pretty = switched ?? defaults.pretty;
  return { ...(env.KEEL_LOG_LEVEL ? { level: env.KEEL_LOG_LEVEL } : {}), ...(pretty !== undefined ? { pretty } : {}) };
}

const TO_PINO: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/**
 * Temporal's `Logger` over pino. The SDK hands each line's attributes (workflow or activity info,
 * Keel's session fields) as metadata: they become the JSON line's fields.
 */
export function temporalLoggerFor(logger: PinoLogger): TemporalLogger {
  const write = (level: LogLevel, message: string, meta?: LogMetadata) => {
    // The SDK's own timestamp is a symbol key: JSON leaves it out and pino stamps the line itself.
    logger[TO_PINO[level]]({ ...meta }, message);
  };
  return {
    log: write,
    trace: (m, meta) => write('TRACE', m, meta),
    debug: (m, meta) => write('DEBUG', m, meta),
    info: (m, meta) => write('INFO', m, meta),
    warn: (m, meta) => write('WARN', m, meta),
    error: (m, meta) => write('ERROR', m, meta),
  };
}
