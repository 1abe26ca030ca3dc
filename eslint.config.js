import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';
import { layersRule } from './scripts/eslint/layers.js';

const nodeBuiltins = [
  ...builtinModules.filter((m) => !m.startsWith('_')),
  ...builtinModules.map((m) => `node:${m}`),
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench/results/**', '.svcplane/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        clearImmediate: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        URL: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        performance: 'readonly',
        structuredClone: 'readonly',
        queueMicrotask: 'readonly',
      },
    },
    plugins: { svcplane: { rules: { layers: layersRule } } },
    rules: {
      'svcplane/layers': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-console': 'off',
    },
  },
  {
    // The dashboard's page runs in a browser (bundled by scripts/build-page.mjs), not in Node.
    files: ['src/dashboard/page/**/*.{ts,tsx}'],
    languageOptions: {
      globals: {
        window: 'readonly',
        document: 'readonly',
        fetch: 'readonly',
        EventSource: 'readonly',
        ResizeObserver: 'readonly',
        HTMLElement: 'readonly',
        URLSearchParams: 'readonly',
        requestAnimationFrame: 'readonly',
      },
    },
  },
  {
    // src/core is pure: no I/O, no timers, no wall clock, no ambient randomness (docs/architecture.md).
    files: ['src/core/**/*.ts'],
    ignores: ['src/core/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: nodeBuiltins.map((name) => ({ name, message: 'src/core is pure: no node:* imports' })) },
      ],
      'no-restricted-globals': [
        'error',
        ...[
          'setTimeout',
          'setInterval',
          'setImmediate',
          'clearTimeout',
          'clearInterval',
          'clearImmediate',
        ].map((name) => ({ name, message: 'src/core is pure: timers are passed in by the caller' })),
        { name: 'Date', message: 'src/core is pure: pass a clock in' },
        { name: 'performance', message: 'src/core is pure: pass a clock in' },
        { name: 'process', message: 'src/core is pure: no process access' },
        { name: 'Buffer', message: 'src/core is pure: use Uint8Array' },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: 'src/core is pure: pass a random source in' },
      ],
    },
  },
);
