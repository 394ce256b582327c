import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/coverage/**', '**/.tmp/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
  {
    // The core (and what runs wherever it runs: Hono, the OpenTelemetry layer) is for Web-standard runtimes: no node:
    // modules and no Buffer, except the core's selected crypto module.
    files: ['packages/core/src/**/*.ts', 'packages/hono/src/**/*.ts', 'packages/opentelemetry/src/**/*.ts'],
    ignores: ['**/*.test.ts', 'packages/core/src/verify/crypto/node.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['node:*'], message: 'The core must run on Web-standard runtimes.' }] },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'Buffer', message: 'Use Uint8Array: the core must run on Web-standard runtimes.' },
      ],
    },
  },
);
