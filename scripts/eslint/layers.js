// ESLint rule `svcplane/layers`: enforces the dependency direction of src/ (docs/architecture.md)
//   api → core → {storage, runtime} → {apiserver, controllers, nodes, wrapper, proxy} → cli
// plus demo (`svcplane demo`: network namespaces, the scenario) and dashboard (`svcplane dashboard`), feature
// folders like the others. The dashboard's page (src/dashboard/page) runs in a browser: it may import
// preact, its own files and, type-only, src/core (the contract in core/dashboard/types.ts), nothing else.
// Each layer may import itself and the layers before it; the feature folders may not import each
// other; nothing imports cli. It also pins each external I/O dependency to the one file allowed to load it.
import path from 'node:path';

const LAYERS = {
  api: ['api'],
  core: ['api', 'core'],
  storage: ['api', 'core', 'storage'],
  runtime: ['api', 'core', 'runtime'],
  apiserver: ['api', 'core', 'storage', 'runtime', 'apiserver'],
  controllers: ['api', 'core', 'storage', 'runtime', 'controllers'],
  wrapper: ['api', 'core', 'storage', 'runtime', 'wrapper'],
  proxy: ['api', 'core', 'storage', 'runtime', 'proxy'],
  dashboard: ['api', 'core', 'storage', 'runtime', 'dashboard'],
  nodes: ['api', 'core', 'storage', 'runtime', 'nodes'],
  demo: ['api', 'core', 'storage', 'runtime', 'demo'],
  cli: [
    'api',
    'core',
    'storage',
    'runtime',
    'apiserver',
    'controllers',
    'wrapper',
    'proxy',
    'nodes',
    'demo',
    'dashboard',
    'cli',
  ],
};

// External modules that do I/O, and the single source file (relative to the repo root) that may import each.
const PINNED = {
  'better-sqlite3': 'src/storage/sqlite/sqlite-store.ts',
  cockatiel: 'src/storage/etcd/etcd-store.ts',
  etcd3: 'src/storage/etcd/etcd-store.ts',
  '@kubernetes/client-node': 'src/runtime/kubeconfig-load.ts', // in a child process or worker thread only: see kubeconfig.ts
  'node-forge': 'src/apiserver/auth/pki.ts',
  jose: 'src/apiserver/auth/jwt.ts',
  '@hono/node-server': 'src/dashboard/server.ts',
};

function layerOf(absFile, root) {
  const rel = path.relative(path.join(root, 'src'), absFile);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  const first = rel.split(path.sep)[0];
  return first in LAYERS ? first : undefined;
}

const PAGE = 'src/dashboard/page/';

const isTestFile = (f) => /\.test\.ts$/.test(f) || f.includes(`${path.sep}testing${path.sep}`);

export const layersRule = {
  meta: {
    type: 'problem',
    docs: { description: 'enforce the layer order of src/ (docs/architecture.md)' },
    schema: [],
    messages: {
      layer: "'{{from}}' may not import '{{to}}' ({{spec}}): allowed layers are {{allowed}}",
      unknown: 'src/{{dir}} is not a known layer; add it to scripts/eslint/layers.js',
      pinned: "'{{mod}}' may only be imported by {{file}}",
      page: "the page (src/dashboard/page) may import preact, its own files and types from src/core, not '{{spec}}'",
    },
  },
  create(context) {
    const file = context.filename;
    const root = context.cwd;
    const from = layerOf(file, root);
    const relFile = path.relative(root, file).split(path.sep).join('/');
    const inPage = relFile.startsWith(PAGE) && !isTestFile(file);
    // The page's bundle holds only preact and the page: src/core contributes types, never code.
    function checkPage(node, spec) {
      const typeOnly = node.importKind === 'type' || node.exportKind === 'type';
      let ok;
      if (!spec.startsWith('.')) ok = spec === 'preact' || spec.startsWith('preact/');
      else {
        const rel = path
          .relative(root, path.resolve(path.dirname(file), spec))
          .split(path.sep)
          .join('/');
        ok = rel.startsWith(PAGE) || (typeOnly && rel.startsWith('src/core/'));
      }
      if (!ok) context.report({ node, messageId: 'page', data: { spec } });
    }
    function check(node, spec) {
      if (typeof spec !== 'string') return;
      if (inPage) return checkPage(node, spec);
      if (!spec.startsWith('.')) {
        // A type-only import loads nothing at run time, so it does not count as using the module.
        if (node.importKind === 'type' || node.exportKind === 'type') return;
        const mod = Object.keys(PINNED).find((m) => spec === m || spec.startsWith(`${m}/`));
        if (mod && relFile.startsWith('src/') && !isTestFile(file) && PINNED[mod] !== relFile) {
          context.report({ node, messageId: 'pinned', data: { mod, file: PINNED[mod] } });
        }
        return;
      }
      if (!from) return;
      const target = path.resolve(path.dirname(file), spec);
      const to = layerOf(target, root);
      if (to === undefined) {
        const rel = path.relative(path.join(root, 'src'), target);
        if (!rel.startsWith('..') && !isTestFile(file)) {
          context.report({ node, messageId: 'unknown', data: { dir: rel.split(path.sep)[0] } });
        }
        return; // outside src/ (test support): only test files reach there, and they may
      }
      if (!LAYERS[from].includes(to)) {
        context.report({
          node,
          messageId: 'layer',
          data: { from, to, spec, allowed: LAYERS[from].join(', ') },
        });
      }
    }
    return {
      ImportDeclaration: (n) => check(n, n.source.value),
      ExportNamedDeclaration: (n) => n.source && check(n, n.source.value),
      ExportAllDeclaration: (n) => check(n, n.source.value),
      ImportExpression: (n) => n.source.type === 'Literal' && check(n, n.source.value),
    };
  },
};
