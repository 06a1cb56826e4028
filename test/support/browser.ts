import { existsSync } from 'fs';
import { basename } from 'path';
import { Browser, chromium } from 'playwright-core';

/**
 * Debian's Chromium for the browser tests, driven by playwright-core (a tool's own browser download
 * fails on these machines). `.ci/run` installs it when it is missing; without it the tests are skipped
 * and say so.
 */
export const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** `describe` when Chromium is installed, else `describe.skip` with a line naming the test file. */
export function describeInBrowser(testFile: string): jest.Describe {
  if (existsSync(CHROMIUM)) return describe;
  process.stderr.write(
    `${basename(testFile)}: SKIPPED, ${CHROMIUM} is absent (apt-get install -y chromium)\n`,
  );
  return describe.skip;
}

/** Launches it headless, generously: a loaded 2-core machine is slow. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true, timeout: 120_000 });
}
