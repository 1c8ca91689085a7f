/**
 * The worker process's observability, from the environment: pino as Temporal's Runtime logger,
 * Keel's Prometheus series and health endpoints (KEEL_METRICS_PORT), Temporal's own Prometheus
 * endpoint (KEEL_TEMPORAL_METRICS_PORT), and OpenTelemetry tracing when OTEL_EXPORTER_OTLP_ENDPOINT is set.
 */
import type { DestinationStream, Logger as PinoLogger } from 'pino';
import { Runtime, type Worker, type WorkerPlugin } from '@temporalio/worker';
import { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { createKeelLogger, loggerOptionsFromEnv, temporalLoggerFor } from '../src/observability/logger';
import { KeelMetrics } from '../src/observability/metrics';
import { startObservabilityServer, type ObservabilityServer } from '../src/observability/http-server';

export interface Observability {
  readonly logger: PinoLogger;
  /** Keel's series, when KEEL_METRICS_PORT is set. */
  readonly metrics?: KeelMetrics;
  readonly metricsPort?: number;
  /** Worker plugins (OpenTelemetry tracing when configured). */
  readonly plugins: WorkerPlugin[];
  /** Sends the spans still buffered (tracing on): before the process exits. */
  flush(): Promise<void>;
}

/**
 * Reads the settings and installs the Temporal Runtime with pino as its logger; call once per process,
 * before any worker or native connection exists. `shutdownSignals` replaces the SDK's (SIGINT,
 * SIGTERM, …: drain every worker) when the process handles its signals itself.
 */
export function installObservability(
  env: NodeJS.ProcessEnv,
  opts: { pretty?: boolean; level?: string; destination?: DestinationStream; shutdownSignals?: NodeJS.Signals[] } = {},
): Observability {
  const fromEnv = loggerOptionsFromEnv(env, opts.pretty !== undefined ? { pretty: opts.pretty } : {});
  const logger = createKeelLogger({
    ...(opts.level ? { level: opts.level } : {}),
    ...fromEnv,
    ...(opts.destination ? { destination: opts.destination } : {}),
  });
  const metricsPort = portFrom(env, 'KEEL_METRICS_PORT');
  const temporalPort = portFrom(env, 'KEEL_TEMPORAL_METRICS_PORT');
  Runtime.install({
    logger: temporalLoggerFor(logger),
    ...(opts.shutdownSignals ? { shutdownSignals: opts.shutdownSignals } : {}),
    ...(temporalPort
      ? { telemetryOptions: { metrics: { prometheus: { bindAddress: `0.0.0.0:${temporalPort}` } } } }
      : {}),
  });
  const tracing = env.OTEL_EXPORTER_OTLP_ENDPOINT
    ? otlpTracing(env.OTEL_EXPORTER_OTLP_ENDPOINT, env.OTEL_SERVICE_NAME)
    : undefined;
  return {
    logger,
    ...(metricsPort ? { metrics: new KeelMetrics(), metricsPort } : {}),
    plugins: tracing ? [tracing.plugin] : [],
    flush: async () => {
      await tracing?.provider.forceFlush();
    },
  };
}

/** Workflow, activity and client spans exported over OTLP/HTTP to `$OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces`. */
function otlpTracing(
  endpoint: string,
  serviceName: string | undefined,
): { plugin: WorkerPlugin; provider: BasicTracerProvider } {
  const spanProcessor = new BatchSpanProcessor(
    new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` }),
  );
  const resource = new Resource({ 'service.name': serviceName || 'keel-worker' });
  // Activity spans come from a tracer (the global one unless given); workflow spans from the plugin's sink.
  const provider = new BasicTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register();
  return { plugin: new OpenTelemetryPlugin({ resource, spanProcessor, tracer: provider.getTracer('keel') }), provider };
}

/** Serves /metrics, /healthz and /readyz for `worker` when KEEL_METRICS_PORT is set. */
export async function serveObservability(
  obs: Observability,
  worker: Worker,
  probes: { database: () => Promise<boolean>; temporal: () => Promise<boolean> },
): Promise<ObservabilityServer | undefined> {
  if (!obs.metrics || obs.metricsPort === undefined) return undefined;
  const server = await startObservabilityServer({
    port: obs.metricsPort,
    registry: obs.metrics.registry,
    health: { running: () => worker.getState() === 'RUNNING', ready: probes },
  });
  obs.logger.info({ port: server.port }, 'metrics and health endpoints: /metrics, /healthz, /readyz');
  return server;
}

/** A TCP port from `name`; unset or 0 → off. */
function portFrom(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === '0') return undefined;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error(`${name} must be a TCP port (1-65535), or 0 to turn it off; got "${raw.slice(0, 40)}"`);
  return port;
}
