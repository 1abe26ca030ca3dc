// The layer rule that keeps src/ in its dependency order (docs/architecture.md): checked with
// ESLint's RuleTester.
import { RuleTester } from 'eslint';
import path from 'node:path';
import { describe, it } from 'node:test';
import tseslint from 'typescript-eslint';
// @ts-expect-error -- a plain-JS ESLint rule without type declarations
import { layersRule } from '../../scripts/eslint/layers.js';

RuleTester.describe = describe;
RuleTester.it = it;

const at = (rel: string): string => path.join(process.cwd(), rel);
const tester = new RuleTester({ languageOptions: { ecmaVersion: 2022, sourceType: 'module' } });

tester.run('svcplane/layers', layersRule, {
  valid: [
    { filename: at('src/storage/sqlite/x.ts'), code: "import { a } from '../../core/allocator/bitmap.js';" },
    { filename: at('src/core/topology/x.ts'), code: "import { a } from '../../api/types.js';" },
    // src/core/proxy is core, not the src/proxy feature folder.
    { filename: at('src/core/topology/x.ts'), code: "import { a } from '../proxy/rules.js';" },
    { filename: at('src/cli/x.ts'), code: "import { a } from '../apiserver/server.js';" },
    { filename: at('src/storage/sqlite/sqlite-store.ts'), code: "import Database from 'better-sqlite3';" },
    { filename: at('src/apiserver/auth/pki.ts'), code: "import forge from 'node-forge';" },
    {
      filename: at('src/storage/sqlite/sqlite-store.test.ts'),
      code: "import { x } from '../../../test/support/x.js';",
    },
  ],
  invalid: [
    {
      filename: at('src/core/x.ts'),
      code: "import { a } from '../storage/store.js';",
      errors: [{ messageId: 'layer' }],
    },
    {
      filename: at('src/core/topology/x.ts'),
      code: "import { a } from '../../proxy/sync.js';",
      errors: [{ messageId: 'layer' }],
    },
    { filename: at('src/api/x.ts'), code: "export * from '../core/y.js';", errors: [{ messageId: 'layer' }] },
    {
      filename: at('src/controllers/endpoints/x.ts'),
      code: "import { a } from '../../apiserver/server.js';",
      errors: [{ messageId: 'layer' }],
    },
    {
      filename: at('src/wrapper/x.ts'),
      code: "import { a } from '../proxy/x.js';",
      errors: [{ messageId: 'layer' }],
    },
    {
      filename: at('src/storage/x.ts'),
      code: "import { a } from '../cli/main.js';",
      errors: [{ messageId: 'layer' }],
    },
    {
      filename: at('src/storage/x.ts'),
      code: "const m = import('../runtime/client.js');",
      errors: [{ messageId: 'layer' }],
    },
    {
      filename: at('src/storage/etcd/etcd-store.ts'),
      code: "import Database from 'better-sqlite3';",
      errors: [{ messageId: 'pinned' }],
    },
    {
      filename: at('src/apiserver/x.ts'),
      code: "import { Etcd3 } from 'etcd3';",
      errors: [{ messageId: 'pinned' }],
    },
    {
      filename: at('src/apiserver/auth/kubeconfig.ts'),
      code: "import forge from 'node-forge';",
      errors: [{ messageId: 'pinned' }],
    },
    {
      filename: at('src/storage/x.ts'),
      code: "import { a } from '../nosuchlayer/x.js';",
      errors: [{ messageId: 'unknown' }],
    },
  ],
});

// The dashboard's page (bundled for a browser): preact, its own files and types from src/core only.
const tsTester = new RuleTester({ languageOptions: { parser: tseslint.parser } });
tsTester.run('svcplane/layers (the page)', layersRule, {
  valid: [
    { filename: at('src/dashboard/page/x.tsx'), code: "import { render } from 'preact';" },
    { filename: at('src/dashboard/page/x.tsx'), code: "import { useState } from 'preact/hooks';" },
    { filename: at('src/dashboard/page/x.tsx'), code: "import { App } from './app.js';" },
    {
      filename: at('src/dashboard/page/x.tsx'),
      code: "import type { Layout } from '../../core/dashboard/types.js';",
    },
    { filename: at('src/cli/x.ts'), code: "import { a } from '../dashboard/server.js';" },
  ],
  invalid: [
    {
      filename: at('src/dashboard/page/x.tsx'),
      code: "import { decide } from '../../core/topology/decide.js';",
      errors: [{ messageId: 'page' }],
    },
    {
      filename: at('src/dashboard/page/x.tsx'),
      code: "import { a } from '../server.js';",
      errors: [{ messageId: 'page' }],
    },
    {
      filename: at('src/dashboard/page/x.tsx'),
      code: "import type { Json } from '../../api/json.js';",
      errors: [{ messageId: 'page' }],
    },
    {
      filename: at('src/dashboard/page/x.tsx'),
      code: "import { Hono } from 'hono';",
      errors: [{ messageId: 'page' }],
    },
    {
      filename: at('src/dashboard/x.ts'),
      code: "import { a } from '../proxy/x.js';",
      errors: [{ messageId: 'layer' }],
    },
  ],
});
