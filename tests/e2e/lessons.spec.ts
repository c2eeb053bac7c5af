import { expect, test } from '@playwright/test';
import { SCREENSHOTS, collectErrors } from './support';

test('a lesson widget runs to its check, marks the lesson done, and progress survives a reload', async ({
  page,
}) => {
  const errors = collectErrors(page);
  await page.goto('/#/learn');
  await expect(page.getByRole('heading', { level: 1, name: 'Lessons' })).toBeVisible();
  await page.getByRole('link', { name: 'Returns, discount and value iteration' }).click();

  const heading = page.getByRole('heading', {
    level: 1,
    name: 'Returns, discount and value iteration',
  });
  await expect(heading).toBeFocused();
  await expect(page.getByTestId('lesson-not-done')).toBeVisible();
  await expect(page.locator('.katex').first()).toBeVisible();

  const widget = page.getByTestId('lesson-widget');
  await widget.getByRole('button', { name: 'Open the run' }).click();
  await expect(widget.getByTestId('widget-status')).toHaveText('idle');
  await widget.getByRole('button', { name: 'Start' }).click();
  await expect(widget.getByTestId('widget-check')).toContainText('passed', { timeout: 30_000 });
  await expect(page.getByTestId('lesson-done')).toBeVisible();
  await expect
    .poll(async () => Number(await widget.getByTestId('lesson-chart').getAttribute('data-points')))
    .toBeGreaterThan(10);
  await page.screenshot({ path: `${SCREENSHOTS}/lesson-value-iteration.png`, fullPage: true });

  await page.reload();
  await expect(page.getByTestId('lesson-done')).toBeVisible();
  await page.goto('/#/learn');
  await expect(page.locator('[data-lesson="01-mdp/01-value-iteration"]')).toContainText('Done');
  expect(errors).toEqual([]);
});

test('the PPO lesson plots the clipped objective from the policy-loss op', async ({ page }) => {
  const errors = collectErrors(page);
  await page.goto('/#/learn/03-ppo/01-clipped-objective');
  const plot = page.getByTestId('clip-plot');
  // A = −1 with dual clip c = 3: at r = 4 the objective is capped at c·A = −3.
  await expect(plot.locator('svg[data-advantage="-1"]')).toHaveAttribute(
    'aria-label',
    /J = -3\.00/,
  );
  // A = +1: clipped at (1 + ε)·A = 1.2.
  await expect(plot.locator('svg[data-advantage="1"]')).toHaveAttribute('aria-label', /J = 1\.20/);
  await plot.getByLabel('dual clip').uncheck();
  await expect(plot.locator('svg[data-advantage="-1"]')).toHaveAttribute(
    'aria-label',
    /J = -4\.00/,
  );
  await plot.getByLabel('dual clip').check();
  await page.getByRole('button', { name: 'Mark this lesson done' }).click();
  await expect(page.getByTestId('lesson-done')).toBeVisible();
  await page.screenshot({ path: `${SCREENSHOTS}/lesson-ppo-clip.png`, fullPage: true });
  expect(errors).toEqual([]);
});

test('every lesson renders its math and references, and each widget opens its run', async ({
  page,
}) => {
  test.setTimeout(180_000);
  const errors = collectErrors(page);
  await page.goto('/#/learn');
  const links = page.locator('[data-lesson] a');
  const hrefs = await links.evaluateAll((as) => as.map((a) => a.getAttribute('href')!));
  expect(hrefs.length).toBeGreaterThanOrEqual(6);
  for (const href of hrefs) {
    await page.goto(`/${href}`);
    await expect(page.getByRole('heading', { level: 1 })).toBeFocused();
    await expect(page.locator('.katex-error')).toHaveCount(0);
    await expect(page.getByRole('heading', { name: 'References' })).toBeVisible();
    for (const widget of await page.getByTestId('lesson-widget').all()) {
      await widget.getByRole('button', { name: 'Open the run' }).click();
      await expect(widget.getByTestId('widget-status')).toHaveText(/idle|paused/, {
        timeout: 60_000,
      });
    }
  }
  expect(errors).toEqual([]);
});
