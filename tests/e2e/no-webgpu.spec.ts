import { expect, test } from '@playwright/test';
import { CHROMIUM_ARGS, findChromium } from '../../scripts/chromium.mjs';
import { SCREENSHOTS, collectErrors } from './support';

// The usual flags minus --enable-unsafe-webgpu, and no GPU process: Chromium exposes
// navigator.gpu but finds no adapter, as on many Linux desktops.
test.use({
  launchOptions: {
    executablePath: findChromium(),
    args: [...CHROMIUM_ARGS.filter((arg) => arg !== '--enable-unsafe-webgpu'), '--disable-gpu'],
  },
});

test('without a WebGPU adapter the lab falls back to the CPU and says why', async ({ page }) => {
  const errors = collectErrors(page);
  await page.goto('/#/lab');
  const line = page.getByTestId('backend-line');
  await expect(line).toHaveAttribute('data-backend', 'cpu');
  await expect(line).toContainText('CPU — WebGPU unavailable:');
  await expect(page.getByText('Reason code:')).toBeVisible();
  await page.getByRole('button', { name: 'Run kernel check' }).click();
  await expect(page.getByTestId('kernel-check-result')).toContainText('CPU backend');
  await page.screenshot({ path: `${SCREENSHOTS}/lab-no-webgpu.png`, fullPage: true });
  expect(errors).toEqual([]);
});
