// Lint rules: ESLint's and typescript-eslint's recommended sets, plus `import type` for types.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * What functions/core/ must not import: it is imported by the handlers, the twin and the stack, and
 * never needs the tools, scripts, benchmarks or tests. Imports name them by alias (`#functions/http/…`,
 * `#local/…`, package.json `imports`) or by a relative path.
 */
const layeringPatterns = [
  {
    regex: '^(#functions/|(\\.\\./)+)(http|workers)/',
    message: 'functions/core/ must not import a handler (functions/http/, functions/workers/): handlers import the core.',
  },
  {
    regex: '^(#|(\\.\\./)+)(local|lib)/',
    message: 'functions/core/ must not import the local twin (local/) or the stack (lib/): they import the core.',
  },
  {
    regex: '^(#|(\\.\\./)+)(bin|tools|bench|test)/',
    message: 'functions/core/ must not import the scripts, tools, benchmarks or tests (bin/, tools/, bench/, test/).',
  },
];

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'cdk.out/',
      '.data/',
      'coverage/',
      'client/dist/',
      '**/*.generated.*',
      'functions/core/api/validators/*.cjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    rules: {
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // The CloudFront Function (runtime cloudfront-js-2.0): plain JavaScript that CloudFront calls as `handler`,
    // its settings line replaced at synth (functions/edge/viewer-request-code.ts). Not part of tsc.
    files: ['functions/edge/**/*.js'],
    languageOptions: { sourceType: 'module', globals: { __EDGE_SETTINGS__: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { varsIgnorePattern: '^handler$', caughtErrors: 'none' }],
    },
  },
  {
    // The domain knows nothing of how it is served or deployed: handlers, the twin and the stack import it, never the reverse.
    files: ['functions/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: layeringPatterns }],
      // The same for `import()`, which no-restricted-imports does not see.
      'no-restricted-syntax': [
        'error',
        ...layeringPatterns.map(({ regex, message }) => ({
          // esquery's regular expressions end at the first slash: escape them.
          selector: `ImportExpression[source.value=/${regex.replaceAll('/', '\\/')}/]`,
          message,
        })),
      ],
    },
  },
  {
    // Only the table plumbing (store/) and each folder's repository build DynamoDB requests; the domain calls them.
    files: ['functions/core/**/*.ts'],
    ignores: ['functions/core/store/**', 'functions/core/**/*-repository.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^@aws-sdk/(lib|client|util)-dynamodb(/|$)',
              message: "functions/core/ reaches DynamoDB through store/ and its folder's *-repository.ts module, not the SDK.",
            },
          ],
        },
      ],
    },
  },
);
