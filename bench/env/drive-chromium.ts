/**
 * Drives the browser environment from Node: launches the system Chromium headless (Playwright,
 * with the project's Chromium flags), opens the bench page and returns what its runBench() gives.
 */
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, findChromium } from '../../scripts/chromium.mjs';
import type { BenchOptions, EnvResult } from '../core/types';

export async function runChromium(
  url: string,
  options: BenchOptions,
  log: (line: string) => void,
): Promise<EnvResult> {
  const executablePath = findChromium();
  if (!executablePath) throw new Error('no Chromium found (run `npm run setup:chromium`)');
  // Timestamps at the GPU's own resolution, as in Node (env/node.ts, UNQUANTIZED_TIMESTAMPS).
  const args = [...CHROMIUM_ARGS, '--disable-dawn-features=timestamp_quantization'];
  const browser = await chromium.launch({ executablePath, args, headless: true });
  try {
    const page = await browser.newPage();
    await page.exposeFunction('benchLog', (line: string) => log(line));
    // The page cannot see CPU use of Chromium's processes; the DevTools protocol can.
    const cdp = await browser.newBrowserCDPSession();
    await page.exposeFunction('benchCpuSeconds', async () => {
      const info = (await cdp.send('SystemInfo.getProcessInfo')) as {
        processInfo: { cpuTime: number }[];
      };
      return info.processInfo.reduce((sum, p) => sum + p.cpuTime, 0);
    });
    page.on('pageerror', (error) => log(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') log(`console error: ${message.text()}`);
    });
    await page.goto(url);
    // The first visit may wait for Vite to pre-bundle tfjs and ORT.
    await page.waitForFunction(() => typeof window.runBench === 'function', null, {
      timeout: 180_000,
    });
    return await page.evaluate((opts) => window.runBench!(opts), options);
  } finally {
    await browser.close();
  }
}
