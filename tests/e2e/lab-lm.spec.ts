import { expect, test, type Page } from '@playwright/test';
import { SCREENSHOTS, collectErrors } from './support';

/**
 * Creates a language-model run on reverse from a new model (CPU backend, a short warm-up; learned
 * positions unless `positions` says otherwise) and returns its card.
 */
async function createLmRun(page: Page, algo: string, n: number, positions = 'learned') {
  const form = page.getByRole('form', { name: 'New run' });
  await form.getByLabel('Algorithm').selectOption(algo);
  await form.getByLabel('Task').selectOption('reverse');
  await form.getByLabel('Backend').selectOption('cpu');
  // Reverse opens on its shipped RL start; these runs test a new model's warm-up.
  await form.getByLabel('Start from').selectOption('new');
  await form.getByLabel('Positions').selectOption(positions);
  const settings = form.locator('details').first();
  if (!(await settings.evaluate((el) => (el as HTMLDetailsElement).open))) {
    await form.getByText(/^Settings/).click();
  }
  await form.getByLabel('sftSteps', { exact: true }).fill('5');
  await form.getByRole('button', { name: 'Create run' }).click();
  const card = page.getByRole('article', { name: `#${n} ${algo} on reverse` });
  await expect(card.getByTestId('run-status')).toHaveText('idle', { timeout: 60_000 });
  await expect(card.getByTestId('run-backend')).toContainText('CPU');
  return card;
}

/** Points the primary chart holds for a run. */
async function pointsOf(page: Page, id: string): Promise<number> {
  const line = page.getByTestId('metric-chart').locator(`[data-run="${id}"]`).first();
  return Number((await line.getAttribute('data-points')) ?? 0);
}

