import { expect, test } from '@playwright/test';
import { SCREENSHOTS, collectErrors } from './support';

test('the PPO-vs-GRPO lesson trains three seeds of each on the page: bands on one scale and a live table', async ({
  page,
}) => {
  test.setTimeout(180_000);
  const errors = collectErrors(page);
  await page.goto('/?backend=cpu#/learn/04-grpo/06-ppo-vs-grpo');
  await expect(page.getByRole('heading', { level: 1 })).toBeFocused({ timeout: 15_000 });
  // The side-by-side is one block now, not two single-seed widgets.
  await expect(page.getByTestId('lesson-widget')).toHaveCount(0);
  const block = page.getByTestId('lesson-seeds');
  await expect(block.getByTestId('seeds-check')).toContainText(
    'Check, on every one of 3 seeds (1, 2, 3): reward/accuracy gain>=0.3',
  );
  await block.getByRole('button', { name: 'Open the runs' }).click();
  const status = block.getByTestId('seeds-status');
  await expect(status).toHaveText(/^6 runs, 0 running, updates 0–0$/, { timeout: 60_000 });
  // Runs stop at their pass unless the reader asks for the whole budget.
  await expect(block.getByTestId('seeds-how')).toContainText(
    'Each run stops at the update it passes its check',
  );
  await expect(block.getByRole('button', { name: 'Train all to update 60' })).toBeEnabled();

  await block.getByRole('button', { name: 'Start all' }).click();
  // Every run has at least 3 updates: each preset's mean and band span updates 1 to 3 or more.
  await expect
    .poll(async () => Number(/updates (\d+)–/.exec((await status.textContent()) ?? '')?.[1] ?? 0), {
      timeout: 120_000,
    })
    .toBeGreaterThanOrEqual(3);
  await block.getByRole('button', { name: 'Pause all' }).click();
  await expect(status).toContainText('0 running', { timeout: 30_000 });

  // One mean line and one ±1 std band per preset, each over 3 updates or more (the chart's table
  // of its lines: points per line and band).
  const chart = block.getByTestId('seeds-chart');
  const means = chart.getByTestId('chart-line');
  await expect(means).toHaveCount(2);
  for (const mean of await means.all()) {
    expect(Number(await mean.getAttribute('data-points'))).toBeGreaterThanOrEqual(3);
  }
  const bands = chart.getByTestId('chart-band');
  await expect(bands).toHaveCount(2);
  for (const band of await bands.all()) {
    expect(Number(await band.getAttribute('data-points'))).toBeGreaterThanOrEqual(3);
  }
  await expect(
    chart.getByRole('img', {
      name: /PPO \(ppo-copy\) over \d+ updates, last [\d.]+; GRPO \(grpo-copy\) over \d+ updates/,
    }),
  ).toBeVisible();
  await expect(block.getByText('PPO (ppo-copy): mean ± 1 std over 3 seeds')).toBeVisible();
  await expect(block.getByText('GRPO (grpo-copy): mean ± 1 std over 3 seeds')).toBeVisible();

  // A few updates are far from the 15 a gain check needs: every cell still says so.
  const rows = block.getByTestId('seeds-row');
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(0).getByRole('rowheader')).toHaveText('PPO (ppo-copy)');
  await expect(rows.nth(1).getByRole('rowheader')).toHaveText('GRPO (grpo-copy)');
  for (const row of await rows.all()) {
    await expect(row.getByRole('cell')).toHaveText([
      '0 of 3',
      'not yet',
      'not yet',
      'not yet',
      'not yet',
    ]);
  }
  await expect(block.getByTestId('seeds-difference').getByRole('rowheader')).toHaveText(
    'PPO (ppo-copy) − GRPO (grpo-copy)',
  );
  // The caption sits under the scrolling box (WideTable), where it wraps, and describes the table.
  const caption = block.getByTestId('table-caption');
  await expect(caption).toContainText('n = 3 seeds per preset, trained on CPU');
  await expect(block.getByRole('table')).toHaveAttribute(
    'aria-describedby',
    (await caption.getAttribute('id'))!,
  );
  await expect(page.getByTestId('lesson-not-done')).toBeVisible();
  await block.scrollIntoViewIfNeeded();
  await block.screenshot({ path: `${SCREENSHOTS}/lesson-ppo-vs-grpo-seeds.png` });

  // Leaving the lesson parks the runs: the lab lists all six, stored, with their updates.
  await page.evaluate(() => (location.hash = '#/lab'));
  await expect(page.locator('.run-card h3')).toHaveCount(6);
  expect(errors).toEqual([]);
});
