// Lint rules: ESLint's and typescript-eslint's recommended sets, plus `import type` for types.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * What functions/core/ must not import: it is imported by the handlers, the twin and the stack. Imports
 * name them by alias (`#functions/http/…`, `#local/…`, package.json `imports`) or by a relative path.
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
];

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', '.data/', 'coverage/', '**/*.generated.*', 'functions/core/api/validators/*.cjs'] },
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
    // The domain knows nothing of how it is served or deployed: handlers, the twin and the stack import it, never the reverse.
    files: ['functions/core/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: layeringPatterns }] },
  },
  {
    // Only the table plumbing (store/) and each folder's repository build DynamoDB requests; the domain calls them.
    // ESLint replaces a rule's options per block, so this block restates the layering patterns.
    files: ['functions/core/**/*.ts'],
    ignores: ['functions/core/store/**', 'functions/core/**/*-repository.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ['@aws-sdk/lib-dynamodb', '@aws-sdk/client-dynamodb'].map((name) => ({
            name,
            message: "functions/core/ reaches DynamoDB through store/ and its folder's *-repository.ts module, not the SDK.",
          })),
          patterns: layeringPatterns,
        },
      ],
    },
  },
);