test('PPO and GRPO side by side: train, change lr live, inspect, reload, export and re-import', async ({
  page,
}) => {
  test.setTimeout(240_000);
  const errors = collectErrors(page);
  await page.goto('/#/lab');
  const grpo = await createLmRun(page, 'grpo', 1);
  const ppo = await createLmRun(page, 'ppo', 2);

  await grpo.getByRole('button', { name: 'Start' }).click();
  await ppo.getByRole('button', { name: 'Start' }).click();
  for (const id of ['run-1', 'run-2']) {
    await expect.poll(() => pointsOf(page, id), { timeout: 90_000 }).toBeGreaterThan(2);
  }
  // A running language model's card says which part of which update is under way; a lab run
  // has no budget, so no time left.
  await expect(grpo.getByTestId('run-phase')).toHaveText(
    /^update \d+: (generating answers|updating the policy)$/,
  );

  // A live learning-rate change on the GRPO run, marked on its charts.
  await grpo.getByText('Hyperparameters').click();
  await grpo.getByLabel('lr live', { exact: true }).fill('0.0005');
  await grpo.getByRole('button', { name: 'Apply live changes' }).click();
  await expect(
    grpo.getByRole('form', { name: /^Hyperparameters of/ }).getByRole('status'),
  ).toHaveText(/^Applies from update \d+/);
  await expect(
    page.getByTestId('metric-chart').locator('[data-testid="event-marker"][data-run="run-1"]'),
  ).toHaveCount(1, { timeout: 60_000 });

  // The charts above the cards redraw while the runs stream, so the cards can shift between two
  // frames; dispatching the click does not wait for a still layout.
  await grpo.getByRole('button', { name: 'Pause' }).dispatchEvent('click');
  await ppo.getByRole('button', { name: 'Pause' }).dispatchEvent('click');
  // A pause waits for the update in progress (seconds for a language model on the CPU).
  await expect(grpo.getByTestId('run-status')).toHaveText('paused', { timeout: 60_000 });
  await expect(ppo.getByTestId('run-status')).toHaveText('paused', { timeout: 60_000 });

  // The GRPO inspector: groups of samples, each token coloured by its advantage.
  const inspector = page.getByRole('region', { name: 'Inspector' });
  await inspector.getByLabel('Run').selectOption({ label: await labelOf(grpo) });
  await inspector.getByTestId('inspect-load').click();
  await expect(inspector.getByTestId('inspect-summary')).toContainText('GRPO update');
  await expect(inspector.getByTestId('inspect-group').first()).toBeVisible();
  await inspector.getByTestId('inspect-mode').selectOption({ label: 'ratio π/π_old (log scale)' });
  await inspector
    .getByTestId('inspect-group')
    .first()
    .screenshot({
      path: `${SCREENSHOTS}/grpo-inspector.png`,
    });
  await page.screenshot({ path: `${SCREENSHOTS}/lab-lm.png`, fullPage: true });

  // Export the GRPO run as JSON.
  const share = page.getByRole('region', { name: 'Keep and share' });
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    share.getByRole('button', { name: /^Export #1 grpo on reverse.* as JSON$/ }).click(),
  ]);
  const file = await download.path();
  // And its policy as ONNX (the weights read between updates in the worker).
  const [onnx] = await Promise.all([
    page.waitForEvent('download'),
    share
      .getByRole('button', { name: /^Export the policy of #1 grpo on reverse.* as ONNX$/ })
      .click(),
  ]);
  expect(onnx.suggestedFilename()).toMatch(/^run-1-grpo-on-reverse-seed-1\.onnx$/);
  const { statSync } = await import('node:fs');
  expect(statSync((await onnx.path())!).size).toBeGreaterThan(100_000);
  const steps = Number((await grpo.getByTestId('run-steps').innerText()).match(/Update (\d+)/)![1]);

  // Reload: both runs are back, stored, with their updates.
  await page.reload();
  const storedGrpo = page.getByRole('article', { name: '#1 grpo on reverse' });
  const storedPpo = page.getByRole('article', { name: '#2 ppo on reverse' });
  await expect(storedGrpo.getByTestId('run-status')).toHaveText('stored');
  await expect(storedPpo.getByTestId('run-status')).toHaveText('stored');
  await expect(storedGrpo.getByTestId('run-steps')).toContainText(`Update ${steps}`);
  expect(errors).toEqual([]);
  await expect.poll(() => pointsOf(page, 'run-1')).toBeGreaterThan(2);

  // The GRPO run was checkpointed when it paused, so it resumes where it stopped instead of
  // replaying its updates: the next update is steps + 1, with no replay on the way.
  await expect(storedGrpo.getByTestId('run-backend')).toContainText(
    `Start resumes from its checkpoint at update ${steps} and trains on`,
  );
  await storedGrpo.screenshot({ path: `${SCREENSHOTS}/lab-resume-card.png` });
  await storedGrpo.getByRole('button', { name: 'Step' }).click();
  await expect(storedGrpo.getByTestId('run-steps')).toContainText(`Update ${steps + 1}`, {
    timeout: 60_000,
  });
  await expect(storedGrpo.getByText(/Replaying/)).toHaveCount(0);
  await expect(storedGrpo.getByTestId('run-status')).toHaveText(/idle|paused/);

  // Re-import the exported file: a third run with the same history, and the checkpoint the file
  // carries, so that it too goes on from where the export stood without replaying.
  await page.getByTestId('import-file').setInputFiles(file!);
  await expect(page.getByTestId('import-message')).toContainText(
    `${steps} updates. Starting it resumes from its checkpoint at update ${steps}, then trains on`,
  );
  const imported = page.getByRole('article', { name: /^#3 .*grpo on reverse.*\(imported\)/ });
  await expect(imported.getByTestId('run-status')).toHaveText('stored');
  await expect(imported.getByTestId('run-backend')).toContainText(
    `Start resumes from its checkpoint at update ${steps} and trains on`,
  );
  await page.getByTestId('import-message').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SCREENSHOTS}/lab-imported.png` });
  await imported.getByRole('button', { name: 'Step' }).click();
  await expect(imported.getByTestId('run-steps')).toContainText(`Update ${steps + 1}`, {
    timeout: 60_000,
  });
  await expect(imported.getByText(/Replaying/)).toHaveCount(0);

  // A bad file is refused with the problem named, and nothing changes.
  await page.getByTestId('import-file').setInputFiles({
    name: 'broken.json',
    mimeType: 'application/json',
    buffer: Buffer.from('{"format": "agent-rl-lab/lab-run", "version": 7}'),
  });
  await expect(page.getByTestId('import-error')).toContainText('broken.json was not imported');
  await expect(page.getByRole('article')).toHaveCount(3);
  expect(errors).toEqual([]);
});

async function labelOf(card: ReturnType<Page['getByRole']>): Promise<string> {
  return (await card.getByRole('heading').innerText()).trim();
}

test('a run starts from a shipped checkpoint or from an ONNX file, without a warm-up', async ({
  page,
}) => {
  test.setTimeout(120_000);
  const errors = collectErrors(page);
  await page.goto('/#/lab');
  const form = page.getByRole('form', { name: 'New run' });
  await form.getByLabel('Algorithm').selectOption('grpo');
  await form.getByLabel('Task').selectOption('reverse');
  await form.getByLabel('Backend').selectOption('cpu');
  await form.getByLabel('Start from').selectOption('shipped:reverse');
  await form.getByRole('button', { name: 'Create run' }).click();
  const shipped = page.getByRole('article', { name: '#1 grpo on reverse' });
  await expect(shipped.getByTestId('run-status')).toHaveText('idle', { timeout: 60_000 });
  await expect(shipped.getByTestId('run-start')).toHaveText(
    'Starts from the shipped reverse model',
  );
  await expect(shipped.getByText(/SFT steps: greedy success/)).toHaveCount(0);
  await shipped.getByRole('button', { name: 'Step' }).click();
  await expect(shipped.getByTestId('run-steps')).toContainText('Update 1', { timeout: 60_000 });

  // A file: the form refuses to create the run until one is chosen.
  await form.getByLabel('Task').selectOption('copy');
  await form.getByLabel('Start from').selectOption('file');
  await expect(
    form.getByText('init: choose a checkpoint (.ckpt) or ONNX (.onnx) file'),
  ).toBeVisible();
  await form.getByLabel('Weights file', { exact: true }).setInputFiles('public/models/copy.onnx');
  await expect(form.getByText(/init: choose/)).toHaveCount(0);
  await form.getByRole('button', { name: 'Create run' }).click();
  const fromFile = page.getByRole('article', { name: '#2 grpo on copy' });
  await expect(fromFile.getByTestId('run-status')).toHaveText('idle', { timeout: 60_000 });
  await expect(fromFile.getByTestId('run-start')).toHaveText('Starts from copy.onnx');
  expect(errors).toEqual([]);
});

test('a new model with rotary positions warms up and trains; its card says how it knows positions', async ({
  page,
}) => {
  test.setTimeout(120_000);
  const errors = collectErrors(page);
  await page.goto('/#/lab');
  const card = await createLmRun(page, 'grpo', 1, 'rotary');
  await expect(card.getByTestId('run-start')).toHaveText(
    'Starts from a new model with rotary positions (RoPE, as Llama, SmolLM2 and Qwen2.5), then 5 SFT steps',
  );
  await card.getByRole('button', { name: 'Step' }).click();
  await expect(card.getByTestId('run-steps')).toContainText('Update 1', { timeout: 60_000 });
  expect(errors).toEqual([]);
});

test('a run keeps a retained task: its success on the card and in its own chart', async ({
  page,
}) => {
  test.setTimeout(120_000);
  const errors = collectErrors(page);
  await page.goto('/#/lab');
  const form = page.getByRole('form', { name: 'New run' });
  await form.getByLabel('Algorithm').selectOption('grpo');
  await form.getByLabel('Task').selectOption('shopping');
  await form.getByLabel('Backend').selectOption('cpu');
  await form.getByLabel('Start from').selectOption('shipped:shopping');
  await form.getByRole('combobox', { name: /^Retain/ }).selectOption('multiply');
  await form.getByRole('button', { name: 'Create run' }).click();
  const run = page.getByRole('article', { name: '#1 grpo on shopping' });
  await expect(run.getByTestId('run-status')).toHaveText('idle', { timeout: 60_000 });
  await expect(run.getByTestId('run-retained')).toHaveText('Retains multiply');
  await run.getByRole('button', { name: 'Step' }).click();
  // The shipped model multiplies 1–2 digit numbers (the options it was warmed up on) at about 90%.
  await expect(run.getByTestId('run-retained')).toHaveText(
    /^Retains multiply: (8\d|9\d|100)% greedy at the last update$/,
    { timeout: 60_000 },
  );
  await expect(page.getByRole('heading', { name: 'Retained task success' })).toBeVisible();
  expect(errors).toEqual([]);
});

test('a GRPO run with a KL term on "WebGPU (any)" trains on the software adapter', async ({
  page,
}) => {
  test.setTimeout(180_000);
  const errors = collectErrors(page);
  await page.goto('/#/lab');
  const form = page.getByRole('form', { name: 'New run' });
  await form.getByLabel('Algorithm').selectOption('grpo');
  await form.getByLabel('Task').selectOption('reverse');
  // 'Auto' would pass over SwiftShader for the CPU; this choice takes it.
  await form.getByLabel('Backend').selectOption('webgpu');
  await form.getByLabel('Start from').selectOption('shipped:reverse');
  const settings = form.locator('details').first();
  if (!(await settings.evaluate((el) => (el as HTMLDetailsElement).open))) {
    await form.getByText(/^Settings/).click();
  }
  // A KL term, so that the reference model and the KL kernels take part too.
  await form.getByRole('spinbutton', { name: 'klCoef live' }).fill('0.05');
  await form.getByRole('button', { name: 'Create run' }).click();
  const run = page.getByRole('article', { name: '#1 grpo on reverse' });
  await expect(run.getByTestId('run-status')).toHaveText('idle', { timeout: 90_000 });
  await expect(run.getByTestId('run-backend')).toContainText('WebGPU — google · swiftshader');
  for (const update of [1, 2]) {
    await run.getByRole('button', { name: 'Step' }).click();
    await expect(run.getByTestId('run-steps')).toContainText(`Update ${update}`, {
      timeout: 90_000,
    });
  }
  await expect.poll(() => pointsOf(page, 'run-1')).toBe(2);
  await expect(run.getByTestId('run-status')).not.toHaveText('error');
  await run.screenshot({ path: `${SCREENSHOTS}/lab-webgpu-run.png` });
  expect(errors).toEqual([]);
});
