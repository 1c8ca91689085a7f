/** The tools module worker processes load in the subagent crash test (KEEL_TOOLS_MODULE): `lookup`. */
import type { ToolRegistry } from '../../src/tools/registry';
import { lookupTools } from './subagent-script';

export function registerTools(registry: ToolRegistry): void {
  for (const tool of lookupTools().list()) registry.register(tool);
}
