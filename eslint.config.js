// Lint rules: ESLint's and typescript-eslint's recommended sets, plus `import type` for types.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

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
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+(http|workers)/',
              message:
                'functions/core/ must not import a handler (functions/http/, functions/workers/): handlers import the core.',
            },
            {
              regex: '^(\\.\\./)+(local|lib)/',
              message: 'functions/core/ must not import the local twin (local/) or the stack (lib/): they import the core.',
            },
          ],
        },
      ],
    },
  },
);
