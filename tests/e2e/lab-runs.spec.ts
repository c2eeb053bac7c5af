import { expect, test, type Page } from '@playwright/test';
import { SCREENSHOTS, collectErrors } from './support';

/** The first stored run's update count and its checkpoint's update, read from IndexedDB. */
function stored(page: Page): Promise<{ steps?: number; checkpoint?: number }> {
  return page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const open = indexedDB.open('agent-rl-lab');
      open.onsuccess = () => resolve(open.result);
      open.onerror = () => reject(open.error);
    });
    const read = <T>(store: string) =>
      new Promise<T[]>((resolve, reject) => {
        const all = db.transaction(store, 'readonly').objectStore(store).getAll();
        all.onsuccess = () => resolve(all.result as T[]);
        all.onerror = () => reject(all.error);
      });
    const [runs, checkpoints] = await Promise.all([
      read<{ steps: number }>('runs'),
      read<{ step: number }>('checkpoints'),
    ]);
    db.close();
    return { steps: runs[0]?.steps, checkpoint: checkpoints[0]?.step };
  });
}

/** Creates a run from the "New run" form and returns its card. */
async function createRun(page: Page, algo: string, env: string, n: number) {
  const form = page.getByRole('form', { name: 'New run' });
  await form.getByLabel('Algorithm').selectOption(algo);
  await form.getByLabel('Environment').selectOption(env);
  await form.getByRole('button', { name: 'Create run' }).click();
  const card = page.getByRole('article', { name: `#${n} ${algo} on ${env}` });
  await expect(card.getByTestId('run-status')).toHaveText('idle');
  await expect(card.getByTestId('run-backend')).toContainText('CPU');
  return card;
}

test('two runs train in workers, stream metrics, and mark a live epsilon change', async ({
  page,
}) => {
  const errors = collectErrors(page);
  await page.goto('/#/lab');
  const qLearning = await createRun(page, 'q-learning', 'cliffwalking', 1);
  const sarsa = await createRun(page, 'sarsa', 'cliffwalking', 2);

  await qLearning.getByRole('button', { name: 'Start' }).click();
  await sarsa.getByRole('button', { name: 'Start' }).click();
  await expect(qLearning.getByTestId('run-status')).toHaveText('running');
  await expect(sarsa.getByTestId('run-status')).toHaveText('running');

  // The runs take turns at training, leaving a CPU core to the page; the list says how many train
  // at once (this device's cores but one, at least one).
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  const atOnce = Math.max(1, cores - 1);
  await expect(page.getByTestId('training-at-once')).toContainText(
    `${atOnce === 1 ? 'One run trains' : `At most ${atOnce} runs train`} at a time`,
  );

  // Both runs put points on the chart (its default metric is charts/episodic_return).
  const chart = page.getByTestId('metric-chart');
  for (const id of ['run-1', 'run-2']) {
    await expect
      .poll(async () =>
        Number(await chart.locator(`[data-run="${id}"]`).first().getAttribute('data-points')),
      )
      .toBeGreaterThan(20);
  }

  // A live change on the Q-learning run: applied at its next update, marked on the chart.
  await qLearning.getByText('Hyperparameters').click();
  const epsilon = qLearning.getByLabel('epsilon live', { exact: true });
  await expect(epsilon).toBeEnabled();
  await expect(qLearning.getByLabel('initialQ', { exact: true })).toBeDisabled();
  await epsilon.fill('0.3');
  await qLearning.getByRole('button', { name: 'Apply live changes' }).click();
  await expect(chart.locator('[data-testid="event-marker"][data-run="run-1"]')).toHaveCount(1);
  await expect(qLearning.getByTestId('run-steps')).toContainText('last change at update');

  // A value out of range is refused with the field and its range named.
  await epsilon.fill('1.5');
  await qLearning.getByRole('button', { name: 'Apply live changes' }).click();
  await expect(qLearning.getByRole('alert')).toContainText('epsilon must be a number in [0, 1]');

  await qLearning.getByRole('button', { name: 'Pause' }).click();
  await sarsa.getByRole('button', { name: 'Pause' }).click();
  await expect(qLearning.getByTestId('run-status')).toHaveText('paused');
  await expect(sarsa.getByTestId('run-status')).toHaveText('paused');

  // Paused: one more update at a time.
  const before = Number(
    (await qLearning.getByTestId('run-steps').innerText()).match(/Update (\d+)/)?.[1],
  );
  await qLearning.getByRole('button', { name: 'Step' }).click();
  await expect(qLearning.getByTestId('run-steps')).toContainText(`Update ${before + 1}`);

  await page.screenshot({ path: `${SCREENSHOTS}/lab-runs.png`, fullPage: true });
  expect(errors).toEqual([]);
});

