import type { Connection } from '@temporalio/client';
import { keyRingFor, type KeelConfig } from '../config/keel-config';
import { keelDataConverter } from '../security/payload-codec';
import type { ReplyStreamSubscriber } from '../streaming/reply-subscriber';
import { KeelClient } from './keel-client';

/**
 * The client a process built from `config` uses to talk to the workers built from the same config:
 * their namespace, task queue, payload codec (KEEL_ENCRYPTION_KEYS) and agents (KEEL_ALLOWED_AGENTS,
 * refused here before anything is sent). One place, so the CLI and `keel dev`'s chat cannot drift.
 */
export function keelClientForConfig(
  config: KeelConfig,
  connection: Connection,
  extras: { readonly stream?: ReplyStreamSubscriber; readonly warn?: (line: string) => void } = {},
): KeelClient {
  const dataConverter = keelDataConverter(keyRingFor(config));
  return new KeelClient({
    connection,
    namespace: config.temporalNamespace,
    ...(dataConverter ? { dataConverter } : {}),
    taskQueue: config.taskQueue,
    contextWindowTokens: config.contextWindowTokens,
    ...(config.allowedAgents ? { allowedAgents: config.allowedAgents } : {}),
    ...(extras.stream ? { stream: extras.stream } : {}),
    ...(extras.warn ? { warn: extras.warn } : {}),
  });
}
