#!/usr/bin/env node
/**
 * The `keel` command's entry point. The CLI lives in src/cli; this file hands it what only a
 * composition root may build: the embedded stack that runs a worker in-process (`keel dev`) and a
 * worker on its own (`keel worker`).
 */
import { runKeelCli } from '../src/cli/main';
import { startLocalStack } from './embedded-stack';
import { runWorker } from './run-worker';

runKeelCli(process.argv.slice(2), { startLocalStack, runWorker });
