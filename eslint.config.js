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
  {
    // The layers: the engine, the domain, the adapters and the projections know nothing of HTTP
    // (errors get their status at the edge, src/http/errors.ts); the domain knows nothing else.
    files: ['src/engine/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/http/*', '**/http/**'], message: 'the engine, adapters and projections must not depend on the HTTP edge' }] },
      ],
    },
  },
  {
    // Below the engine (lowest first: config, lib, ports, domain, adapters) and the projections
    // beside it: neither the HTTP edge nor the engine.
    files: ['src/config.ts', 'src/lib/**/*.ts', 'src/ports/**/*.ts', 'src/domain/**/*.ts', 'src/adapters/**/*.ts', 'projections/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/http/*', '**/http/**'], message: 'the engine, adapters and projections must not depend on the HTTP edge' },
            { group: ['**/engine/*', '**/engine/**'], message: 'config, lib, ports, domain, adapters and projections must not depend on the engine' },
          ],
        },
      ],
    },
  },
  // No family imports another: what two families share lives in src/families/kit/, and paths
  // several families serve are dispatched there (kit/shared-paths.ts). The kit imports no family.
  ...familyFolders.map((family) => ({
    files: [`src/families/${family}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^(\\.\\./)+(${familyFolders.filter((f) => f !== family).join('|')})/`,
              message: 'a family imports no other family: move what they share to src/families/kit/',
            },
            { group: ['**/bootstrap/**'], message: "a family's models and prices are its own catalog.ts" },
            { group: ['**/simulator/**'], message: 'the simulator is a layer beside the families (src/simulator/families/): no family imports it' },
          ],
        },
      ],
    },
  })),
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
    files: ['src/families/kit/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: `^\\.\\./(${familyFolders.join('|')})/`, message: 'the kit serves every family and imports none' },
            { group: ['**/simulator/**'], message: 'the simulator is a layer beside the families: the kit imports none of it' },
          ],
        },
      ],
    },
  },
  {
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/http/**', '**/engine/**', '**/adapters/**', '**/families/**', '**/projections/**'],
              message: 'the domain is pure: events, deciders, pricing',
            },
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
