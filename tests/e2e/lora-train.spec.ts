import { expect, test } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { collectErrors, SCREENSHOTS } from './support';

test('trains the tiny chat model with LoRA-GRPO beside its control and downloads the adapter', async ({
  page,
}) => {
  test.setTimeout(240_000);
  const errors = collectErrors(page);
  await page.goto('/?backend=cpu#/models');
  await expect(page.getByRole('heading', { level: 1, name: 'Bring a model' })).toBeVisible({
    timeout: 30_000,
  });
  // The lab's own chat model, fetched from the site (public/models/hf/tiny-chat/).
  await page.getByTestId('shipped-tiny-chat').click();
  await expect(page.getByRole('table', { name: 'Architecture' })).toContainText('125.4k (125,440)');
  await page.getByRole('button', { name: 'Load the model' }).click();
  await expect(page.getByTestId('loaded')).toContainText('Loaded on the CPU as f32');

  const section = page.getByRole('region', { name: '4. Train it with LoRA-GRPO' });
  await section.getByRole('spinbutton', { name: 'Updates' }).fill('10');
  await section.getByRole('button', { name: 'Train with LoRA-GRPO' }).click();
  const status = section.getByTestId('lora-status');
  await expect(status).toContainText('19,456 adapter parameters (r = 8, alpha = 16');
  await expect(status).toHaveAttribute('data-status', 'done', { timeout: 200_000 });
  await expect(section.getByTestId('lora-chart')).toHaveAttribute('data-points', '10');

  // Both runs start from the same held-out number (same model, prompts and sampler).
  const rows = section.getByRole('table', { name: 'Held-out strict success' }).locator('tbody tr');
  await expect(rows).toHaveCount(2);
  const before = async (i: number) => (await rows.nth(i).locator('td').nth(1).textContent())!;
  expect(await before(0)).toBe(await before(1));
  await expect(rows.nth(1)).toContainText('control (lr 1e-9)');
  await expect(section.getByTestId('lora-verdict')).toContainText(/LoRA-GRPO\s+.*[+−]\d\.\d\d/);

  // The last update in the model's own tokens: 16 prompts, each with its 8 answers.
  const samples = section.getByTestId('lora-samples');
  await samples.locator('summary').click();
  await expect(samples.locator('summary')).toContainText('Update 10, token by token');
  await expect(samples.getByTestId('inspect-group')).toHaveCount(4); // 4 shown, more on request
  await expect(samples.getByTestId('inspect-group').first().locator('tbody tr')).toHaveCount(8);
  await expect(samples.locator('.tok[data-trained="1"]').first()).toBeVisible();

  const downloads: { name: string; path: string }[] = [];
  page.on('download', async (d) =>
    downloads.push({ name: d.suggestedFilename(), path: (await d.path())! }),
  );
  await section.getByTestId('lora-download').click();
  await expect.poll(() => downloads.length).toBe(2);
  expect(downloads.map((d) => d.name).sort()).toEqual([
    'adapter_config.json',
    'adapter_model.safetensors',
  ]);
  const config = JSON.parse(
    readFileSync(downloads.find((d) => d.name === 'adapter_config.json')!.path, 'utf8'),
  );
  expect(config).toMatchObject({ peft_type: 'LORA', r: 8, lora_alpha: 16 });

  // The same run for TRL and verl, its adapters as peft_config and verl's LoRA keys.
  await section.getByTestId('lora-framework').click();
  await expect.poll(() => downloads.length).toBe(5);
  const script = readFileSync(downloads.find((d) => d.name === 'train_trl_grpo.py')!.path, 'utf8');
  expect(script).toContain('peft_config = LoraConfig(');
  expect(script).toContain('    peft_config=peft_config,');
  const verl = readFileSync(downloads.find((d) => d.name === 'run_verl_grpo.sh')!.path, 'utf8');
  expect(verl).toContain('actor_rollout_ref.model.lora_rank=8');
  expect(downloads.map((d) => d.name)).toContain('lab_reward.py');

  await section.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SCREENSHOTS}/lora-train-1280.png`, fullPage: true });
  expect(errors).toEqual([]);
});

test('a paused run is kept across a reload and resumes once its model is loaded again', async ({
  page,
}) => {
  test.setTimeout(240_000);
  const errors = collectErrors(page);
  await page.goto('/?backend=cpu#/models');
  await page.getByTestId('shipped-tiny-chat').click();
  await page.getByRole('button', { name: 'Load the model' }).click();
  await expect(page.getByTestId('loaded')).toContainText('Loaded on the CPU as f32');
  const section = page.getByRole('region', { name: '4. Train it with LoRA-GRPO' });
  await section.getByRole('spinbutton', { name: 'Prompts per update' }).fill('4');
  await section.getByRole('spinbutton', { name: 'Updates' }).fill('12');
  await section.getByRole('combobox', { name: 'Algorithm' }).selectOption('rloo');
  await section.getByRole('button', { name: 'Train with LoRA-GRPO' }).click();
  const status = section.getByTestId('lora-status');
  await expect(status).toContainText('Update 2 of 12', { timeout: 60_000 });
  // A live change: the run's lr from its next update on, marked on the chart.
  const live = section.getByTestId('lora-live');
  await live.getByRole('spinbutton', { name: 'Learning rate from the next update' }).fill('0.002');
  await live.getByRole('button', { name: 'Change it live' }).click();
  await expect(section.getByTestId('lora-changes')).toContainText(/lr 0\.002 from update \d+/, {
    timeout: 60_000,
  });
  // The form keeps the lr the run started with, under its name; the live box says the one now.
  await expect(section.getByTestId('lora-lr-now')).toHaveText(
    /^Now 0\.002, since update \d+\.\s*$/,
  );
  await expect(
    section.getByRole('spinbutton', { name: 'Learning rate at start', exact: true }),
  ).toHaveValue('0.005');
  await section.getByRole('button', { name: 'Pause' }).click();
  await expect(status).toHaveAttribute('data-status', 'paused', { timeout: 60_000 });
  const pausedAt = Number(/Paused at update (\d+) of 12/.exec((await status.textContent())!)![1]);
  expect(pausedAt).toBeGreaterThanOrEqual(2);

  await page.reload();
  // Before a model is loaded, the page names the model to load.
  await expect(page.getByTestId('lora-kept')).toContainText(
    `Your LoRA-GRPO run on tiny-chat (the lab's own) is kept, paused at update ${pausedAt} of 12: load that model`,
  );
  await page.getByTestId('shipped-tiny-chat').click();
  await page.getByRole('button', { name: 'Load the model' }).click();
  await expect(page.getByTestId('loaded')).toContainText('Loaded on the CPU as f32');
  const again = page.getByRole('region', { name: '4. Train it with LoRA-GRPO' });
  await expect(again.getByTestId('lora-saved')).toContainText(
    new RegExp(
      `paused at update ${pausedAt} of 12\\. It trained\\s+on tiny-chat \\(the lab's own\\) \\(weights sha256:[0-9a-f]{12}\\)`,
    ),
  );
  await expect(again.getByTestId('lora-chart')).toHaveAttribute('data-points', String(pausedAt));
  await expect(again.getByTestId('lora-changes')).toContainText(/lr 0\.002 from update \d+/);
  // The run's settings come back with it: RLOO, its line named so.
  await expect(again.getByRole('combobox', { name: 'Algorithm' })).toHaveValue('rloo');
  await expect(again.getByRole('combobox', { name: 'Algorithm' })).toBeDisabled();
  await expect(again.getByRole('table', { name: 'Held-out strict success' })).toContainText(
    'LoRA-RLOO',
  );
  await page.screenshot({ path: `${SCREENSHOTS}/lora-paused-reload-1280.png`, fullPage: true });

  await again.getByRole('button', { name: 'Resume' }).click();
  await expect(again.getByTestId('lora-status')).toHaveAttribute('data-status', 'done', {
    timeout: 200_000,
  });
  await expect(again.getByTestId('lora-chart')).toHaveAttribute('data-points', '12');
  // Held-out checks at 0, 10 and 12 on the one line: the resumed run kept the first.
  const rows = again.getByRole('table', { name: 'Held-out strict success' }).locator('tbody tr');
  await expect(rows).toHaveCount(2);
  await expect(again.getByTestId('lora-saved')).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('with ?backend=webgpu the panel states the GPU plan and trains on the GPU', async ({
  page,
}) => {
  test.setTimeout(300_000);
  const errors = collectErrors(page);
  await page.goto('/?backend=webgpu#/models');
  await page.getByTestId('shipped-tiny-chat').click();
  await page.getByRole('button', { name: 'Load the model' }).click();
  await expect(page.getByTestId('loaded')).toContainText('on the GPU as f16', { timeout: 60_000 });

  const section = page.getByRole('region', { name: '4. Train it with LoRA-GRPO' });
  // One prompt (a group of 8 answers) per update: SwiftShader generates every token in software.
  await section.getByRole('spinbutton', { name: 'Prompts per update' }).fill('1');
  // Before a run: where it trains and what one step needs, from the batch and the template.
  await expect(section.getByTestId('lora-plan')).toContainText(
    /Trains on the GPU, each run on a device of its own: [\d.]+ [kMG]B per run .*activations kept for 8 answers × \d+ tokens/,
  );
  await section.getByRole('spinbutton', { name: 'Updates' }).fill('1');
  await section.getByRole('button', { name: 'Train with LoRA-GRPO' }).click();
  const status = section.getByTestId('lora-status');
  await expect(section.getByTestId('lora-device')).toContainText('on WebGPU', { timeout: 120_000 });
  await expect(status).toHaveAttribute('data-status', 'done', { timeout: 240_000 });
  await expect(section.getByTestId('lora-chart')).toHaveAttribute('data-points', '1');
  await section.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SCREENSHOTS}/lora-train-webgpu.png`, fullPage: true });
  expect(errors).toEqual([]);
});

test('the lesson’s LoRA run pauses, survives a reload and resumes on the shipped model', async ({
  page,
}) => {
  test.setTimeout(180_000);
  const errors = collectErrors(page);
  await page.goto('/?backend=cpu#/learn/08-real-models/01-lora-grpo');
  const widget = page.getByTestId('lora-lesson-run');
  await widget.getByRole('button', { name: 'Load it and train' }).click();
  const status = widget.getByTestId('lora-status');
  await expect(status).toContainText('Update 2 of 40', { timeout: 60_000 });
  await widget.getByRole('button', { name: 'Pause' }).click();
  await expect(status).toHaveAttribute('data-status', 'paused', { timeout: 60_000 });
  const pausedAt = Number(/Paused at update (\d+) of 40/.exec((await status.textContent())!)![1]);

  await page.reload();
  const again = page.getByTestId('lora-lesson-run');
  await expect(again.getByTestId('lora-status')).toContainText(
    `Paused at update ${pausedAt} of 40`,
  );
  await expect(again.getByTestId('lora-chart')).toHaveAttribute('data-points', String(pausedAt));
  // The lesson's model comes from this site: Resume loads it, checks its weights, goes on.
  await again.getByRole('button', { name: 'Resume' }).click();
  await expect(again.getByTestId('lora-status')).toContainText(`Update ${pausedAt + 2} of 40`, {
    timeout: 60_000,
  });
  await again.getByRole('button', { name: 'Pause' }).click();
  await expect(again.getByTestId('lora-status')).toHaveAttribute('data-status', 'paused', {
    timeout: 60_000,
  });
  expect(errors).toEqual([]);
});
