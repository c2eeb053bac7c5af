import { expect, test, type Locator } from '@playwright/test';
import { SCREENSHOTS, collectErrors } from './support';

/** The widget's updates so far. */
const steps = async (widget: Locator) =>
  Number(await widget.getByTestId('widget-progress').getAttribute('data-steps'));

test('a lesson run says what it waits on, survives leaving the lesson, and its last update is inspectable after a reload', async ({
  page,
}) => {
  test.setTimeout(120_000);
  const errors = collectErrors(page);
  // GRPO on copy from the shipped model, on the CPU: its first update takes seconds.
  await page.goto('/?backend=cpu#/learn/04-grpo/01-group-relative-advantages');
  const widget = page.getByTestId('lesson-widget').first();
  // One click opens the run and starts it.
  await widget.getByRole('button', { name: 'Start' }).click();

  // Before the first update: its phase, and the check's target.
  await expect(widget.getByTestId('widget-phase')).toHaveText(
    /starting the first update|update 1: (generating answers|updating the policy)/,
    { timeout: 30_000 },
  );
  expect(await steps(widget)).toBe(0);
  await expect(widget.getByTestId('widget-standing')).toContainText('target gain ≥ +0.30');
  // Two updates measured: on request, about how long is left of the lesson's budget of 60 (the
  // time to the check, from the run's trend, needs a few more updates).
  await widget.getByText('Time to the budget').click({ timeout: 60_000 });
  await expect(widget.getByTestId('widget-time-left')).toHaveText(
    /about \d+ (s|min) left: \d+ updates to 60 at \d+\.\d s each$/,
    { timeout: 60_000 },
  );
  const before = await steps(widget);
  expect(before).toBeGreaterThanOrEqual(2);

  // Away to the lab and back: the same run, its updates, still training. Its card in the lab
  // says what the widget says: the phase, and (once the run has a trend) the time to its check.
  await page.goto('/?backend=cpu#/lab');
  const card = page.getByRole('article', { name: /lesson/ });
  await expect(card.getByTestId('run-phase')).toHaveText(
    /^update \d+: (generating answers|updating the policy)( · (check in about|no rise toward|at this trend).*)?$/,
    { timeout: 30_000 },
  );
  await card.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SCREENSHOTS}/lab-lesson-run-card.png` });
  await page.goBack();
  await expect(widget.getByTestId('widget-status')).toHaveText('running');
  expect(await steps(widget)).toBeGreaterThanOrEqual(before);
  await expect(widget.getByRole('button', { name: 'Pause' })).toBeEnabled();
  await expect.poll(() => steps(widget), { timeout: 30_000 }).toBeGreaterThan(before + 1);
  await widget.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SCREENSHOTS}/lesson-reattached.png` });

  await widget.getByRole('button', { name: 'Pause' }).click();
  await expect(widget.getByTestId('widget-status')).toHaveText('paused');
  const done = await steps(widget);

  // A reload: the run is stored (no worker), and the inspector shows its last update's samples.
  await page.reload();
  await expect(widget.getByTestId('widget-status')).toHaveText('stored');
  expect(await steps(widget)).toBe(done);
  await page.goto('/?backend=cpu#/lab');
  await page.getByTestId('inspect-load').click();
  await expect(page.getByTestId('inspect-summary')).toContainText(
    `GRPO update ${done}: 128 samples in 16 groups of 8`,
  );
  await expect(page.getByTestId('inspect-group').first()).toBeVisible();
  await page.getByTestId('inspect-summary').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SCREENSHOTS}/inspector-reloaded.png` });
  expect(errors).toEqual([]);
});
