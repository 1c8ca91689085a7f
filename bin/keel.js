#!/usr/bin/env node
// The `keel` command. The package (and a clone after `npm run build`) runs the compiled dist/; a
// clone before its first build runs the TypeScript sources through ts-node, so `npx keel …` works
// right after `npm install`. ts-node is a devDependency: a clone has it, the package never needs it.
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const compiled = join(root, 'dist', 'workers', 'keel.js');
if (existsSync(compiled)) {
  require(compiled);
} else {
  const tsNode = 'ts-node'; // by name at run time: only a clone, which has the sources, gets here
  require(tsNode).register({ swc: true, projectSearchDir: root });
  require(join(root, 'workers', 'keel.ts'));
}
