import { defineConfig } from '@playwright/test';
import { CHROMIUM_ARGS, findChromium } from './scripts/chromium.mjs';

// E2E_PORT: a second checkout's tests beside a running suite (the default is vite preview's).
const port = Number(process.env.E2E_PORT ?? 4173);

/** End-to-end tests against the production build, served by `vite preview` on 127.0.0.1. */
export default defineConfig({
  testDir: 'tests/e2e',
  outputDir: 'test-output/playwright',
  timeout: 60_000,
  workers: 1,
  // On CI the e2e lane shares two cores with the GPU layers; one retry absorbs a timing miss
  // there, and `npm test` names every test that needed it.
  retries: process.env.CI ? 1 : 0,
  reporter: [['list'], ['json', { outputFile: 'test-output/e2e-results.json' }]],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    viewport: { width: 1280, height: 800 },
    launchOptions: { executablePath: findChromium(), args: CHROMIUM_ARGS },
  },
  webServer: {
    command: `npm run build && vite preview --host 127.0.0.1 --port ${port} --strictPort`,
    url: `http://127.0.0.1:${port}`,
    reuseExistingServer: false,
    timeout: 120_000,
  },
});
