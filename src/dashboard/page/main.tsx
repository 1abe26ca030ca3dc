// The dashboard page's entry: esbuild bundles it into dist/dashboard/page/app.js (app.css beside it).
import { render } from 'preact';
import { App } from './app.js';

const root = document.getElementById('app');
if (root) render(<App />, root);
