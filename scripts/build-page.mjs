#!/usr/bin/env node
// Bundles the dashboard's page (src/dashboard/page: preact, tsx) into dist/dashboard/page/ with esbuild:
// index.html, app.js and app.css, minified, for Chromium 110 and later. The page needs nothing at run
// time but these three files (no CDN, no network); it loads them by relative URL, so it works wherever
// the dashboard is mounted. `npm run build` runs it after tsc.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const src = path.join(root, 'src/dashboard/page');
const out = path.join(root, 'dist/dashboard/page');

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [
    { in: path.join(src, 'main.tsx'), out: 'app' },
    { in: path.join(src, 'app.css'), out: 'app' },
  ],
  outdir: out,
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['chrome110'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  tsconfig: path.join(src, 'tsconfig.json'),
  legalComments: 'none',
  logLevel: 'warning',
});
copyFileSync(path.join(src, 'index.html'), path.join(out, 'index.html'));
const size = (f) => `${f} ${(statSync(path.join(out, f)).size / 1024).toFixed(1)} KiB`;
console.log(
  `build-page: ${path.relative(root, out)}/: ${['app.js', 'app.css', 'index.html'].map(size).join(', ')}`,
);
