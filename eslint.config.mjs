// Lint: typescript-eslint's recommended rules; layout is Prettier's (npm run format).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // sdk/src/generated/ is openapi-typescript's output, compared byte for byte with the document's types.
  {
    ignores: [
      'node_modules/',
      'dist/',
      '.data/',
      'coverage/',
      'bench/results/',
      'sdk/dist/',
      'sdk/src/generated/',
      '**/node_modules/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: {
      globals: { ...globals.node },
    },
    rules: {
      // Prettier lays code out at 120 columns but cannot wrap comments: the limit is kept
      // here. String and template literals (SQL, expected output, test titles) may run
      // longer rather than be cut where their meaning would change.
      'max-len': [
        'error',
        { code: 120, ignoreUrls: true, ignoreRegExpLiterals: true, ignoreStrings: true, ignoreTemplateLiterals: true },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Work that belongs to a database transaction must be awaited inside it: Db ends the
    // transaction's async context when its work settles (docs/decisions.md), so a promise
    // left floating would run its statements outside it.
    files: ['src/**/*.ts'],
    languageOptions: { parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    // Plain CommonJS scripts (bench, CI helpers, jest config) may require().
    files: ['**/*.js', '**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
