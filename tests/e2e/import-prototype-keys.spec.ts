import { expect, test } from '@playwright/test';
import { writeFileSync } from 'node:fs';
import { writeLabRunFile } from '../../src/compare/run-file';
import { DEFAULT_Q_LEARNING_CONFIG } from '../../src/rl/q-learning';
import { SCREENSHOTS, collectErrors } from './support';

/**
 * An imported run whose metrics are named after Object.prototype members (toString, constructor)
 * beside a run that does not log them: the compare view draws both, charts the odd names from the
 * "More metrics" picker, and nothing on the page fails.
 */
test('metrics named toString and constructor import and chart beside another run', async ({
  page,
}) => {
  const errors = collectErrors(page);
  const file = 'test-output/prototype-metrics.json';
  writeFileSync(
    file,
    writeLabRunFile({
      algorithm: 'q-learning',
      task: 'cliffwalking',
      seed: 7,
      config: { ...DEFAULT_Q_LEARNING_CONFIG },
      metrics: {
        'charts/episodic_return': [-100, -60, -40, -30],
        toString: [1, 2, 3, 4],
        constructor: [4, 3, 2, 1],
      },
      events: [],
      label: 'odd names',
    }),
  );
  await page.goto('/#/lab');
  const form = page.getByRole('form', { name: 'New run' });
  await form.getByLabel('Algorithm').selectOption('q-learning');
  await form.getByLabel('Environment').selectOption('cliffwalking');
  await form.getByRole('button', { name: 'Create run' }).click();
  const live = page.getByRole('article', { name: /^#1 q-learning on cliffwalking/ });
  await expect(live.getByTestId('run-status')).toHaveText('idle');
  await live.getByRole('button', { name: 'Step' }).click();

  await page.getByTestId('import-file').setInputFiles(file);
  await expect(page.getByRole('article', { name: /odd names/ })).toBeVisible();
  const view = page.getByTestId('compare-view');
  for (const metric of ['toString', 'constructor']) {
    await view.getByLabel('More metrics').selectOption(metric);
    const chart = view.getByTestId('compare-chart').filter({ hasText: metric });
    await expect(chart.getByTestId('chart-summary')).toContainText(`did not log ${metric}`);
  }
  await view.scrollIntoViewIfNeeded();
  await view.screenshot({ path: `${SCREENSHOTS}/compare-prototype-metrics.png` });
  expect(errors).toEqual([]);
});
