// A real headless browser for the end-to-end tests: Debian's chromium (scripts/ensure-deps.sh installs it;
// $CHROMIUM_BIN, else /usr/bin/chromium) driven by playwright-core, which downloads no browser of its own.
// Each session gets a fresh user-data-dir under the system's temp directory, removed on close. Without the
// browser the tests FAIL naming the package: they never skip.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import type { BrowserContext, Page } from 'playwright-core';

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Where tests write what a person may want to look at afterwards (screenshots): test-artifacts/. */
export const ARTIFACTS_DIR =
  process.env['SVCPLANE_TEST_ARTIFACTS'] ??
  path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../../test-artifacts');

export function chromiumPath(): string {
  const bin = process.env['CHROMIUM_BIN'] ?? '/usr/bin/chromium';
  if (!existsSync(bin)) {
    throw new Error(
      `${bin} is missing: the browser tests need Debian's chromium (run scripts/ensure-deps.sh as root, or apt-get install chromium)`,
    );
  }
  return bin;
}

export interface BrowserSession {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Closes the browser (bounded: a hung close does not hang the test) and removes its profile. */
  close(): Promise<void>;
}

const CLOSE_TIMEOUT_MS = 15_000;

/**
 * A fresh headless chromium. `ignoreHTTPSErrors` accepts a server certificate the system does not trust
 * (`svcplane up`'s own CA), for pages loaded straight from the API server.
 */
export async function openBrowser(
  viewport = { width: 1280, height: 800 },
  opts: { readonly ignoreHTTPSErrors?: boolean } = {},
): Promise<BrowserSession> {
  const executablePath = chromiumPath();
  const profile = await mkdtemp(path.join(tmpdir(), 'svcplane-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath,
      args: CHROMIUM_ARGS,
      headless: true,
      viewport,
      ignoreHTTPSErrors: opts.ignoreHTTPSErrors ?? false,
    });
  } catch (err) {
    await rm(profile, { recursive: true, force: true });
    throw err;
  }
  const page = context.pages()[0] ?? (await context.newPage());
  let closed: Promise<void> | undefined;
  return {
    context,
    page,
    close() {
      closed ??= (async () => {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          context.close().catch(() => undefined),
          new Promise<void>((r) => (timer = setTimeout(r, CLOSE_TIMEOUT_MS))),
        ]);
        clearTimeout(timer);
        await rm(profile, { recursive: true, force: true, maxRetries: 3 });
      })();
      return closed;
    },
  };
}

/** Saves a full-page screenshot as ARTIFACTS_DIR/NAME.png, prints and returns its path. */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  await mkdir(ARTIFACTS_DIR, { recursive: true });
  const file = path.join(ARTIFACTS_DIR, `${name}.png`);
  await page.screenshot({ path: file });
  console.log(`screenshot: ${file}`);
  return file;
}
