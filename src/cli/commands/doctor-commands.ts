import type { Command } from 'commander';
import type { CliContext } from './shared';

export function registerDoctorCommands(_program: Command, _ctx: CliContext): void {}
