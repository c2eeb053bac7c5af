/**
 * "Bring a model" downloading from the Hub, in the browser: Playwright answers the page's requests
 * to huggingface.co from the shipped tiny chat model's files (a file listing with each weight
 * file's sha256, as the Hub's tree API gives it), so nothing leaves the machine. A download whose
 * weights fail their hash leaves nothing of them, and no listing, in the browser's Cache Storage;
 * the next one completes, loads and answers; after a reload the same model comes from the cache
 * with no request to the Hub at all. (Resuming a cut connection is tested against a real local
 * server in tests/models/hf/hub.test.ts.)
 */
import { expect, test, type Page, type Route } from '@playwright/test';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { collectErrors, SCREENSHOTS } from './support';

const DIR = 'public/models/hf/tiny-chat';
const ID = 'test-org/tiny-chat';
const FILES = new Map(readdirSync(DIR).map((name) => [name, readFileSync(join(DIR, name))]));
const CACHE = 'agent-rl-lab-models';

/** The Hub's tree listing of the files; `badHash` gives the weights a wrong sha256. */
function listing(badHash: boolean): string {
  return JSON.stringify(
    [...FILES].map(([path, bytes]) => {
      if (!path.endsWith('.safetensors')) return { type: 'file', path, size: bytes.length };
      const oid = badHash ? '0'.repeat(64) : createHash('sha256').update(bytes).digest('hex');
      return { type: 'file', path, size: bytes.length, lfs: { oid, size: bytes.length } };
    }),
  );
}

/** Serves the Hub's two endpoints for ID; returns the paths asked for, in order. */
async function fakeHub(page: Page, state: { badHash: boolean }): Promise<string[]> {
  const asked: string[] = [];
  const cors = { 'access-control-allow-origin': '*' };
  await page.route('https://huggingface.co/**', async (route: Route) => {
    const { pathname } = new URL(route.request().url());
    asked.push(pathname);
    if (pathname === `/api/models/${ID}/tree/main`) {
      await route.fulfill({
        status: 200,
        headers: { ...cors, 'content-type': 'application/json' },
        body: listing(state.badHash),
      });
      return;
    }
    const prefix = `/${ID}/resolve/main/`;
    const bytes = pathname.startsWith(prefix)
      ? FILES.get(pathname.slice(prefix.length))
      : undefined;
    if (!bytes) {
      await route.fulfill({ status: 404, headers: cors, body: 'not found' });
      return;
    }
    await route.fulfill({ status: 200, headers: cors, body: bytes });
  });
  return asked;
}

/** The URLs Cache Storage holds for the lab's models. */
const cachedUrls = (page: Page) =>
  page.evaluate(async (name) => {
    const cache = await caches.open(name);
    return (await cache.keys()).map((request) => request.url);
  }, CACHE);

async function download(page: Page) {
  await page.getByRole('textbox', { name: 'Or a Hub model id' }).fill(ID);
  await page.getByRole('button', { name: 'Download' }).click();
}

test('downloads a Hub model once: a failed one leaves no cache entry; a reload needs no request', async ({
  page,
}) => {
  test.setTimeout(120_000);
  const errors = collectErrors(page);
  const hub = { badHash: true };
  const asked = await fakeHub(page, hub);
  await page.goto('/?backend=cpu#/models');
  await expect(page.getByRole('heading', { level: 1, name: 'Bring a model' })).toBeVisible({
    timeout: 30_000,
  });

  // The weights fail their hash: an error naming the file, and nothing of them kept.
  await download(page);
  await expect(page.getByTestId('model-error')).toContainText('model.safetensors', {
    timeout: 30_000,
  });
  const afterFailure = await cachedUrls(page);
  expect(afterFailure.filter((url) => /safetensors|\/tree\//.test(url))).toEqual([]);

  // Now the Hub answers right: the model downloads, loads and answers.
  hub.badHash = false;
  await download(page);
  const arch = page.getByRole('table', { name: 'Architecture' });
  await expect(arch).toBeVisible({ timeout: 30_000 });
  expect(asked).toContain(`/${ID}/resolve/main/model.safetensors`);
  const cached = await cachedUrls(page);
  expect(cached.some((url) => url.endsWith('/model.safetensors'))).toBe(true);
  expect(cached.some((url) => url.endsWith(`/api/models/${ID}/tree/main`))).toBe(true);
  await page.getByRole('button', { name: 'Load the model' }).click();
  await expect(page.getByTestId('loaded')).toContainText('Loaded on the CPU as f32');
  await page.getByRole('textbox', { name: 'Message' }).fill('12+34');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.getByTestId('turn-assistant')).toBeVisible({ timeout: 30_000 });
  await page.screenshot({ path: `${SCREENSHOTS}/hub-download-1280.png`, fullPage: true });

  // A new visit: the same model comes from the cache, and the Hub is not asked at all.
  asked.length = 0;
  await page.reload();
  await expect(page.getByRole('heading', { level: 1, name: 'Bring a model' })).toBeVisible({
    timeout: 30_000,
  });
  await download(page);
  await expect(arch).toBeVisible({ timeout: 30_000 });
  await page.getByRole('button', { name: 'Load the model' }).click();
  await expect(page.getByTestId('loaded')).toContainText('Loaded on the CPU as f32');
  expect(asked).toEqual([]);
  expect(errors).toEqual([]);
});
