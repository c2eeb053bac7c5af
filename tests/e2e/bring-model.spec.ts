import { expect, test } from '@playwright/test';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { collectErrors, SCREENSHOTS } from './support';

const FIXTURE = 'tests/fixtures/hf/llama-tiny';
// The model's files as a user picks them (golden.json is the tests' own, not the model's).
const FILES = readdirSync(FIXTURE)
  .filter((name) => name !== 'golden.json')
  .map((name) => join(FIXTURE, name));

test('brings the tiny Llama fixture, loads it on the CPU and chats with it', async ({ page }) => {
  test.setTimeout(90_000);
  const errors = collectErrors(page);
  await page.goto('/?backend=cpu#/');
  await page.getByRole('link', { name: 'Models', exact: true }).click();
  // The page's chunk (tokenizer, Jinja, the model code) loads on first visit.
  await expect(page.getByRole('heading', { level: 1, name: 'Bring a model' })).toBeVisible({
    timeout: 30_000,
  });

  await page.getByTestId('model-files').setInputFiles(FILES);
  const arch = page.getByRole('table', { name: 'Architecture' });
  await expect(arch).toContainText('Heads / KV heads4 / 2');
  await expect(arch).toContainText('Stored asF32');
  // 384·64 embedding + 2 blocks of (2·64 norms + 64·64 q + 2·64·32 k,v + 64·64 o + 3·64·128 MLP)
  // + 64 final norm = 24,576 + 2·(128 + 4,096 + 4,096 + 4,096 + 24,576) + 64 = 98,624.
  await expect(arch).toContainText('98.6k (98,624)');
  await expect(page.getByRole('table', { name: 'Memory plan' })).toContainText('f16');
  await expect(page.getByTestId('fit')).toContainText('Loads on the CPU as f32');

  await page.getByRole('button', { name: 'Load the model' }).click();
  await expect(page.getByTestId('loaded')).toContainText('Loaded on the CPU as f32');

  await page.getByRole('textbox', { name: 'Message' }).fill('Hello, who are you?');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.getByTestId('turn-user')).toContainText('Hello, who are you?');
  const answer = page.getByTestId('turn-assistant');
  await expect(answer).toBeVisible({ timeout: 30_000 });
  const tokens = answer.getByTestId('chat-tokens').locator('span');
  expect(await tokens.count()).toBeGreaterThan(0);
  await expect(tokens.first()).toHaveAttribute('title', /id \d+, log-prob -?\d+\.\d{3} \(p = /);
  await expect(answer).toContainText(/\d+ tokens, (ended by the model|cut at max tokens)/);

  await page.screenshot({ path: `${SCREENSHOTS}/bring-model-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${SCREENSHOTS}/bring-model-390.png`, fullPage: true });
  expect(errors).toEqual([]);
});

test('with ?backend=webgpu the fixture loads on the GPU as f16 and answers', async ({ page }) => {
  test.setTimeout(90_000);
  const errors = collectErrors(page);
  await page.goto('/?backend=webgpu#/models');
  await page.getByTestId('model-files').setInputFiles(FILES);
  await expect(page.getByTestId('fit')).toContainText('Loads on the GPU as f16', {
    timeout: 30_000,
  });
  await page.getByRole('button', { name: 'Load the model' }).click();
  await expect(page.getByTestId('loaded')).toContainText('Loaded on the GPU as f16');
  await page.getByRole('textbox', { name: 'Message' }).fill('Hello');
  await page.getByRole('button', { name: 'Send' }).click();
  const answer = page.getByTestId('turn-assistant');
  await expect(answer).toBeVisible({ timeout: 60_000 });
  expect(await answer.getByTestId('chat-tokens').locator('span').count()).toBeGreaterThan(0);
  expect(errors).toEqual([]);
});
