// Lint rules that guard the layers of docs/architecture.md. Type-aware (typescript-eslint), so
// `no-floating-promises` sees through every call, workflow code included.
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The one list of which src/ folders are pure and which do I/O. Pure folders are functions over
// messages, plans and text, testable without a server or a database; the I/O folders reach a
// database, a model, a Temporal server, the network or the file system.
const PURE_FOLDERS = ['context', 'compaction', 'engine', 'text', 'turn', 'sessions', 'profile'];
const IO_FOLDERS = [
  'store',
  'embedded',
  'model',
  'runtime',
  'client',
  'cli',
  'api',
  'temporal',
  'transfer',
  'tools',
  'streaming',
  'observability',
  'testing',
  'subagents',
  'config',
  'replay',
  'security',
  'console',
  'operations',
];

// Node built-ins, bare ('fs') and prefixed ('node:fs'): no I/O in workflows or pure code.
const NODE_BUILTINS = builtinModules.filter((m) => !m.startsWith('_'));
const nodeBuiltins = {
  group: ['node:*', ...NODE_BUILTINS.flatMap((m) => [m, `${m}/*`])],
  message: 'Node built-ins do I/O or break determinism: keep them in activities/, workers/ or src/ I/O folders.',
};
// Libraries that reach a database, a model or a Temporal server.
const ioLibraries = {
  group: [
    'pg',
    'kysely',
    '@electric-sql/*',
    '@anthropic-ai/sdk',
    '@temporalio/activity',
    '@temporalio/worker',
    '@temporalio/client',
  ],
  message: 'I/O libraries belong in activities/ and the I/O folders of src/ (store, model, temporal, client).',
};
// src/ is the library the outer layers compose; it never reaches back up.
const upperLayers = {
  group: ['**/activities', '**/activities/*', '**/workers', '**/workers/*', '**/workflows', '**/workflows/*'],
  message: 'src/ must not import activities/, workers/ or workflows/ (docs/architecture.md, "Layers").',
};
// Workflows may name activity *types* (proxyActivities<typeof …>) but never load activity code.
const activityCode = {
  // Search attribute names are plain constants the workflows set; the rest of src/temporal does I/O.
  // Configuration defaults are plain values too.
  group: [
    '../activities',
    '../activities/**',
    '../workers/*',
    ...IO_FOLDERS.map((f) => `../src/${f}/*`),
    '!../src/temporal/search-attributes',
    '!../src/config/defaults',
  ],
  message:
    'Workflow code is deterministic: import only types from activities/, and nothing from the I/O folders of src/.',
  allowTypeImports: true,
};

// Pure folders stay pure: no reaching into the I/O folders of src/ (types are fine).
const ioFolders = {
  // Configuration is read by I/O code, but its schemas and defaults are plain values pure code may use.
  group: [
    ...IO_FOLDERS.filter((f) => f !== 'config').flatMap((f) => [`../${f}`, `../${f}/*`]),
    '../config/config-file',
  ],
  message: `The pure folders of src/ (${PURE_FOLDERS.join(', ')}) take what they need as parameters, not from the I/O folders.`,
  allowTypeImports: true,
};

// The presenters (command line, HTTP API, console) each present the operations of src/operations;
// none imports another, and the operations import none of them (docs/architecture.md, "Operations").
const presenter = (name) => ({
  group: [`**/${name}`, `**/${name}/*`, `**/${name}/**`],
  message: `src/${name} is a presenter: what it does lives in src/operations, which every presenter imports instead.`,
});
// `keel serve` and `keel dev` start the HTTP server: the command line may import the server, nothing else of it.
const apiButItsServer = {
  group: ['**/api/*', '**/api/**', '!**/api/serve-api', '!**/api/api-deps'],
  message:
    'src/cli presents operations; it starts the HTTP server (serve-api, api-deps) and imports nothing else of src/api.',
};

const restrict = (...patterns) => ['error', { patterns }];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'scratch/**',
      '.keel/**',
      '.build-test/**',
      'node_modules/**',
      'coverage/**',
      'bench/out/**',
      '**/*.js',
      '**/*.mjs',
      // The console's bundle, generated from src/console/browser (linted there).
      'src/console/console-script.generated.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // As temporalio/samples-typescript: a forgotten await on an activity or a workflow API is a bug.
      '@typescript-eslint/no-floating-promises': 'error',
      'object-shorthand': ['error', 'always'],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // As the samples' `deprecation/deprecation`, but failing: a deprecated SDK API is replaced, not kept.
      '@typescript-eslint/no-deprecated': 'error',
      // The repository explains itself: no comment cites a source document kept outside it.
      'no-warning-comments': [
        'error',
        {
          terms: ['seed 000', 'seed 001', 'seed 002', 'seed 003', 'seed 004', 'openclaw-spec', 'DESIGN.md'],
          location: 'anywhere',
        },
      ],
    },
  },
  {
    // Tests poke at wire shapes (fake Anthropic requests, stored payloads) where `any` is the honest type;
    // src/testing records those requests for them.
    files: ['test/**/*.ts', 'src/testing/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Migrations run against every past schema, so they take `Kysely<any>` (as kysely's own examples).
    files: ['src/store/migrations.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['src/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': restrict(upperLayers) },
  },
  {
    files: ['src/operations/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': restrict(
        upperLayers,
        presenter('cli'),
        presenter('api'),
        presenter('console'),
      ),
    },
  },
  {
    files: ['src/cli/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': restrict(upperLayers, presenter('console'), apiButItsServer) },
  },
  {
    // The console is pages the HTTP server serves: it may not reach into the command line.
    files: ['src/api/**/*.ts', 'src/console/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': restrict(upperLayers, presenter('cli')) },
  },
  {
    // The console's browser code: the views' types, no values (esbuild would bundle them into the page).
    files: ['src/console/browser/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': restrict({
        group: ['*', '**', '../**', './**'],
        allowTypeImports: true,
        message: 'The console runs in the browser: import only types (the views), never server code.',
      }),
    },
  },
  {
    // Pure folders: functions over messages and plans, testable without a server or a database.
    files: PURE_FOLDERS.map((f) => `src/${f}/**/*.ts`),
    rules: { '@typescript-eslint/no-restricted-imports': restrict(upperLayers, nodeBuiltins, ioLibraries, ioFolders) },
  },
  {
    // The Temporal workflow sandbox: deterministic code only (SDK workflow APIs, pure src/ code).
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': restrict(nodeBuiltins, ioLibraries, activityCode),
      // `void promise` is no excuse in workflow code: an unawaited step races the handlers and continue-as-new.
      '@typescript-eslint/no-floating-promises': ['error', { ignoreVoid: false }],
    },
  },
);
