import { expect, test } from '@playwright/test';
import { SCREENSHOTS, collectErrors } from './support';

test('a lesson widget links to its run in the inspector, which switches between its kept updates', async ({
  page,
}) => {
  test.setTimeout(150_000);
  const errors = collectErrors(page);
  await page.goto('/?backend=cpu#/learn/04-grpo/01-group-relative-advantages');
  const widget = page.getByTestId('lesson-widget').first();
  await widget.getByRole('button', { name: 'Start' }).click();
  const progress = widget.getByTestId('widget-progress');
  await expect
    .poll(async () => Number(await progress.getAttribute('data-steps')), { timeout: 90_000 })
    .toBeGreaterThanOrEqual(3);
  await widget.getByRole('button', { name: 'Pause' }).click();
  // The update under way finishes first (seconds on the CPU).
  await expect(widget.getByTestId('widget-status')).toHaveText('paused', { timeout: 30_000 });
  const steps = Number(await progress.getAttribute('data-steps'));

  // The link opens the lab with the inspector on this run, loaded.
  await widget.getByTestId('widget-inspect').click();
  await expect(page).toHaveURL(/#\/lab\?inspect=/);
  const summary = page.getByTestId('inspect-summary');
  await expect(summary).toContainText(`GRPO update ${steps}:`, { timeout: 30_000 });

  // The updates to switch between: the first, maybe a rise, and the last.
  const choices = page.getByTestId('inspect-updates');
  await expect(choices).toContainText('first: update 1');
  await expect(choices).toContainText(`last: update ${steps}`);
  const radios = page.getByTestId('inspect-update');
  expect(await radios.count()).toBeGreaterThanOrEqual(2);
  expect(await radios.count()).toBeLessThanOrEqual(3);
  await expect(radios.last()).toBeChecked();

  await page.getByLabel('first: update 1').check();
  await expect(summary).toContainText('GRPO update 1:');
  await expect(page.getByTestId('inspect-group').first()).toBeVisible();
  await summary.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SCREENSHOTS}/inspector-first-update.png` });

  await page.getByLabel(`last: update ${steps}`).check();
  await expect(summary).toContainText(`GRPO update ${steps}:`);
  expect(errors).toEqual([]);
});
