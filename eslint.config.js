import js from '@eslint/js';
import svelte from 'eslint-plugin-svelte';
import globals from 'globals';
import ts from 'typescript-eslint';
import layers from './scripts/eslint-layers.mjs';
import svelteConfig from './svelte.config.js';

export default ts.config(
  { ignores: ['node_modules/', 'dist/', 'test-output/', 'bench/results/'] },
  js.configs.recommended,
  ...ts.configs.recommended,
  ...svelte.configs.recommended,
  {
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
    rules: {
      // Untrusted text is parsed, never evaluated.
      'no-eval': 'error',
      'no-implied-eval': 'error',
      'no-new-func': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // Imports point down the layer order of docs/architecture.md (written once: LAYERS in
    // scripts/eslint-layers.mjs).
    files: ['src/**/*.{ts,js,mjs,svelte}'],
    plugins: { local: layers },
    rules: {
      'local/layers': 'error',
    },
  },
  {
    files: ['**/*.svelte', '**/*.svelte.ts'],
    languageOptions: {
      parserOptions: {
        projectService: true,
        extraFileExtensions: ['.svelte'],
        parser: ts.parser,
        svelteConfig,
      },
    },
  },
);