test('the form names the field and its range when a setting is out of range', async ({ page }) => {
  const errors = collectErrors(page);
  await page.goto('/#/lab');
  const form = page.getByRole('form', { name: 'New run' });
  // alpha is one of the key settings, shown without opening anything.
  await form.getByLabel('alpha live', { exact: true }).fill('2');
  await expect(form.getByText('alpha must be a number in (0, 1], got 2')).toBeVisible();
  await form.getByRole('button', { name: 'Create run' }).click();
  await expect(form.getByRole('status')).toContainText('Fix 1 setting(s) first');
  await expect(page.getByRole('article')).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('reset asks first, then takes a run back to update 0 with its first settings', async ({
  page,
}) => {
  const errors = collectErrors(page);
  await page.goto('/#/lab');
  const run = await createRun(page, 'q-learning', 'cliffwalking', 1);
  const reset = run.getByRole('button', { name: 'Reset', exact: true });
  await expect(reset).toBeDisabled(); // nothing to reset yet
  for (let i = 0; i < 3; i++) await run.getByRole('button', { name: 'Step' }).click();
  await expect(run.getByTestId('run-steps')).toContainText('Update 3');
  await reset.click();
  const confirm = run.getByRole('group', { name: 'Confirm reset' });
  await expect(confirm).toContainText('Its 3 updates and live changes are lost');
  await confirm.getByRole('button', { name: 'Cancel' }).click();
  await expect(run.getByTestId('run-steps')).toContainText('Update 3');
  await reset.click();
  await confirm.getByRole('button', { name: 'Reset to update 0' }).click();
  await expect(run.getByTestId('run-steps')).toHaveText('Update 0');
  await expect(run.getByTestId('run-status')).toHaveText('idle');
  await run.getByRole('button', { name: 'Step' }).click();
  await expect(run.getByTestId('run-steps')).toContainText('Update 1');
  expect(errors).toEqual([]);
});

test('PPO on CartPole keeps a checkpoint: after a reload it resumes from it, not from update 0', async ({
  page,
}) => {
  const errors = collectErrors(page);
  await page.goto('/#/lab');
  const run = await createRun(page, 'ppo-mlp', 'cartpole', 1);
  for (let i = 0; i < 4; i++) await run.getByRole('button', { name: 'Step' }).click();
  await expect(run.getByTestId('run-steps')).toContainText('Update 4');
  // A run is checkpointed when it pauses (and every 30 s of training): start and pause it.
  await run.getByRole('button', { name: 'Start' }).click();
  await expect(run.getByTestId('run-status')).toHaveText('running');
  await run.getByRole('button', { name: 'Pause' }).click();
  await expect(run.getByTestId('run-status')).toHaveText('paused');
  const steps = Number((await run.getByTestId('run-steps').innerText()).match(/Update (\d+)/)![1]);
  // The run and its checkpoint are written in the background: wait until the store holds both.
  await expect.poll(() => stored(page), { timeout: 15_000 }).toEqual({ steps, checkpoint: steps });
  await page.reload();
  await expect(run.getByTestId('run-backend')).toContainText(
    `Start resumes from its checkpoint at update ${steps} and trains on`,
  );
  await expect(run.getByTestId('run-status')).toHaveText('stored');
  await run.getByRole('button', { name: 'Step' }).click();
  await expect(run.getByTestId('run-steps')).toContainText(`Update ${steps + 1}`);
  await page.screenshot({ path: `${SCREENSHOTS}/lab-cartpole-resumed.png`, fullPage: true });
  expect(errors).toEqual([]);
});
