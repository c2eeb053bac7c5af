import { expect, test, type Page } from '@playwright/test';
import { SCREENSHOTS, collectErrors } from './support';

/** The page scrolls sideways when its content is wider than the window. */
function sideScroll(page: Page): Promise<number> {
  return page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
}

test("a seeds link's runs start with one click; the page never scrolls sideways at 1,280 or 390 px; run controls come before the table's sort buttons", async ({
  page,
}) => {
  test.setTimeout(120_000);
  const errors = collectErrors(page);
  await page.goto('/#/learn/04-grpo/06-ppo-vs-grpo');
  await page.getByTestId('compare-in-lab').click();
  const cards = page.locator('.run-card');
  await expect(cards).toHaveCount(6);
  await expect(cards.getByTestId('run-status')).toHaveText(Array(6).fill('stored'));
  await expect(page.getByTestId('import-message')).toHaveText('Added 6 runs from the link.');

  await page.getByRole('button', { name: 'Start all 6 stopped runs' }).click();
  // Every run leaves "stored"; the runs take turns at training, each then reaches an update.
  await expect(cards.getByTestId('run-status')).not.toContainText(['stored']);
  await expect(page.getByRole('button', { name: /^Start all/ })).toHaveCount(0);
  const table = page.getByTestId('final-table');
  await expect(table.locator('tbody tr')).toHaveCount(6, { timeout: 60_000 });
  const first = cards.first();
  await first.getByText('Hyperparameters').click();
  // A live change puts a marked cell in the table, with screen-reader text that once escaped the
  // table's box and widened the page. Paused and stepped: the change lands at once.
  await first.getByRole('button', { name: 'Pause' }).dispatchEvent('click');
  await expect(first.getByTestId('run-status')).toHaveText('paused', { timeout: 30_000 });
  await first.getByRole('spinbutton', { name: 'lr live' }).fill('0.0005');
  await first.getByRole('button', { name: 'Apply live changes' }).click();
  await first.getByRole('button', { name: 'Step' }).click();
  await expect(table.locator('.changed')).toHaveCount(1, { timeout: 30_000 });

  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await expect.poll(() => sideScroll(page)).toBe(0);
    // The open Hyperparameters panel stays inside its card, none of its help clipped by a box.
    const spill = await first.evaluate((card) => {
      const edge = card.getBoundingClientRect().right;
      const past = [...card.querySelectorAll('*')].filter(
        (el) => el.getBoundingClientRect().right > edge + 0.5,
      );
      const clipped = [...card.querySelectorAll<HTMLElement>('.settings')].filter(
        (el) => el.scrollHeight > el.clientHeight + 1,
      );
      return past.length + clipped.length;
    });
    expect(spill).toBe(0);
    // The wide table scrolls inside its own box instead.
    const box = page.locator('.table-scroll');
    const [inner, outer] = await box.evaluate((el) => [el.scrollWidth, el.clientWidth]);
    expect(inner).toBeGreaterThan(outer);
    expect(outer).toBeLessThanOrEqual(width);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: `${SCREENSHOTS}/lab-${width}-top.png` });
    await first.screenshot({ path: `${SCREENSHOTS}/lab-${width}-run-card.png` });
    await table.scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SCREENSHOTS}/lab-${width}-final-table.png` });
  }

  // Tab from the last run's last control: no run control follows, and the sort buttons come.
  await page.setViewportSize({ width: 1280, height: 900 });
  await cards.last().getByText('Hyperparameters').focus();
  let reached = false;
  for (let i = 0; i < 80 && !reached; i++) {
    await page.keyboard.press('Tab');
    const where = await page.evaluate(() => {
      const el = document.activeElement;
      return { card: !!el?.closest('.run-card'), sort: !!el?.matches('.final-table button.sort') };
    });
    expect(where.card).toBe(false);
    reached = where.sort;
  }
  expect(reached).toBe(true);
  await expect(page.locator(':focus')).toHaveText('Run');
  expect(errors).toEqual([]);
});

test('the new-run form shows the key settings first, finds one by name, and keeps its algorithm and task across a reload', async ({
  page,
}) => {
  const errors = collectErrors(page);
  await page.goto('/#/lab');
  const form = page.getByRole('form', { name: 'New run' });
  await form.getByLabel('Algorithm').selectOption('grpo');
  await form.getByLabel('Task').selectOption('reverse');
  const visibleNames = () =>
    form.locator('.spec-fields .setting:visible label code').allTextContents();
  await expect
    .poll(visibleNames)
    .toEqual([
      'lr',
      'promptsPerUpdate',
      'groupSize',
      'clipLow',
      'clipHigh',
      'klCoef',
      'temperature',
    ]);
  const advanced = form.getByText(/^Advanced \(\d+\)$/);
  await expect(advanced).toBeVisible();
  await form.getByLabel('Find a setting').fill('kl');
  await expect.poll(visibleNames).toEqual(['klCoef', 'klEstimator', 'klPenalty']);
  await expect(form.getByText(/^3 of \d+ settings match\.$/)).toBeVisible();
  await form.screenshot({ path: `${SCREENSHOTS}/lab-new-run-settings.png` });

  await page.reload();
  await expect(form.getByLabel('Algorithm')).toHaveValue('grpo');
  await expect(form.getByLabel('Task')).toHaveValue('reverse');
  expect(errors).toEqual([]);
});

test('the compute line is short with the reason on demand, and the home page says what this machine trains on', async ({
  page,
}) => {
  const errors = collectErrors(page);
  await page.goto('/');
  // This machine's only WebGPU adapter is SwiftShader, a software fallback: 'auto' takes the CPU.
  await expect(page.getByTestId('home-machine')).toHaveText(
    'On this machine the lessons train on your CPU: everything works, the larger models just take longer.',
  );
  await expect(page.getByRole('heading', { level: 1 })).not.toContainText('GPU');
  const line = page.getByTestId('backend-line');
  await expect(line.locator('summary')).toHaveText('CPU — no hardware GPU found why?');
  const full = line.getByText(/^CPU — WebGPU not used: the only adapter is a software fallback/);
  await expect(full).toBeHidden();
  await line.getByText('why?').click();
  await expect(full).toBeVisible();
  await page.screenshot({ path: `${SCREENSHOTS}/home-compute.png`, fullPage: true });

  // A run card says where it trains in one line; the full sentence opens from it.
  await page.goto('/#/lab');
  await page
    .getByRole('form', { name: 'New run' })
    .getByRole('button', { name: 'Create run' })
    .click();
  const backend = page.locator('.run-card').first().getByTestId('run-backend');
  await expect(backend.locator('summary')).toHaveText(
    'CPU — environment algorithms run on the CPU',
  );
  // At most two short lines (the full paragraph took eight).
  expect(await backend.evaluate((el) => el.getBoundingClientRect().height)).toBeLessThan(45);
  await expect(backend.locator('details p')).toBeHidden();
  expect(errors).toEqual([]);
});

test("'Reveal the answer' says that a prediction comes first", async ({ page }) => {
  const errors = collectErrors(page);
  await page.goto('/#/learn/07-reading-a-run/01-reading-a-run');
  const box = page.locator('aside.predict').first();
  const reveal = box.getByRole('button', { name: 'Reveal the answer' });
  await expect(reveal).toBeDisabled();
  await expect(reveal).toHaveAccessibleDescription(
    'Write your prediction first: the answer opens after it.',
  );
  await box.getByLabel('Your prediction').fill('it goes up');
  await expect(reveal).toBeEnabled();
  await expect(reveal).toHaveAccessibleDescription('');
  await reveal.click();
  await expect(box.getByRole('status')).toContainText('Answer.');
  expect(errors).toEqual([]);
});
