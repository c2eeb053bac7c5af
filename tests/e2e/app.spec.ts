import { expect, test } from '@playwright/test';
import { SCREENSHOTS, collectErrors } from './support';

test('home page lists the curriculum and names the WebGPU adapter', async ({ page }) => {
  const errors = collectErrors(page);
  // ?backend=webgpu: this machine's only adapter is SwiftShader, which 'auto' passes over.
  await page.goto('/?backend=webgpu');
  await expect(page.getByRole('heading', { level: 1 })).toContainText('trained in your browser');
  // The home page says plainly what this machine trains on: here, WebGPU's software adapter.
  await expect(page.getByTestId('home-machine')).toContainText(
    "WebGPU's software adapter (no hardware GPU found)",
  );
  // Every unit of lessons/ is a card whose heading opens its first lesson.
  const units: [string, string][] = [
    ['Markov decision processes', '01-mdp/01-value-iteration'],
    ['Policy gradient', '02-policy-gradient/01-reinforce-and-baselines'],
    ['PPO', '03-ppo/01-clipped-objective'],
    ['GRPO for language models', '04-grpo/01-group-relative-advantages'],
    ['Reward engineering', '05-reward-engineering/01-reward-hacking'],
    ['Tool-using agents', '06-tool-use/01-calls-and-masks'],
    ['Reading a run', '07-reading-a-run/01-reading-a-run'],
    ['From toy to real', '08-real-models/01-lora-grpo'],
  ];
  const headings = page.locator('.unit h3');
  await expect(headings).toHaveText(units.map(([title]) => title));
  for (const [index, [, first]] of units.entries()) {
    await expect(headings.nth(index).getByRole('link')).toHaveAttribute('href', `#/learn/${first}`);
  }
  await expect(page.locator('[data-unit="04-grpo"] li')).toHaveCount(6);
  const line = page.getByTestId('backend-line');
  await expect(line).toHaveAttribute('data-backend', 'webgpu');
  await expect(line).toContainText(/WebGPU — google · swiftshader/);
  await expect(line).toContainText(/fallback adapter/);
  console.log(`[e2e] backend line: ${(await line.innerText()).replace(/\s+/g, ' ')}`);
  await page.screenshot({ path: `${SCREENSHOTS}/home.png`, fullPage: true });
  expect(errors).toEqual([]);
});

test('without ?backend=webgpu a software fallback adapter is passed over for the CPU, and the line says why', async ({
  page,
}) => {
  const errors = collectErrors(page);
  await page.goto('/#/lab');
  const line = page.getByTestId('backend-line');
  await expect(line).toHaveAttribute('data-backend', 'cpu');
  await expect(line).toContainText(
    'CPU — WebGPU not used: the only adapter is a software fallback, slower than the CPU for these models (?backend=webgpu uses it): WebGPU — google · swiftshader',
  );
  // A new language-model run asks for the same default, and the form offers the other two.
  const form = page.getByRole('form', { name: 'New run' });
  await form.getByLabel('Algorithm').selectOption('grpo');
  const backend = form.getByLabel('Backend');
  await expect(backend).toHaveValue('auto');
  await expect(backend.locator('option')).toHaveText(['Auto', 'WebGPU (any)', 'CPU']);
  await page.screenshot({ path: `${SCREENSHOTS}/lab-fallback-adapter.png`, fullPage: true });
  expect(errors).toEqual([]);
});

test('lab page runs the log-softmax kernel on the GPU and matches the CPU reference', async ({
  page,
}) => {
  const errors = collectErrors(page);
  await page.goto('/?backend=webgpu#/lab');
  await expect(page.getByRole('heading', { level: 1, name: 'Lab' })).toBeVisible();
  await expect(page.getByText('Architecture')).toBeVisible();
  await page.getByRole('button', { name: 'Run kernel check' }).click();
  const result = page.getByTestId('kernel-check-result');
  await expect(result).toContainText('Match:', { timeout: 30_000 });
  await expect(result).toContainText('over 1048576 values');
  await page.screenshot({ path: `${SCREENSHOTS}/lab.png`, fullPage: true });
  expect(errors).toEqual([]);
});

test('?backend=cpu runs on the CPU and says why', async ({ page }) => {
  const errors = collectErrors(page);
  await page.goto('/?backend=cpu#/lab');
  const line = page.getByTestId('backend-line');
  await expect(line).toHaveAttribute('data-backend', 'cpu');
  await expect(line).toContainText('CPU — WebGPU not used: CPU was requested in the URL');
  await page.getByRole('button', { name: 'Run kernel check' }).click();
  await expect(page.getByTestId('kernel-check-result')).toContainText('CPU backend');
  await page.screenshot({ path: `${SCREENSHOTS}/lab-cpu.png`, fullPage: true });
  expect(errors).toEqual([]);
});

test('navigation is keyboard-reachable and moves focus to the page', async ({ page }) => {
  await page.goto('/');
  await page.keyboard.press('Tab');
  await expect(page.getByRole('link', { name: 'Skip to content' })).toBeFocused();
  await page.getByRole('link', { name: 'About' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'About Agent RL Lab' })).toBeVisible();
  await expect(page.locator('main')).toBeFocused();
  await expect(page.getByRole('link', { name: 'About' })).toHaveAttribute('aria-current', 'page');
});
