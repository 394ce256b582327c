/**
 * Test helper: Debian's Chromium (installed by the tests' globalSetup, scripts/services/global-setup.ts), driven by
 * playwright-core; nothing is downloaded at run time. Under CI=true a browser that cannot start fails the test;
 * elsewhere the caller skips with {@link ChromiumUnavailable.reason}, which says how to enable it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM_PATH = process.env.KYB_TEST_CHROMIUM_PATH ?? '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A browser with a fresh profile; `close()` stops it and deletes the profile. */
export interface LaunchedChromium {
  context: BrowserContext;
  close(): Promise<void>;
}

export interface ChromiumUnavailable {
  reason: string;
}

export async function launchChromium(): Promise<LaunchedChromium | ChromiumUnavailable> {
  // A fresh --user-data-dir per launch: no cookie or cache of an earlier run can make a test pass.
  const userDataDir = await mkdtemp(join(tmpdir(), 'kyb-login-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: FLAGS,
      timeout: 60_000,
    });
    return {
      context,
      async close() {
        await context.close();
        await rm(userDataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(userDataDir, { recursive: true, force: true });
    const reason =
      `Chromium could not start from ${CHROMIUM_PATH} (${String((error as Error).message).split('\n')[0]}). ` +
      'Install it with `apt-get install chromium` (the test setup does so itself when run as root), or point ' +
      'KYB_TEST_CHROMIUM_PATH at a Chromium binary.';
    if (isCi()) throw new Error(`CI=true: ${reason}`);
    return { reason };
  }
}

function isCi(): boolean {
  const value = (process.env.CI ?? '').toLowerCase();
  return value !== '' && value !== '0' && value !== 'false';
}
