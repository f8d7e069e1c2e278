// typescript-eslint's recommended rules, with type information for the TypeScript files so that a
// cast the compiler already knows to be true (no-unnecessary-type-assertion) is an error.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist', '.bench-build', '.nuxeo-package-build', '.tap', 'coverage', 'node_modules', 'test/fixtures'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
      // `{ omitted: _omitted, ...rest }` and `(_request, response) =>` name what they leave out.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // The job is read by following one document through it: a function says one step, on one screen.
    files: ['src/job/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 50 }] },
  },
  {
    // Tests read the fakes' JSON answers as the wire has them, without a type for each shape.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  {
    // CommonJS: the bundle's undici entry (deploy/undici-entry.cjs) requires undici's own files.
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
