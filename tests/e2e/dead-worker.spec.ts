import { expect, test } from '@playwright/test';
import { SCREENSHOTS } from './support';

/**
 * A run's worker that dies mid-training (here its script is served wrapped so that it throws a few
 * seconds after it starts, as a crash would): the card says the run failed and why, keeps its
 * updates, and Resume brings it back in a fresh worker that Pause then stops.
 */
test('a run whose worker dies is marked failed, keeps its data and resumes', async ({ page }) => {
  test.setTimeout(120_000);
  // Only the first run worker is wrapped; the one Resume starts is the real script.
  await page.route(
    /\/assets\/run\.worker-[^/?]+\.js$/,
    (route) =>
      route.fulfill({
        contentType: 'text/javascript',
        body:
          `import ${JSON.stringify(`${route.request().url()}?real`)};\n` +
          'setTimeout(() => { throw new Error("simulated crash"); }, 6000);\n',
      }),
    { times: 1 },
  );
  await page.goto('/#/lab');
  const form = page.getByRole('form', { name: 'New run' });
  await form.getByLabel('Algorithm').selectOption('q-learning');
  await form.getByLabel('Environment').selectOption('cliffwalking');
  await form.getByRole('button', { name: 'Create run' }).click();
  const card = page.getByRole('article', { name: '#1 q-learning on cliffwalking' });
  await expect(card.getByTestId('run-status')).toHaveText('idle');
  await card.getByRole('button', { name: 'Start' }).click();
  await expect(card.getByTestId('run-status')).toHaveText('running');

  await expect(card.getByTestId('run-status')).toHaveText('error', { timeout: 30_000 });
  await expect(card.getByRole('alert')).toContainText(/Its worker stopped \(.*simulated crash\)/);
  await expect(card.getByRole('alert')).toContainText(/updates are kept; Resume brings it back/);
  const steps = Number(/Update (\d+)/.exec(await card.getByTestId('run-steps').innerText())![1]);
  expect(steps).toBeGreaterThan(0);
  await card.screenshot({ path: `${SCREENSHOTS}/lab-dead-worker.png` });

  await card.getByRole('button', { name: 'Resume' }).click();
  await expect(card.getByTestId('run-status')).toHaveText('running', { timeout: 30_000 });
  await expect(card.getByRole('alert')).toHaveCount(0);
  await card.getByRole('button', { name: 'Pause' }).dispatchEvent('click');
  await expect(card.getByTestId('run-status')).toHaveText('paused', { timeout: 30_000 });
  const after = Number(/Update (\d+)/.exec(await card.getByTestId('run-steps').innerText())![1]);
  expect(after).toBeGreaterThanOrEqual(steps);
});
