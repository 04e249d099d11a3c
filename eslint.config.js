// ESLint flat config: @eslint/js recommended + typescript-eslint's type-aware recommended set
// (recommendedTypeChecked: the whole repo lints in well under a minute on 2 cores).
// Correctness rules only; layout is Prettier's (`npm run format`, checked by CI with `npm run format:check`).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { defineConfig, globalIgnores } from 'eslint/config';
import { readdirSync } from 'node:fs';

/** Every family folder (src/families/<family>/), the kit excepted. */
const familyFolders = readdirSync(new URL('./src/families/', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && entry.name !== 'kit')
  .map((entry) => entry.name);

/**
 * The source's layers, lowest first: each layer's files and the import patterns that reach it.
 * A file imports its own layer and those below it, never one above: the engine knows nothing of
 * HTTP, the domain knows only the ports. The projections are the read models the engine consults
 * (accounts, tokens, channels), so they sit under it; metrics and the audit read both and serve
 * the HTTP edge. The simulator stands beside the families: it may read a family's upstream
 * protocol, and no family reaches the simulator.
 */
const layers = [
  { name: 'config', files: ['src/config.ts', 'src/config/**/*.ts'], reach: ['**/config.js', '**/config/**'] },
  { name: 'lib', files: ['src/lib/**/*.ts'], reach: ['**/lib/**'] },
  { name: 'ports', files: ['src/ports/**/*.ts'], reach: ['**/ports/**'] },
  { name: 'domain', files: ['src/domain/**/*.ts'], reach: ['**/domain/**'] },
  { name: 'projections', files: ['projections/**/*.ts'], reach: ['**/projections/**'] },
  { name: 'adapters', files: ['src/adapters/**/*.ts'], reach: ['**/adapters/**'] },
  { name: 'engine', files: ['src/engine/**/*.ts'], reach: ['**/engine/**'] },
  { name: 'metrics and audit', files: ['src/metrics/**/*.ts', 'src/audit/**/*.ts'], reach: ['**/metrics/**', '**/audit/**'] },
  { name: 'http', files: ['src/http/**/*.ts'], reach: ['**/http/**'] },
  { name: 'families', files: ['src/families/**/*.ts'], reach: ['**/families/**'] },
  { name: 'simulator', files: ['src/simulator/**/*.ts'], reach: ['**/simulator/**'] },
  { name: 'bootstrap', files: ['src/bootstrap/**/*.ts'], reach: ['**/bootstrap/**'] },
  { name: 'gateway', files: ['src/gateway.ts', 'src/main.ts'], reach: ['**/gateway.js', '**/main.js'] },
];

/** What a layer's files may not import: every layer above it, but the families beside the simulator. */
function forbiddenFor(name) {
  const index = layers.findIndex((layer) => layer.name === name);
  return layers
    .slice(index + 1)
    .filter((above) => !(name === 'simulator' && above.name === 'families'))
    .map((above) => ({ group: above.reach, message: `${name} must not depend on ${above.name}, a layer above it` }));
}

/**
 * One `no-restricted-imports` entry per file set (a later entry would replace an earlier one, so
 * each set gets all of its patterns at once). Inside the families: no family imports another —
 * what two families share lives in src/families/kit/ — and the kit imports no family.
 */
function layerRules() {
  const restrict = (files, patterns) => ({ files, rules: { 'no-restricted-imports': ['error', { patterns }] } });
  const families = forbiddenFor('families');
  return [
    ...layers.filter((layer) => layer.name !== 'families').map((layer) => restrict(layer.files, forbiddenFor(layer.name))),
    restrict(['src/families/*.ts'], families),
    ...familyFolders.map((family) =>
      restrict(
        [`src/families/${family}/**/*.ts`],
        [
          ...families,
          {
            regex: `^(\\.\\./)+(${familyFolders.filter((other) => other !== family).join('|')})/`,
            message: 'a family imports no other family: move what they share to src/families/kit/',
          },
        ],
      ),
    ),
    restrict(
      ['src/families/kit/**/*.ts'],
      [...families, { regex: `^\\.\\./(${familyFolders.join('|')})/`, message: 'the kit serves every family and imports none' }],
    ),
  ];
}

export default defineConfig(
  globalIgnores(['node_modules/', 'dist/', '.tmp/', 'data/', 'bench/results/', 'console/dist/', 'test/console/output/']),
  {
    files: ['{src,projections,simulation,scripts,bench,test}/**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      // The project service reads tsconfig.json, so lint sees exactly the types `tsc` sees.
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      // `_`-prefixed names mark a deliberately unused binding (interface-shaped parameters, skipped tuple slots).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
        },
      ],
      eqeqeq: 'error',
      // Ports return Promises; the embedded (synchronous) adapters and fastify handlers are `async`
      // without awaiting so that a throw becomes a rejection, which is the contract callers rely on.
      '@typescript-eslint/require-await': 'off',
      // String(x) on untyped upstream/JSON values is the deliberate total conversion: it never
      // throws, and an object arriving where text was expected reads "[object Object]" by design.
      '@typescript-eslint/no-base-to-string': 'off',
      // Input validators match control characters on purpose (headers, URLs, view keys).
      'no-control-regex': 'off',
    },
  },
  {
    // The web console (browser code): the same type-aware rules, on its own tsconfig (DOM, Preact JSX),
    // which the project service finds beside the files.
    files: ['console/**/*.{ts,tsx}'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      eqeqeq: 'error',
    },
  },
  // The layers, lowest first (see `layers` above). A file imports its own layer and those below it.
  ...layerRules(),
  {
    // The toy family a test adds from docs/adding-a-family.md (test/support/toy-family/) keeps a
    // family folder's rules; its simulator.ts is the simulator's step, beside the family.
    files: ['test/support/toy-family/**/*.ts'],
    ignores: ['test/support/toy-family/simulator.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `/src/families/(${familyFolders.join('|')})/`,
              message: 'a family imports no other family: move what they share to src/families/kit/',
            },
            { group: ['**/bootstrap/**'], message: "a family's models and prices are its own catalog.ts" },
            { group: ['**/simulator/**', './simulator.js'], message: 'the simulator is a layer beside the families: no family imports it' },
          ],
        },
      ],
    },
  },
  {
    // Tests read JSON replies off the wire: an untyped (`any`) body asserted field by field with
    // `expect` is the point of a black-box test, and hand-written reply types would only restate
    // the spec and turn a wrong shape into a compile error instead of a failing assertion.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
