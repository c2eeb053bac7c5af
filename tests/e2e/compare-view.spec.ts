import { expect, test, type Page } from '@playwright/test';
import { SCREENSHOTS, collectErrors } from './support';

/** Creates a Q-learning run on CliffWalking with `seed` from the "New run" form; returns its card. */
async function createRun(page: Page, seed: number, n: number) {
  const form = page.getByRole('form', { name: 'New run' });
  await form.getByLabel('Algorithm').selectOption('q-learning');
  await form.getByLabel('Environment').selectOption('cliffwalking');
  await form.getByLabel('Seed').fill(String(seed));
  await form.getByRole('button', { name: 'Create run' }).click();
  const card = page.getByRole('article', {
    name: `#${n} q-learning on cliffwalking, seed ${seed}`,
  });
  await expect(card.getByTestId('run-status')).toHaveText('idle');
  return card;
}

/** Points the primary chart holds for a run. */
async function pointsOf(page: Page, id: string): Promise<number> {
  const line = page.getByTestId('metric-chart').locator(`[data-run="${id}"]`).first();
  return Number(await line.getAttribute('data-points'));
}

test('two seeds train, switch to environment steps, group into a band, keys pause and step', async ({
  page,
}) => {
  const errors = collectErrors(page);
  await page.goto('/#/lab');
  const first = await createRun(page, 1, 1);
  const second = await createRun(page, 2, 2);
  await first.getByRole('button', { name: 'Start' }).click();
  await second.getByRole('button', { name: 'Start' }).click();
  await expect(first.getByTestId('run-status')).toHaveText('running');
  await expect(second.getByTestId('run-status')).toHaveText('running');

  const view = page.getByTestId('compare-view');
  for (const id of ['run-1', 'run-2']) {
    await expect.poll(() => pointsOf(page, id)).toBeGreaterThan(50);
  }

  // Every chart of a Q-learning run: return, episode length; plus one picked from "More metrics".
  await view.getByLabel('More metrics').selectOption('losses/td_error');
  await expect(view.getByTestId('compare-chart')).toHaveCount(3);

  // Environment steps: Σ episode lengths, so both runs stay on the chart.
  await view.getByLabel('X-axis').selectOption({ label: 'environment steps' });
  const summary = view.getByTestId('chart-summary').first();
  await expect(summary).toContainText('charts/episodic_return over environment steps');
  await expect(view.getByTestId('excluded-run')).toHaveCount(0);

  await view.getByLabel('Group seeds').check();
  await expect(view.getByTestId('band-caption').first()).toContainText('over 2 seeds');
  await expect(summary).toContainText('runs #1 and #2 (mean ± 1 std over 2 seeds');

  // The final-metrics table: one row per run.
  await expect(view.getByTestId('final-table').locator('tbody tr')).toHaveCount(2);

  await page.screenshot({ path: `${SCREENSHOTS}/compare-view.png`, fullPage: true });

  // Keyboard: ungroup, focus run 1's legend entry; space pauses it, s steps it once.
  await view.getByLabel('Group seeds').uncheck();
  await view.locator('.legend-entry[data-run="run-1"]').focus();
  await page.keyboard.press(' ');
  await expect(first.getByTestId('run-status')).toHaveText('paused');
  await expect(second.getByTestId('run-status')).toHaveText('running');
  const steps = async () =>
    Number((await first.getByTestId('run-steps').innerText()).match(/Update (\d+)/)?.[1]);
  const before = await steps();
  await page.keyboard.press('s');
  await expect.poll(steps).toBe(before + 1);

  // Selected in the legend, with focus elsewhere: space acts on the selected run.
  await view.locator('.legend-entry[data-run="run-2"]').click();
  await expect(view.locator('.legend-entry[data-run="run-2"]')).toHaveAttribute(
    'aria-pressed',
    'true',
  );
  await page.locator('#compare-title').click();
  await page.keyboard.press(' ');
  await expect(second.getByTestId('run-status')).toHaveText('paused');

  // Typing in a field is never a shortcut.
  await page.getByRole('form', { name: 'New run' }).getByLabel('Seed').focus();
  await page.keyboard.press('s');
  await expect(first.getByTestId('run-status')).toHaveText('paused');

  // Tablet width: one chart per row, nothing wider than the page.
  await page.setViewportSize({ width: 768, height: 1024 });
  const boxes = await view
    .getByTestId('compare-chart')
    .evaluateAll((els) => els.map((el) => el.getBoundingClientRect().left));
  expect(new Set(boxes.map(Math.round)).size).toBe(1);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(768);
  await page.screenshot({ path: `${SCREENSHOTS}/compare-view-768.png`, fullPage: true });
  expect(errors).toEqual([]);
});
