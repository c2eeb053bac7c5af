import { expect, test } from '@playwright/test';
import { FLAVOR_RELEASES } from '../../src/ops/flavor-releases';
import { collectErrors } from './support';

test("the share panel names the framework releases and offers a run's TRL and verl files", async ({
  page,
}) => {
  test.setTimeout(120_000);
  const errors = collectErrors(page);
  await page.goto('/#/lab');
  const form = page.getByRole('form', { name: 'New run' });
  await form.getByLabel('Algorithm').selectOption('ppo');
  await form.getByLabel('Task').selectOption('reverse');
  await form.getByLabel('Backend').selectOption('cpu');
  // Reverse opens on its shipped RL start; a new model with a 5-step warm-up is quicker here.
  await form.getByLabel('Start from').selectOption('new');
  const settings = form.locator('details').first();
  if (!(await settings.evaluate((el) => (el as HTMLDetailsElement).open))) {
    await form.getByText(/^Settings/).click();
  }
  await form.getByLabel('sftSteps', { exact: true }).fill('5');
  await form.getByRole('button', { name: 'Create run' }).click();
  const card = page.getByRole('article', { name: '#1 ppo on reverse' });
  await expect(card.getByTestId('run-status')).toHaveText('idle', { timeout: 60_000 });

  const share = page.getByRole('region', { name: 'Keep and share' });
  await share.getByText('Take it further').click();
  const { trl, verl } = FLAVOR_RELEASES;
  await expect(share.getByTestId('export-releases')).toContainText(
    `TRL ${trl.release} and verl ${verl.release}`,
  );
  await expect(share.getByRole('heading', { name: `TRL ${trl.release}` })).toBeVisible();
  await expect(share.getByRole('heading', { name: `verl ${verl.release}` })).toBeVisible();
  // PPO lives in trl.experimental.ppo since TRL v0.29; verl gets a command with its critic.
  await expect(share.getByTestId('trl-file')).toContainText(
    'from trl.experimental.ppo import PPOConfig, PPOTrainer',
  );
  await expect(share.getByTestId('verl-file').first()).toContainText('critic.optim.clip_grad=1.0');
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    share.getByRole('button', { name: 'Download' }).first().click(),
  ]);
  expect(download.suggestedFilename()).toBe('train_trl_ppo.py');
  expect(errors).toEqual([]);
});
