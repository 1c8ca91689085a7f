// Kept for the activity files still importing './deps'; new code imports src/runtime/deps directly.
export type { ActivityDeps } from '../../src/runtime/deps';
