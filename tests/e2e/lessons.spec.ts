import { expect, test } from '@playwright/test';
import { SCREENSHOTS, collectErrors } from './support';

test('a lesson widget runs to its check, marks the lesson done, and progress survives a reload', async ({
  page,
}) => {
  const errors = collectErrors(page);
  await page.goto('/#/learn');
  await expect(page.getByRole('heading', { level: 1, name: 'Lessons' })).toBeVisible();
  // The first lesson is also the first step of the shortest route to a tool-using agent.
  const route = page.getByTestId('route');
  // The figure is the route's stated minutes (tests/lessons/reading-time.test.ts ties them to the
  // pages); here: it is shown, and under the hour the lab promises.
  await expect(route).toContainText(/5 lessons, about \d+ minutes/);
  const routeMinutes = Number(/about (\d+) minutes/.exec((await route.textContent()) ?? '')?.[1]);
  expect(routeMinutes).toBeLessThan(60);
  await expect(route).toContainText('0 of 5 done');
  await route
    .getByRole('link', { name: 'Returns, discount, value iteration and policy iteration' })
    .click();

  const heading = page.getByRole('heading', {
    level: 1,
    name: 'Returns, discount, value iteration and policy iteration',
  });
  await expect(heading).toBeFocused();
  await expect(page.getByTestId('lesson-minutes')).toHaveText(
    /^About \d+ minutes: \d+ words, \d+ equations?, 2 predictions, 2 source views, 2 runs\.$/,
  );
  await expect(page.getByTestId('lesson-not-done')).toBeVisible();
  await expect(page.locator('.katex').first()).toBeVisible();

  const widget = page.getByTestId('lesson-widget').first();
  // One click opens the run and starts it.
  await widget.getByRole('button', { name: 'Start' }).click();
  await expect(widget.getByTestId('widget-check')).toContainText('passed', { timeout: 30_000 });
  await expect
    .poll(async () =>
      Number(await widget.getByTestId('lesson-chart').first().getAttribute('data-points')),
    )
    .toBeGreaterThan(10);
  await expect(widget.getByTestId('grid-view')).toBeVisible();
  await expect(page.getByTestId('lesson-not-done')).toBeVisible();

  // Policy iteration on the 4×3 world: at living reward −0.04 the cell left of the −1 exit goes
  // up (AIMA Figure 17.2a); at −2 it dives right into the exit.
  const planner = page.locator('[data-preset="policy-iteration-4x3"]');
  await planner.getByRole('button', { name: 'Start' }).click();
  await expect(planner.getByTestId('widget-check')).toContainText('passed', { timeout: 30_000 });
  const nextToPit = planner.locator('[data-cell="1,2"]');
  await expect(nextToPit).toHaveAttribute('data-move', '-1,0');
  await planner.getByLabel('livingReward').fill('-2');
  await planner.getByLabel('livingReward').press('Enter');
  await planner.getByLabel('livingReward').blur();
  // The widget says where the live change starts, and its chart marks it there.
  await expect(planner.getByTestId('widget-change')).toContainText(
    /^Applies from update \d+; the charts mark it there\.$/,
  );
  // The run paused at its check; run on under the new reward until the policy is stable again.
  await planner.getByRole('button', { name: 'Start' }).click();
  await expect(nextToPit).toHaveAttribute('data-move', '0,1', { timeout: 15_000 });
  await expect(planner.locator('.plot-markers > *').first()).toBeAttached();
  await planner.getByRole('button', { name: 'Pause' }).click();
  await expect(page.getByTestId('lesson-done')).toBeVisible();
  await page.screenshot({ path: `${SCREENSHOTS}/lesson-value-iteration.png`, fullPage: true });

  await page.reload();
  await expect(page.getByTestId('lesson-done')).toBeVisible();
  await page.goto('/#/learn');
  await expect(page.locator('[data-lesson="01-mdp/01-value-iteration"]')).toContainText('Done');
  await expect(route).toContainText('1 of 5 done');
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

  // The source views: the op's and the WGSL kernel's named regions, shown without their markers.
  const views = page.locator('figure.source');
  await expect(views).toHaveCount(2);
  for (const [i, file, first] of [
    [0, 'src/ops/policy-loss.ts', 'function clippedSurrogate('],
    [1, 'kernels/policy_loss.wgsl', '// The clipped surrogate of one token'],
  ] as const) {
    await expect(views.nth(i)).toHaveAttribute('data-region', 'clipped-surrogate');
    await expect(views.nth(i).locator('figcaption')).toContainText(`— ${file}, lines `);
    await expect(views.nth(i).locator('.row').first()).toContainText(first);
    await expect(views.nth(i).locator('pre')).not.toContainText('#region');
    await expect(views.nth(i).locator('pre')).not.toContainText('#endregion');
  }
  await views.nth(1).scrollIntoViewIfNeeded();
  await views.nth(1).screenshot({ path: `${SCREENSHOTS}/lesson-source-view.png` });

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

test('the KL lesson plots k1/k2/k3 from the KL op and reacts to the distance slider', async ({
  page,
}) => {
  const errors = collectErrors(page);
  await page.goto('/#/learn/04-grpo/03-kl-to-reference');
  const plot = page.getByTestId('kl-plot');
  // x = ln 2: k1 = −ln 2 = −0.693, k2 = (ln 2)²/2 = 0.240, k3 = 1 − ln 2 = 0.307.
  await expect(plot.getByTestId('kl-curves')).toHaveAttribute(
    'aria-label',
    /At x = ln 2: k1 = −0\.693, k2 = 0\.240, k3 = 0\.307/,
  );
  const samples = plot.getByTestId('kl-samples');
  await expect(samples).toHaveAttribute('aria-label', /tilted s = 0\.50 away/);
  // s = 0: π_θ is π_ref, so the KL and every token's estimate are exactly 0.
  await plot.getByLabel(/^distance s =/).fill('0');
  await expect(samples).toHaveAttribute(
    'aria-label',
    /s = 0\.00 away from π_ref: exact KL = 0\.000\. Over 200 sampled tokens, k1 mean 0\.000 ± 0\.000/,
  );
  await expect(plot.getByTestId('kl-exact')).toHaveText('0.000');
  await plot.getByLabel(/^distance s =/).fill('2');
  await expect(samples).toHaveAttribute('aria-label', /s = 2\.00 away/);
  await expect(samples).not.toHaveAttribute('aria-label', /exact KL = 0\.000/);
  const before = await samples.getAttribute('aria-label');
  await plot.getByRole('button', { name: /Draw 200 new tokens/ }).click();
  await expect(samples).not.toHaveAttribute('aria-label', before!);
  await page.screenshot({ path: `${SCREENSHOTS}/lesson-grpo-kl.png`, fullPage: true });
  expect(errors).toEqual([]);
});

test("the DPO lesson plots one pair's loss from the dpoLoss op and reacts to β and the loss", async ({
  page,
}) => {
  const errors = collectErrors(page);
  await page.goto('/#/learn/04-grpo/04-dpo-offline-contrast');
  const plot = page.getByTestId('dpo-plot');
  const loss = plot.getByTestId('dpo-loss');
  const weight = plot.getByTestId('dpo-weight');
  // β = 0.1, marked pair z = 5: m = 0.5, ℓ = ln(1 + e^−0.5) = 0.474077, w = σ(−0.5) = 0.377541;
  // at z = 0: ℓ = ln 2 = 0.693, w = 0.5.
  await expect(loss).toHaveAttribute(
    'aria-label',
    /β = 0\.10: ℓ = 0\.693 at z = 0; at the marked pair z = 5\.0 \(margin m = 0\.50\) ℓ = 0\.474/,
  );
  await expect(weight).toHaveAttribute('aria-label', /w = 0\.500 at z = 0 and w = 0\.378/);
  // β = 1: m = 5, ℓ = ln(1 + e^−5) = 0.006715, w = σ(−5) = 0.006693.
  await plot.getByLabel(/^β =/).fill('1');
  await expect(loss).toHaveAttribute('aria-label', /β = 1\.00: .*ℓ = 0\.007; no minimum/);
  await expect(weight).toHaveAttribute('aria-label', /w = 0\.007 at the marked pair/);
  // IPO at β = 1: target gap 1/(2β) = 0.5; ℓ(5) = 4.5² = 20.25; w = −2·4.5/1 = −9.
  await plot.getByLabel('loss', { exact: true }).selectOption('ipo');
  await expect(loss).toHaveAttribute(
    'aria-label',
    /IPO loss .*ℓ = 20\.250; minimum ℓ = 0 at z = 1\/\(2β\) = 0\.50/,
  );
  await expect(weight).toHaveAttribute('aria-label', /w = −9\.000 at the marked pair/);
  // cDPO, ε = 0.1: minimum where σ(z) = 0.9, z = ln 9 = 2.197, ℓ = H(0.1) = 0.325.
  await plot.getByLabel('loss', { exact: true }).selectOption('cdpo');
  await expect(loss).toHaveAttribute('aria-label', /minimum ℓ = 0\.325 at z = 2\.20/);
  await page.screenshot({ path: `${SCREENSHOTS}/lesson-dpo.png`, fullPage: true });
  expect(errors).toEqual([]);
});

test('the clip-higher plot trains a rare answer with the real ops and reacts to μ and ε_high', async ({
  page,
}) => {
  const errors = collectErrors(page);
  await page.goto('/#/learn/04-grpo/05-dynamic-sampling-and-clip-higher');
  const plot = page.getByTestId('clip-higher-plot');
  const svg = plot.getByTestId('clip-higher-svg');
  // Defaults: from 0.01, μ = 4, lr 0.05: 0.5 after 18 updates (ε_high 0.2), 14 (0.28), 12 (none),
  // the numbers the lesson states and tests/lessons/clip-higher-curve.test.ts orders.
  await expect(svg).toHaveAttribute(
    'aria-label',
    /reaches 0\.5 after 18 updates with ε_high = 0\.2, 14 with 0\.28 and 12 without/,
  );
  await plot.screenshot({ path: `${SCREENSHOTS}/lesson-clip-higher.png` });
  // μ = 1: the clip never acts, so all three runs take the same number of updates.
  await plot.getByLabel(/^μ =/).fill('1');
  const single =
    /after (\d+|not within 30) updates with ε_high = 0\.2, (\1) with 0\.28 and (\1) without/;
  await expect(svg).toHaveAttribute('aria-label', single);
  await expect(plot.getByText(/the clip never acts/)).toBeVisible();
  // ε_high = 0.2 on the reader's slider: its curve is the symmetric one.
  await plot.getByLabel(/^μ =/).fill('4');
  await plot.getByLabel(/^ε_high =/).fill('0.2');
  await expect(svg).toHaveAttribute('aria-label', /18 updates with ε_high = 0\.2, 18 with 0\.20/);
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
    // open more widgets than the lab's 8 runs at once without reaching the limit. On the CPU
    // (`?backend=cpu`, which lesson runs honor): opening the reward-model lesson's runs trains a
    // reward model each, about 7 s on the CPU and 30 s on the software WebGPU adapter. The lab's
    // end-to-end tests train language models on WebGPU through the same run host.
    await page.goto(`/?backend=cpu${href}`);
    await expect(page.getByRole('heading', { level: 1 })).toBeFocused();
    await expect(page.locator('.katex-error')).toHaveCount(0);
    await expect(page.getByRole('heading', { name: 'References' })).toBeVisible();
    for (const widget of await page.getByTestId('lesson-widget').all()) {
      const status = widget.getByTestId('widget-status');
      await widget.getByRole('button', { name: 'Start' }).click();
      await expect(status).toHaveText(/running|paused/, { timeout: 60_000 });
      // Paused at once (a check that passed has paused it already): the runs of every lesson
      // would otherwise train on together for the rest of the test.
      await widget.getByRole('button', { name: 'Pause' }).dispatchEvent('click');
      await expect(status).toHaveText('paused', { timeout: 60_000 });
    }
  }
  expect(errors).toEqual([]);
});

test('classroom mode from a link hides the widget settings, runs the preset, and stays on through the pager', async ({
  page,
}) => {
  const errors = collectErrors(page);
  await page.goto('/#/learn/01-mdp/01-value-iteration?classroom=1');
  // The first load parses the whole bundle; on a busy machine that has taken over 5 s.
  await expect(
    page.getByRole('heading', {
      level: 1,
      name: 'Returns, discount, value iteration and policy iteration',
    }),
  ).toBeFocused({ timeout: 15_000 });
  const toggle = page.getByRole('button', { name: 'Classroom mode — fixed settings' });
  await expect(toggle).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByTestId('classroom-banner')).toHaveText(
    "Classroom mode: every run uses the lesson's settings; the settings panels are hidden.",
  );

  // The preset's free setting (γ) has no input; one line says why.
  const widget = page.getByTestId('lesson-widget').first();
  await expect(widget.getByTestId('widget-fixed')).toHaveText(
    'Settings fixed by the lesson (classroom mode)',
  );
  await expect(widget.locator('input, select')).toHaveCount(0);
  await widget.getByRole('button', { name: 'Start' }).click();
  // The check pauses the run as soon as it passes, so either state shows it started.
  await expect(widget.getByTestId('widget-status')).toHaveText(/running|paused/);
  await expect(widget.getByTestId('widget-check')).toContainText('passed', { timeout: 30_000 });
  await page.screenshot({ path: `${SCREENSHOTS}/lesson-classroom.png`, fullPage: true });

  await page.getByRole('link', { name: /Q-learning.*→/ }).click();
  await expect(page).toHaveURL(/#\/learn\/01-mdp\/02-q-learning-vs-sarsa\?classroom=1$/);
  await expect(page.getByTestId('classroom-banner')).toBeVisible();
  await expect(page.getByTestId('lesson-widget').locator('input, select')).toHaveCount(0);

  // Turning it off keeps the lesson and brings the settings back.
  await page.getByRole('button', { name: 'Classroom mode — fixed settings' }).click();
  await expect(page).toHaveURL(/#\/learn\/01-mdp\/02-q-learning-vs-sarsa$/);
  await expect(page.getByTestId('classroom-banner')).toHaveCount(0);
  await expect(page.getByTestId('lesson-widget').first().locator('input')).toHaveCount(2);
  expect(errors).toEqual([]);
});

test('the side-by-side seeds block links to the lab, which creates its runs with three seeds each', async ({
  page,
}) => {
  const errors = collectErrors(page);
  await page.goto('/#/learn/04-grpo/06-ppo-vs-grpo');
  await expect(page.getByRole('heading', { level: 1 })).toBeFocused({ timeout: 15_000 });
  const link = page.getByTestId('compare-in-lab');
  await expect(link).toHaveText('Open these 2 runs in the lab with 3 seeds each');
  await link.click();
  await expect(page).toHaveURL(/#\/lab\?compare=v1\./);
  const labels = page.locator('.run-card h3');
  await expect(labels).toHaveCount(6);
  const text = (await labels.allTextContents()).map((t) => t.replace(/^#\d+ /, ''));
  expect(text).toEqual([
    'ppo on copy, seed 1 (from link)',
    'ppo on copy, seed 2 (from link)',
    'ppo on copy, seed 3 (from link)',
    'grpo on copy, seed 1 (from link)',
    'grpo on copy, seed 2 (from link)',
    'grpo on copy, seed 3 (from link)',
  ]);
  expect(errors).toEqual([]);
});
