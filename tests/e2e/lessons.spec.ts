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

test('the GRPO bias lesson plots advantages and per-token weights from the real ops', async ({
  page,
}) => {
  const errors = collectErrors(page);
  await page.goto('/#/learn/04-grpo/02-std-and-length-bias');
  const plot = page.getByTestId('group-bias');
  // k = 1 of 8: with the std a success gets 0.875/√(1/8) ≈ +2.47, without it +0.875.
  await expect(plot.getByTestId('group-bias-advantages')).toHaveAttribute(
    'aria-label',
    /a success gets \+2\.47 with the std and \+0\.88 without/,
  );
  // 4 and 16 tokens, B = 2. seq-mean-token-mean: 1/(2·4) and 1/(2·16).
  const short = plot.getByTestId('token-weight-short');
  const long = plot.getByTestId('token-weight-long');
  await expect(short).toHaveText('1/8');
  await expect(long).toHaveText('1/32');
  // token-mean: 1/20 for every one of the 20 tokens.
  await plot.getByLabel('loss aggregation').selectOption('token-mean');
  await expect(short).toHaveText('1/20');
  await expect(long).toHaveText('1/20');
  // dr-grpo: 1/(B·L_max) = 1/(2·16).
  await plot.getByLabel('loss aggregation').selectOption('dr-grpo');
  await expect(short).toHaveText('1/32');
  await expect(long).toHaveText('1/32');
  await expect(plot.getByTestId('group-bias-weights')).toHaveAttribute(
    'aria-label',
    /under dr-grpo: the 4-token answer 1\/32 per token, 1\/8 in all/,
  );
  expect(errors).toEqual([]);
});

test('the GAE lesson plots advantages from the gae op and reacts to the λ slider', async ({
  page,
}) => {
  const errors = collectErrors(page);
  await page.goto('/#/learn/03-ppo/02-gae-and-cartpole');
  const plot = page.getByTestId('gae-plot');
  const svg = plot.getByTestId('gae-svg');
  const firstBar = svg.locator('rect[data-t="0"]');
  // Teaching trajectory, γ = 0.98. λ = 0: A_0 = δ_0 = 1 + 0.98·8.9 − 8.6 = 1.122.
  await plot.getByLabel(/^λ =/).fill('0');
  await expect(svg).toHaveAttribute('aria-label', /λ = 0\.00: A_0 = 1\.12, A_13 = -2\.10/);
  const lowHeight = Number(await firstBar.getAttribute('height'));
  // λ = 1: A_0 = G_0 − V_0 = (1 − 0.98^14)/0.02 − 8.6 ≈ 12.318 − 8.6 = 3.72; A_13 stays 1 − 3.1.
  await plot.getByLabel(/^λ =/).fill('1');
  await expect(svg).toHaveAttribute('aria-label', /λ = 1\.00: A_0 = 3\.72, A_13 = -2\.10/);
  expect(Number(await firstBar.getAttribute('height'))).toBeGreaterThan(lowHeight * 3);
  // γ = λ = 1: A_0 = 14 rewards − 8.6 = 5.4.
  await plot.getByLabel(/^γ =/).fill('1');
  await expect(svg).toHaveAttribute('aria-label', /A_0 = 5\.40/);
  await page.screenshot({ path: `${SCREENSHOTS}/lesson-ppo-gae.png`, fullPage: true });
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
    // The same page throughout: leaving a lesson parks its widgets' runs, so the lessons together
    // open more widgets than the lab's 8 runs at once without reaching the limit.
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
